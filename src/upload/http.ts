/** Request helpers for the upload routes, which take raw and multipart bodies rather than JSON. */
import type { Context } from "hono";
import type { AppEnv } from "../env";

/** What the Worker accepts in one request body (the platform's cap is 100 MB), for forms and parts. */
export const MAX_REQUEST_BODY = 95 * 1024 * 1024;

/**
 * The request body as a stream. A middleware that needed the whole body first (Idempotency-Key
 * hashes it; a body without Content-Length is measured) has already read it into Hono's cache, and
 * then the stream is made from that copy.
 */
export async function bodyStream(c: Context<AppEnv>): Promise<ReadableStream<Uint8Array>> {
  if (Object.keys(c.req.bodyCache).length > 0) return new Response(await c.req.arrayBuffer()).body ?? new Blob([]).stream();
  return c.req.raw.body ?? new Blob([]).stream();
}
