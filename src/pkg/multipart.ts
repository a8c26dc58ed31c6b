/**
 * A streaming reader of multipart/form-data (RFC 7578), shared by the areas that take files in forms
 * (POST /Files, POST /Medias). Unlike `request.formData()`, which holds the
 * whole body (up to 95 MiB here) in memory before the handler sees a byte, it hands out each part as
 * it arrives, so a file can be hashed and written to R2 in fixed-size pieces. Field names are left as
 * sent; the caller decides how to match them.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { bodyFailure, invalid } from "./errors";
import { bodySlicer, chunkRead } from "./slicer";

/** Most bytes of a refused body read and discarded so the client's connection stays usable. */
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

export interface PartHead {
  /** The form field name from Content-Disposition. */
  name: string;
  /** The file name (filename* preferred over filename), or null for a plain field. */
  filename: string | null;
  contentType: string | null;
}

export interface FormPart {
  head: PartHead;
  /** The part's bytes in order. Must be read to the end (or the part skipped) before the next part. */
  chunks: AsyncIterable<Uint8Array>;
}

/** Limits on the non-file structure of a form, so a malformed body cannot make the reader buffer much. */
const MAX_HEADER_BYTES = 8 * 1024;
const MAX_PARTS = 16;
/** Bytes handed to the consumer at once at most; incoming chunks are usually 64 KiB or less. */
const MAX_EMIT = 1024 * 1024;

const CRLF = new Uint8Array([13, 10]);
const HEADER_END = new Uint8Array([13, 10, 13, 10]);
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

function malformed(message: string) {
  return invalid("body", "multipart", `The multipart body is malformed: ${message}`);
}

/** The boundary of a multipart/form-data Content-Type, or null when the type is something else. */
export function formBoundary(contentType: string | undefined): string | null {
  if (!contentType) return null;
  const [type, ...params] = contentType.split(";");
  if (type?.trim().toLowerCase() !== "multipart/form-data") return null;
  for (const param of params) {
    const eq = param.indexOf("=");
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "boundary") continue;
    const value = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    // RFC 2046: 1 to 70 characters.
    if (value.length >= 1 && value.length <= 70) return value;
  }
  return null;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0]!;
  const last = haystack.length - needle.length;
  for (let i = haystack.indexOf(first, from); i !== -1 && i <= last; i = haystack.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Reads Content-Disposition parameters: name, filename and RFC 5987 filename*. */
function dispositionParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  const pattern = /;\s*([A-Za-z0-9_*-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]*)/g;
  for (const match of value.matchAll(pattern)) {
    const key = match[1]!.toLowerCase();
    const raw = match[3] !== undefined ? match[3].replace(/\\(.)/g, "$1") : (match[2] ?? "").trim();
    if (!params.has(key)) params.set(key, raw);
  }
  return params;
}

function extendedValue(value: string): string | null {
  const match = /^([A-Za-z0-9_-]+)'[^']*'(.*)$/.exec(value);
  if (!match || match[1]!.toLowerCase() !== "utf-8") return null;
  try {
    return decodeURIComponent(match[2]!);
  } catch {
    return null;
  }
}

