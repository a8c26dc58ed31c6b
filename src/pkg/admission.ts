/**
 * Admission: how many requests one isolate takes on at once (docs/decisions.md, "Overload"). An
 * isolate serves every request it is given at once, on one thread and within 128 MB; a flood from
 * one client queues everyone else's requests behind its own (D1, the Durable Objects and the event
 * loop serve them in turn) and holds the memory of all of them. So before a request starts (before
 * its body is read or anything is written), it is counted against three limits of this isolate:
 *
 * - per user, requests in flight (`MAX_USER_REQUESTS_IN_FLIGHT`, 8): over it, 429 with
 *   Retry-After (1 s, or more when many of the user's requests are refused at once, see
 *   {@link userRetryAfter}); the user's other requests are still being served, so nothing is lost;
 * - per user, requests started (`MAX_USER_REQUESTS_PER_SECOND`, 50): a bucket of a fifth of that many
 *   ({@link userBurst}: 10) that refills at that rate; empty, a 429 with Retry-After the same way,
 *   unless the request is the user's only one in progress (one at a time queues in front of nobody).
 *   Requests in flight alone do not bound a flood: the isolate's one thread takes requests in turn, so
 *   a client with 200 connections has a few in flight at any moment and the rest queued in the
 *   runtime, before the Worker sees them, in front of everyone else's (docs/decisions.md, "Overload");
 * - large bodies in flight (`MAX_LARGE_BODIES_IN_FLIGHT`, 3): a body declared larger than the JSON
 *   limit, or of unknown length, on a route that takes such bodies (uploads, media): each holds up to
 *   about 20 MiB while it is stored (two form parts, or a media file), and one image decodes at a
 *   time (about 40 MiB more), so three leave room in the isolate's 128 MB;
 * - everyone's requests in flight (`MAX_REQUESTS_IN_FLIGHT`, 256): over it, 503 with Retry-After.
 *
 * A refused request is answered at once and changed nothing. The counts are this isolate's: a
 * deployment spreads requests over many isolates, and each guards its own thread and memory.
 */
import type { MiddlewareHandler } from "hono";
import { configOf } from "../config";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

/** Seconds a refused client waits, at least: the requests ahead of it take about that long. */
export const ADMISSION_RETRY_AFTER_SECONDS = 1;
/** The longest wait a refusal asks for. */
export const ADMISSION_MAX_RETRY_AFTER_SECONDS = 30;

let inFlight = 0;
let largeBodies = 0;
const perUser = new Map<string, number>();
/** Per user, the requests refused in the current second: what their Retry-After spreads out. */
const refusals = new Map<string, { second: number; count: number }>();

/** Per user, the requests they may still start now, and when that was counted (see {@link takeRequest}). */
const buckets = new Map<string, { left: number; at: number }>();

/**
 * How many requests one user may start at once: a fifth of a second's worth (10 at 50 a second). A
 * whole second's worth at once doubled what one user took of the isolate's first second (50 at once,
 * then 50 more within the second), which is when the other users' requests waited longest
 * (docs/decisions.md, "Overload").
 */
export function userBurst(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond / 5));
}

/**
 * Takes one of the user's requests, or says there is none left: the bucket holds
 * {@link userBurst}(`perSecond`) and refills at `perSecond` a second. A bucket untouched for a second
 * is full again, so those are what the map lets go of when it grows.
 */
function takeRequest(userId: string, now: number, perSecond: number): boolean {
  const burst = userBurst(perSecond);
  const seen = buckets.get(userId);
  // A clock that steps back (a test's, or a corrected one) refills nothing and takes nothing away.
  const left = seen ? Math.min(burst, seen.left + (Math.max(0, now - seen.at) / 1000) * perSecond) : burst;
  if (left < 1) {
    buckets.set(userId, { left, at: now });
    return false;
  }
  buckets.set(userId, { left: left - 1, at: now });
  if (buckets.size > 10_000) for (const [id, entry] of buckets) if (now - entry.at >= 1000) buckets.delete(id);
  return true;
}

