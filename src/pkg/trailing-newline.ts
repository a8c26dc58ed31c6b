/**
 * Every JSON answer ends with a newline, so `curl` output does not run into the shell's prompt and
 * line-oriented tools (`jq -c`, `wc -l`, `read`) see a whole line. Applied once, at the Worker's
 * entry (src/handlers.ts), after every re-dispatch inside the app, so no answer gets two.
 */

const NEWLINE = new Uint8Array([0x0a]);

/**
 * Whether the answer is the API's own JSON: a body, not compressed, not a stored file's bytes (a file
 * or medium served as it was uploaded carries Content-Disposition, and its bytes are never changed).
 */
function endsWithNewlineApplies(response: Response): boolean {
  const headers = response.headers;
  if (response.body === null || headers.has("content-encoding") || headers.has("content-disposition") || headers.has("content-range"))
    return false;
  const type = headers.get("content-type") ?? "";
  return /^application\/(?:[\w.+-]+\+)?json\b/i.test(type);
}

/**
 * The answer with "\n" after its JSON body. The body streams through (one chunk more at its end),
 * and a known Content-Length grows by one.
 */
export function withTrailingNewline(response: Response): Response {
  if (!endsWithNewlineApplies(response)) return response;
  const body = response.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      flush(controller) {
        controller.enqueue(NEWLINE);
      },
    }),
  );
  const headers = new Headers(response.headers);
  const length = Number(headers.get("content-length") ?? NaN);
  if (Number.isInteger(length)) headers.set("content-length", String(length + 1));
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
