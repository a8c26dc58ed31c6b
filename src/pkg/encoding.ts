/**
 * Compressed request bodies. Mobile clients gzip JSON to save bytes on poor links; a body sent with
 * `Content-Encoding: gzip` (or `deflate`) is decompressed as it is read, before any route sees it, so
 * every size limit applies to the decompressed bytes. Any other encoding is a 415.
 */
import { platform } from "../platform/services";
import { ApiError, problemResponse } from "./errors";

const SUPPORTED: Record<string, "gzip" | "deflate"> = { gzip: "gzip", "x-gzip": "gzip", deflate: "deflate" };

/** The request with its body decompressed, or a 415 problem for an encoding the service does not read. */
export function decodeRequestBody(request: Request): Request | Response {
  const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (!encoding || encoding === "identity" || !request.body) return request;
  const format = SUPPORTED[encoding];
  if (!format) {
    const error = new ApiError(
      "UnsupportedMediaType",
      `Content-Encoding '${encoding}' is not accepted; send the body uncompressed, gzip or deflate.`,
      {
        headers: { "accept-encoding": "gzip, deflate" },
      },
    );
    return problemResponse(error, request.headers.get("x-request-id") ?? platform().ids.uuid(), new URL(request.url).pathname);
  }
  const headers = new Headers(request.headers);
  headers.delete("content-encoding");
  // The decompressed length is not known up front: routes read it under their limits as a stream.
  headers.delete("content-length");
  return new Request(request, { headers, body: request.body.pipeThrough(new DecompressionStream(format)) });
}
