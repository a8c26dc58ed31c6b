/**
 * Request limits per user and route class, with the Workers Rate Limiting binding: reads (GET, HEAD)
 * count against READ_LIMITER, everything else against WRITE_LIMITER, keyed by the caller's id (a
 * token's subject). Limits are per minute and per Cloudflare location (wrangler.toml `[[ratelimits]]`:
 * 1,200 reads and 300 writes by default). Over the limit: 429 problem details with Retry-After.
 * `RATE_LIMITS = "off"` disables them (npm start, the tests and the benches), so a developer is never
 * throttled. Unauthenticated routes (health, the API reference, /connect/token) are not counted.
 */
import { configOf } from "../config";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

/** Seconds a throttled client waits: the limiters' period. */
export const RATE_LIMIT_PERIOD_SECONDS = 60;

export const rateLimit: MiddlewareHandler<AppEnv> = (c, next) => {
  const principal = c.get("principal");
  if (!principal || configOf(c.env).RATE_LIMITS === "off") return next();
  const read = c.req.method === "GET" || c.req.method === "HEAD";
  const limiter = read ? c.env.READ_LIMITER : c.env.WRITE_LIMITER;
  if (!limiter) return next();
  return limited(limiter, `${read ? "r" : "w"}:${principal.id}`, read ? "reads" : "writes", next);
};

async function limited(limiter: RateLimit, key: string, what: string, next: () => Promise<void>): Promise<void> {
  const { success } = await limiter.limit({ key });
  if (!success) {
    throw new ApiError(
      "TooManyRequests",
      `Too many ${what} from this user in the last minute; retry after ${RATE_LIMIT_PERIOD_SECONDS} s.`,
      {
        headers: { "retry-after": String(RATE_LIMIT_PERIOD_SECONDS) },
      },
    );
  }
  await next();
}
