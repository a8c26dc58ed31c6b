/**
 * GET /Medias/{id}/Data: the bytes of one size, with the headers that make them safe and cacheable.
 *
 * - Every stored object is immutable (a media is never rewritten, only deleted), so each answer
 *   carries its object's ETag and `Cache-Control: private, max-age=31536000, immutable` (private:
 *   the data needs a token, so shared caches must not keep it).
 * - `X-Media-Size` names the stored version whose bytes are sent; `X-Media-Size-Fallback: true`
 *   says the size asked for does not exist (a corrupt image, a format kept as uploaded, an image past
 *   the pixel limits) and the original was sent instead. An image already within a size is that
 *   size: its original is sent without the fallback flag.
 * - Nothing is rendered by the browser as a document: `X-Content-Type-Options: nosniff` and
 *   `Content-Security-Policy: sandbox; default-src 'none'` on every answer, and only raster images
 *   that decoded are `inline`; SVG, non-images and unverified images are `attachment`.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { invalid, notFound } from "../pkg/errors";
import { formatEtag } from "../pkg/etag";
import { contentRange, parseRange, rangeNotSatisfiable } from "../pkg/range";
import { MEDIA_SIZES, type MediaSize } from "./schema";
import { servedVersion, type MediaRecord } from "./store";

const CACHE_IMMUTABLE = "private, max-age=31536000, immutable";
const SANDBOX = "sandbox; default-src 'none'";

/** `size` as sent (any case) to its canonical name, or a 400 when it names none or the media is no image. */
export function requestedSize(record: MediaRecord, size: string | undefined): MediaSize {
  if (size === undefined) return "Original";
  if (!record.media.isImage) {
    throw invalid("query.size", "imagesOnly", "The size parameter is supported only for images; this media is not an image.");
  }
  const canonical = MEDIA_SIZES.find((s) => s.toLowerCase() === size.trim().toLowerCase());
  if (!canonical) throw invalid("query.size", "enum", `size must be Original, Medium or Small, not '${size}'.`);
  return canonical;
}

function contentDisposition(record: MediaRecord, size: MediaSize, contentType: string): string {
  const { media } = record;
  const inline = media.isImage && media.recognition.integrity === "passed" && contentType !== "image/svg+xml";
  let name = media.name;
  if (size !== "Original") {
    const dot = name.lastIndexOf(".");
    const extension = contentType === "image/png" ? ".png" : ".jpg";
    name = `${dot > 0 ? name.slice(0, dot) : name}-${size.toLowerCase()}${extension}`;
  }
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${inline ? "inline" : "attachment"}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

function ifNoneMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.trim() === "*" || header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

export async function serveMediaData(c: Context<AppEnv>, record: MediaRecord, sizeParam: string | undefined): Promise<Response> {
  const size = requestedSize(record, sizeParam);
  const { version, fallback } = servedVersion(record, size);
  const etag = formatEtag(version.etag);
  const headers = new Headers({
    etag,
    "cache-control": CACHE_IMMUTABLE,
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
    "content-security-policy": SANDBOX,
    "x-media-size": version.size,
  });
  if (fallback) headers.set("x-media-size-fallback", "true");
  if (ifNoneMatches(c.req.header("if-none-match"), etag)) return new Response(null, { status: 304, headers });

  const total = version.bytes;
  const ifRange = c.req.header("if-range");
  // If-Range with another validator (or a date, which immutable objects never need) means "send it all".
  const range = ifRange === undefined || ifRange.trim() === etag ? parseRange(c.req.header("range"), total) : null;
  if (range === "unsatisfiable") throw rangeNotSatisfiable(total);
  const object = await c.env.MEDIA.get(version.key, range ? { range } : {});
  if (!object) {
    // Rows are written after their objects and objects deleted after their rows: this is a bug or
    // a hand edit, and must not look like data.
    c.get("log").error("media object missing", { mediaId: record.media.id, key: version.key });
    throw notFound("Media data", record.media.id);
  }
  headers.set("content-type", version.contentType);
  headers.set("content-disposition", contentDisposition(record, version.size, version.contentType));
  if (range) {
    headers.set("content-range", contentRange(range, total));
    headers.set("content-length", String(range.length));
    return new Response(object.body, { status: 206, headers });
  }
  headers.set("content-length", String(total));
  return new Response(object.body, { status: 200, headers });
}
