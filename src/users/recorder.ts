/**
 * The directory of users fills itself from the calls: every principal that calls the API (a person,
 * or a machine client of /connect/token or of the identity provider) is recorded with its id, name,
 * kind and when it was first and last seen.
 *
 * Without slowing the request path: the recording is one upsert statement run after the response
 * (`waitUntil`), and each isolate remembers whom it recorded in the last {@link RECORD_INTERVAL_MS},
 * so a principal costs one D1 write per isolate every five minutes, however many requests it sends;
 * every other request pays one Map lookup. The upsert itself writes no row when another isolate
 * recorded the same principal within the interval. So `lastSeenAt` is accurate to five minutes.
 */
import type { Database } from "../db/statements";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { Principal } from "../pkg/auth";
import { errorFields } from "../pkg/logger";

/** How long an isolate trusts its own record of a principal before it writes the sighting again. */
export const RECORD_INTERVAL_MS = 5 * 60 * 1000;
/** Principals an isolate remembers (the oldest is forgotten first; forgetting only costs a write). */
export const MAX_REMEMBERED = 5000;

export type UserKind = "person" | "client";

interface Sighting {
  /** name, kind and client id as last written: a change is written at once. */
  key: string;
  at: number;
  /** The write in flight, if any. */
  pending: Promise<void> | undefined;
}

const recent = new Map<string, Sighting>();

/** Job output and monitor status tokens speak for a job or a monitor, not for a user: they are not recorded. */
export function isUser(principal: Principal): boolean {
  return principal.jobId === undefined && principal.monitorRef === undefined;
}

export function kindOf(principal: Principal): UserKind {
  return principal.kind === "client" ? "client" : "person";
}

/** Keys by principal object: a verified token's principal is one object for its lifetime (src/pkg/auth.ts caches it). */
const keys = new WeakMap<Principal, string>();

function keyOf(principal: Principal): string {
  let key = keys.get(principal);
  if (key === undefined) {
    key = JSON.stringify([principal.name, kindOf(principal), principal.clientId ?? null]);
    keys.set(principal, key);
  }
  return key;
}

/**
 * One statement: insert the principal, or refresh its row. The WHERE leaves a row untouched (no row
 * written) when it is already fresh, so isolates that each record the same principal cost D1 reads,
 * not writes.
 */
const UPSERT = `INSERT INTO users (id, name, kind, client_id, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
  ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind, client_id = excluded.client_id,
    first_seen_at = min(users.first_seen_at, excluded.first_seen_at), last_seen_at = max(users.last_seen_at, excluded.last_seen_at)
  WHERE users.last_seen_at <= ?6 OR users.name IS NOT excluded.name OR users.kind IS NOT excluded.kind OR users.client_id IS
  NOT excluded.client_id`;

export function recordStatement(db: Database, principal: Principal, now: Date): D1PreparedStatement {
  const staleBefore = new Date(now.getTime() - RECORD_INTERVAL_MS).toISOString();
  return db
    .prepare(UPSERT)
    .bind(principal.id, principal.name, kindOf(principal), principal.clientId ?? null, now.toISOString(), staleBefore);
}

function remember(id: string, sighting: Sighting): void {
  recent.delete(id);
  if (recent.size >= MAX_REMEMBERED) {
    const oldest = recent.keys().next().value;
    if (oldest !== undefined) recent.delete(oldest);
  }
  recent.set(id, sighting);
}

/**
 * Middleware (after authentication): schedules the caller's record when this isolate has not written
 * it within the interval, and lets the request go on at once.
 */
export const recordCaller: MiddlewareHandler<AppEnv> = (c, next) => {
  const principal = c.get("principal") as Principal | undefined;
  if (principal && isUser(principal)) {
    const now = c.get("clock").now();
    const key = keyOf(principal);
    const seen = recent.get(principal.id);
    if (!seen || seen.key !== key || now.getTime() - seen.at >= RECORD_INTERVAL_MS) {
      const sighting: Sighting = { key, at: now.getTime(), pending: undefined };
      const log = c.get("log");
      sighting.pending = recordStatement(c.env.DB, principal, now)
        .run()
        .then(
          () => {
            sighting.pending = undefined;
          },
          (error: unknown) => {
            // Forget it, so the caller's next request tries again.
            if (recent.get(principal.id) === sighting) recent.delete(principal.id);
            log.warn("recording the caller failed", errorFields(error));
          },
        );
      remember(principal.id, sighting);
      try {
        c.executionCtx.waitUntil(sighting.pending);
      } catch {
        // No execution context (a bare app.fetch): the write runs on its own.
      }
    }
  }
  return next();
};

/**
 * Makes sure the caller's own row is in D1 before a directory read, so a client that looks itself up
 * on its very first call (the original client's `GET /Users?keyword={clientId}`) finds itself: waits
 * for a write in flight, then runs the guarded upsert (which writes nothing when the row is fresh).
 * Directory reads are rare; the hot path never waits.
 */
export async function ensureRecorded(db: Database, principal: Principal, now: Date): Promise<void> {
  if (!isUser(principal)) return;
  await recent.get(principal.id)?.pending;
  await recordStatement(db, principal, now).run();
}
