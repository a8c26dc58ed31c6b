/**
 * The original product's client sends an "empty" JSON body as `json.dumps("")`: the two characters
 * `""` with Content-Type application/json (its MonitorJob.update_status does, on
 * `PUT /MonitorJobs/{id}/{status}`). On a route whose JSON body is optional, that body (whitespace
 * around it allowed) is no body: the request goes on without it and without its Content-Type, exactly
 * as if nothing had been sent. A route whose body is required still refuses it, as any body that is
 * not its object.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";

const EMPTY_JSON_STRING = '""';
/** Longer than any spelling of `""` with a little whitespace around it: such a body is not read here. */
const MAX_EMPTY_LENGTH = 64;

function isJson(type: string | undefined): boolean {
  const media = type?.split(";")[0]?.trim().toLowerCase();
  return media === "application/json" || (media !== undefined && media.startsWith("application/") && media.endsWith("+json"));
}

/** For routes with an optional JSON body, before the media type check and the validators. */
export function emptyJsonStringIsNoBody(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const raw = c.req.raw;
    const length = c.req.header("content-length");
    if (!raw.body || !isJson(c.req.header("content-type")) || (length !== undefined && Number(length) > MAX_EMPTY_LENGTH)) return next();
    // Read through Hono's body cache, so a body that is not `""` reaches the validators unchanged.
    const text = await c.req.text();
    if (text.length > MAX_EMPTY_LENGTH || text.trim() !== EMPTY_JSON_STRING) return next();
    const headers = new Headers(raw.headers);
    headers.delete("content-type");
    headers.delete("content-length");
    c.req.raw = new Request(raw.url, { method: raw.method, headers, signal: raw.signal });
    c.req.bodyCache = {};
    await next();
  };
}
