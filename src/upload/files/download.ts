/**
 * GET /Files/{id}/Data: the stored bytes, streamed from R2, with one byte range when asked (RFC 9110
 * §14) so a download over a poor link can resume where it stopped.
 */
import { contentRange, parseRange, rangeNotSatisfiable } from "../../pkg/range";
import type { StoredFile } from "./store";

/** RFC 6266: an ASCII fallback `filename` and the exact name as UTF-8 in `filename*`. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** The ETag of a file's bytes: they never change for a file id, so the checksum names them. */
export function dataEtag(file: StoredFile): string {
  return `"${file.value.checksum}"`;
}

function baseHeaders(file: StoredFile): Headers {
  return new Headers({
    "content-type": file.value.contentType,
    "content-disposition": contentDisposition(file.value.name),
    etag: dataEtag(file),
    "accept-ranges": "bytes",
    // Access can change (metadata), so caches must ask again; the ETag makes that cheap.
    "cache-control": "private, no-cache",
    // The content type is the uploader's word: never let a browser sniff or render it.
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
  });
}

function etagListed(header: string, etag: string): boolean {
  return header.trim() === "*" || header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/** Builds the download response: 200, 206 or 304 (416 is thrown). Returns null when the object is missing. */
export async function downloadResponse(bucket: R2Bucket, file: StoredFile, request: Request): Promise<Response | null> {
  const headers = baseHeaders(file);
  const inm = request.headers.get("if-none-match");
  if (inm && etagListed(inm, dataEtag(file))) return new Response(null, { status: 304, headers });

  const size = file.value.size;
  let range = parseRange(request.headers.get("range") ?? undefined, size);
  // If-Range: resume only when the client's copy is this one; otherwise send it all.
  const ifRange = request.headers.get("if-range");
  if (range && ifRange !== null && ifRange.trim() !== dataEtag(file)) range = null;
  if (range === "unsatisfiable") throw rangeNotSatisfiable(size);
  const object = await bucket.get(file.row.r2_key, range ? { range } : {});
  if (!object) return null;
  if (range) {
    headers.set("content-range", contentRange(range, size));
    return new Response(object.body, { status: 206, headers });
  }
  // R2's body stream has a known length, so the runtime sends Content-Length itself.
  return new Response(object.body, { status: 200, headers });
}
