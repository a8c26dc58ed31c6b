/**
 * CORS, and setting headers on the final response.
 *
 * A preflight (OPTIONS) is answered by Hono's cors middleware, as it always was. Every other answer
 * gets its headers once, on the final response, after the route ran: Vary: Origin always, and for an
 * allowed Origin only, Access-Control-Allow-Origin and Access-Control-Expose-Headers (a browser reads
 * them on no other answer; an app without an Origin saves their 250 bytes). Hono's middleware sets
 * them on `c.res` before the route runs, which makes Hono build a placeholder response, then copy
 * every real response to merge the placeholder's headers into it, then copy it once more to append
 * Vary: about 45 µs of CPU per request, a fifth of what the app adds to a read (docs/benchmarks.md,
 * "Reads (issue 22)").
 */
import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { configOf } from "../config";
import type { AppEnv } from "../env";

export const CORS_ALLOW_HEADERS = [
  "Authorization",
  "Content-Type",
  "Content-Encoding",
  "X-Session-Bookmark",
  "If-Match",
  "If-None-Match",
  "Idempotency-Key",
  "Audit-Reason",
  "api-version",
  "x-request-id",
];
export const CORS_ALLOW_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
export const CORS_EXPOSE_HEADERS = [
  "ETag",
  "Location",
  "x-request-id",
  "x-session-bookmark",
  "api-supported-versions",
  "idempotent-replayed",
  "www-authenticate",
  "X-Total-Count",
  "X-Media-Size",
  "X-Media-Size-Fallback",
  "Content-Range",
  "Content-Disposition",
];
const EXPOSED = CORS_EXPOSE_HEADERS.join(",");

/** The origin to allow (the request's own), or null: CORS_ORIGINS (src/config.ts) lists origins, or holds `*`. */
export function allowedOrigin(origin: string, allowed: readonly string[]): string | null {
  return origin !== "" && (allowed.includes("*") || allowed.includes(origin)) ? origin : null;
}

/**
 * Applies `apply` to the headers of the final response. A response whose headers cannot change (an
 * answer passed through from fetch(), such as the reference page's assets) is copied first.
 */
export function setResponseHeaders(c: Context, apply: (headers: Headers) => void): void {
  try {
    apply(c.res.headers);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    // Immutable headers throw at the first change, so nothing was applied to them.
    c.res = new Response(c.res.body, c.res);
    apply(c.res.headers);
  }
}

export function corsHeaders(): MiddlewareHandler<AppEnv> {
  const preflight = cors({
    origin: (origin, c) => allowedOrigin(origin, configOf(c.env).CORS_ORIGINS),
    allowHeaders: CORS_ALLOW_HEADERS,
    allowMethods: CORS_ALLOW_METHODS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: 86400,
  });
  return async (c, next) => {
    if (c.req.method === "OPTIONS") return preflight(c, next);
    await next();
    // Hono's middleware reads the Origin header as "" when there is none, so no origin is allowed then.
    const origin = allowedOrigin(c.req.header("origin") || "", configOf(c.env).CORS_ORIGINS);
    setResponseHeaders(c, (headers) => {
      if (origin) {
        headers.set("Access-Control-Allow-Origin", origin);
        headers.set("Access-Control-Expose-Headers", EXPOSED);
      }
      headers.append("Vary", "Origin");
    });
  };
}