function parseHead(bytes: Uint8Array): PartHead {
  const headers = new Map<string, string>();
  for (const line of decoder.decode(bytes).split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const disposition = headers.get("content-disposition");
  if (!disposition || !/^form-data\b/i.test(disposition)) throw malformed("a part has no Content-Disposition: form-data header.");
  const params = dispositionParams(disposition);
  const name = params.get("name");
  if (name === undefined || name === "") throw malformed("a part has no field name.");
  const star = params.get("filename*");
  const plain = params.get("filename");
  // Browsers (and the WHATWG FormData encoder) escape only ", CR and LF in a filename, as %22, %0D, %0A.
  const unescaped = plain?.replace(/%(22|0d|0a)/gi, (_, code: string) => String.fromCharCode(parseInt(code, 16)));
  const filename = (star !== undefined ? extendedValue(star) : null) ?? unescaped ?? null;
  return { name, filename, contentType: headers.get("content-type") ?? null };
}

/**
 * Yields the parts of a multipart/form-data body in order. Each part's chunks are subarrays of
 * buffers that are never written again, so a consumer may keep them. Throws ValidationFailed (field
 * `body`, rule `multipart`) for a body that is not well-formed, including one that ends early.
 */
export async function* readForm(body: ReadableStream<Uint8Array>, boundary: string): AsyncGenerator<FormPart> {
  const reader = body.getReader();
  // The delimiter is CRLF "--" boundary; the body's first boundary has no CRLF before it, so the
  // buffer starts with one.
  const delimiter = encoder.encode(`\r\n--${boundary}`);
  let buffer: Uint8Array = CRLF;
  let ended = false;
  let closed = false;
  // Chunks a client sent ahead are read without a turn of the event loop: the thread is given back
  // every slice (../pkg/slicer.ts), or a 90 MiB upload would hold every other request until it ended.
  const slicer = bodySlicer();

  const fill = async (): Promise<boolean> => {
    if (ended) return false;
    const { value, done } = await reader.read().catch((error: unknown) => {
      throw bodyFailure(error);
    });
    if (done) {
      ended = true;
      return false;
    }
    buffer = concat(buffer, value);
    await chunkRead(slicer, value.byteLength);
    return true;
  };
  const need = async (n: number, what: string) => {
    while (buffer.length < n) if (!(await fill())) throw malformed(`the body ended ${what}.`);
  };

  try {
    // Skip the preamble up to the first delimiter.
    for (;;) {
      const at = indexOf(buffer, delimiter);
      if (at >= 0) {
        buffer = buffer.subarray(at + delimiter.length);
        break;
      }
      if (buffer.length > MAX_HEADER_BYTES) throw malformed("no boundary was found at its start.");
      if (!(await fill())) throw malformed("no boundary was found.");
    }
    for (let count = 0; ; count++) {
      // After a delimiter: "--" closes the form, otherwise (optional blanks and) CRLF and headers follow.
      await need(2, "after a boundary");
      if (buffer[0] === 45 && buffer[1] === 45) {
        closed = true;
        return;
      }
      if (count >= MAX_PARTS) throw malformed(`more than ${MAX_PARTS} parts.`);
      let headEnd = -1;
      for (;;) {
        headEnd = indexOf(buffer, HEADER_END);
        if (headEnd >= 0) break;
        if (buffer.length > MAX_HEADER_BYTES) throw malformed("a part's headers are too long.");
        if (!(await fill())) throw malformed("the body ended inside a part's headers.");
      }
      const lineEnd = indexOf(buffer, CRLF);
      if (decoder.decode(buffer.subarray(0, lineEnd)).trim() !== "") throw malformed("unexpected text after a boundary.");
      const head = parseHead(buffer.subarray(lineEnd + 2, headEnd + 2));
      buffer = buffer.subarray(headEnd + 4);

      let partDone = false;
      const chunks = async function* (): AsyncGenerator<Uint8Array> {
        for (;;) {
          const at = indexOf(buffer, delimiter);
          // Everything before the delimiter, or when there is none yet, all but a tail that could be
          // its start; handed out in slices, without searching the same bytes again.
          const end = at >= 0 ? at : buffer.length - (delimiter.length - 1);
          for (let offset = 0; offset < end; offset += MAX_EMIT) {
            yield buffer.subarray(offset, Math.min(end, offset + MAX_EMIT));
          }
          if (at >= 0) {
            buffer = buffer.subarray(at + delimiter.length);
            partDone = true;
            return;
          }
          if (end > 0) buffer = buffer.subarray(end);
          if (!(await fill())) throw malformed("the body ended inside a part.");
        }
      };
      yield { head, chunks: chunks() };
      // A consumer that did not read the part to its end: skip the rest.
      if (!partDone) for await (const _ of chunks()) void _;
    }
  } finally {
    // Whatever is left is read and discarded, up to a bound: after the closing boundary only an
    // epilogue (usually CRLF); after a refusal part-way (a disallowed extension, an unknown field...)
    // the rest of the body. Cancelling a body the client is still sending leaves its keep-alive
    // connection stalled (the next request on it hangs) or broken (EPIPE) before it reads our answer.
    // Only a refused body larger than MAX_DRAIN_BYTES is cancelled.
    let drained = 0;
    const limit = closed ? MAX_HEADER_BYTES : MAX_DRAIN_BYTES;
    while (!ended && drained <= limit) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) ended = true;
      else drained += value?.length ?? 0;
    }
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Reads a plain (non-file) field's value as UTF-8 text, refusing values longer than `maxBytes`. */
export async function fieldText(part: FormPart, field: string, maxBytes = 1024): Promise<string> {
  let bytes: Uint8Array = new Uint8Array(0);
  for await (const chunk of part.chunks) {
    bytes = concat(bytes, chunk);
    if (bytes.length > maxBytes) throw invalid(field, "maxLength", `${field} is longer than ${maxBytes} bytes.`);
  }
  return decoder.decode(bytes);
}

/**
 * The request body as a stream. A middleware that read a small body whole (a JSON-sized body with an
 * Idempotency-Key is hashed first) left it in Hono's cache, and then the stream is made from that
 * copy; a large body is never cached (its Idempotency-Key fingerprint is taken as it streams,
 * src/pkg/body-fingerprint.ts).
 */
export async function bodyStream(c: Context<AppEnv>): Promise<ReadableStream<Uint8Array>> {
  if (Object.keys(c.req.bodyCache).length > 0) return new Response(await c.req.arrayBuffer()).body ?? new Blob([]).stream();
  return c.req.raw.body ?? new Blob([]).stream();
}