/** This isolate's counts (the overload test reads them to know its requests are in flight). */
export function admissionCounts(): { inFlight: number; largeBodies: number; users: number } {
  return { inFlight, largeBodies, users: perUser.size };
}

function refuse(code: "TooManyRequests" | "Overloaded", detail: string, seconds = ADMISSION_RETRY_AFTER_SECONDS): ApiError {
  return new ApiError(code, `${detail} Nothing was done; retry after ${seconds} s.`, {
    headers: { "retry-after": String(seconds) },
  });
}

/**
 * The Retry-After of a user's refused request: one second for each `limit` requests of theirs refused
 * in this second (at least 1, at most 30). A client that sends 200 requests at once gets 192 refusals;
 * all told to come back in 1 s, they would come back together and be refused again, each refusal
 * costing the isolate as much as a small read; spread over up to 24 s, they come back about as fast
 * as their requests can be served.
 */
function userRetryAfter(userId: string, now: number, limit: number): number {
  const second = Math.floor(now / 1000);
  const seen = refusals.get(userId);
  const count = seen?.second === second ? seen.count + 1 : 1;
  refusals.set(userId, { second, count });
  // A second's refusals are all this map holds per user; a user not refused for a while leaves it.
  if (refusals.size > 10_000) for (const [id, entry] of refusals) if (entry.second < second) refusals.delete(id);
  return Math.min(ADMISSION_MAX_RETRY_AFTER_SECONDS, Math.max(ADMISSION_RETRY_AFTER_SECONDS, Math.ceil(count / limit)));
}

export const admission: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = c.get("principal");
  if (!principal) return next();
  const config = configOf(c.env);
  const user = perUser.get(principal.id) ?? 0;
  if (user >= config.MAX_USER_REQUESTS_IN_FLIGHT) {
    throw refuse(
      "TooManyRequests",
      `This user already has ${user} requests in progress on this instance, the most it takes from one user at once.`,
      userRetryAfter(principal.id, c.get("clock").now().getTime(), config.MAX_USER_REQUESTS_IN_FLIGHT),
    );
  }
  if (inFlight >= config.MAX_REQUESTS_IN_FLIGHT) {
    throw refuse("Overloaded", `This instance is serving ${inFlight} requests, the most it takes at once.`);
  }
  const now = c.get("clock").now().getTime();
  // A user's only request in progress is never refused for its rate: one request at a time queues in front
  // of nobody (a script sending one after another), however fast it goes.
  if (!takeRequest(principal.id, now, config.MAX_USER_REQUESTS_PER_SECOND) && user > 0) {
    throw refuse(
      "TooManyRequests",
      `This user is starting requests faster than this instance takes them from one user: ${config.MAX_USER_REQUESTS_PER_SECOND} a ` +
        `second, at most ${userBurst(config.MAX_USER_REQUESTS_PER_SECOND)} at once.`,
      userRetryAfter(principal.id, now, config.MAX_USER_REQUESTS_PER_SECOND),
    );
  }
  inFlight++;
  perUser.set(principal.id, user + 1);
  try {
    await next();
  } finally {
    inFlight--;
    const left = (perUser.get(principal.id) ?? 1) - 1;
    if (left > 0) perUser.set(principal.id, left);
    else perUser.delete(principal.id);
  }
};

/**
 * Runs `work` holding one of this isolate's large-body slots (a route that takes bodies past the JSON
 * limit, given one declared larger or of unknown length), or refuses at once with 503 when all are
 * taken. `limit` is MAX_LARGE_BODIES_IN_FLIGHT.
 */
export async function withLargeBodySlot(limit: number, work: () => Promise<void>): Promise<void> {
  if (largeBodies >= limit) {
    throw refuse("Overloaded", `This instance is receiving ${largeBodies} large bodies, the most it holds at once.`);
  }
  largeBodies++;
  try {
    await work();
  } finally {
    largeBodies--;
  }
}
