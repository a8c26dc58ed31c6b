import { nowMs, platform } from "../src/platform/services";
import { DurableObject } from "cloudflare:workers";

/**
 * Remembers the first response to each Idempotency-Key of one user (one object per user), so a
 * phone that retries a POST after a lost response gets the same answer instead of a second write.
 * A key is claimed with a lease before the request runs; a retry that arrives while the first is
 * still running is told so (409) and may retry; a crashed request's lease expires and the key can
 * be used again. Completed entries are kept for RETENTION_MS, then swept by the alarm.
 */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * The body as sent, or, when `sealed`, the body sealed (src/pkg/idempotency.ts): an answer with secrets is never stored in
   * plain text.
   */
  body: string;
  sealed?: boolean;
}

/**
 * `fingerprint` is the SHA-256 of the whole request (method, path, body or form meaning); `head` that
 * of its method and path alone. A request whose body streams claims its key knowing only its head
 * ({@link IdempotencyStore.claim}): its fingerprint is null until the body has passed, and `token`
 * names the claim. Entries written before heads existed have none.
 */
type Entry =
  | { state: "pending"; fingerprint: string | null; head?: string; token?: string; leaseUntil: number }
  | { state: "done"; fingerprint: string; head?: string; expiresAt: number; response: StoredResponse };

export type BeginResult =
  { outcome: "proceed" } | { outcome: "replay"; response: StoredResponse } | { outcome: "mismatch" } | { outcome: "inProgress" };

/**
 * What a streamed request learns before reading its body: it holds the key (`proceed`, with the
 * claim's token), the key belongs to another method or path (`mismatch`), or the key is taken and
 * only the body can tell a replay from a mismatch (`check`: hash the body, then {@link IdempotencyStore.resolve}).
 */
export type ClaimResult = { outcome: "proceed"; token: string } | { outcome: "mismatch" } | { outcome: "check" };

export const RETENTION_MS = 24 * 60 * 60 * 1000;

export class IdempotencyStore extends DurableObject {
  /** Claims a key for a request whose whole fingerprint is known (its body was small enough to read first). */
  async begin(key: string, fingerprint: string, leaseMs: number, head?: string): Promise<BeginResult> {
    const now = nowMs();
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry) {
      // A streamed request still running, its body not yet all hashed: only its head can differ yet.
      if (entry.state === "pending" && entry.fingerprint === null && entry.leaseUntil > now) {
        return head !== undefined && entry.head !== undefined && entry.head !== head ? { outcome: "mismatch" } : { outcome: "inProgress" };
      }
      if (entry.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (entry.state === "done" && entry.expiresAt > now) return { outcome: "replay", response: entry.response };
      if (entry.state === "pending" && entry.leaseUntil > now) return { outcome: "inProgress" };
    }
    await this.ctx.storage.put<Entry>(key, { state: "pending", fingerprint, ...(head ? { head } : {}), leaseUntil: now + leaseMs });
    await this.ensureSweep(now + leaseMs);
    return { outcome: "proceed" };
  }

  /**
   * Claims a key before the request's body is read (it streams into the handler and is hashed as it
   * passes), so the key is reserved before any work starts. A key held by another method or path is
   * a mismatch at once; a key held by the same method and path needs the body's fingerprint to tell
   * a replay from a mismatch (`check`). A claim whose lease ran out (its request crashed) is taken over.
   */
  async claim(key: string, head: string, leaseMs: number): Promise<ClaimResult> {
    const now = nowMs();
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry) {
      if (entry.head !== undefined && entry.head !== head) return { outcome: "mismatch" };
      const live = entry.state === "done" ? entry.expiresAt > now : entry.leaseUntil > now;
      if (live) return { outcome: "check" };
    }
    const token = platform().ids.uuid();
    await this.ctx.storage.put<Entry>(key, { state: "pending", fingerprint: null, head, token, leaseUntil: now + leaseMs });
    await this.ensureSweep(now + leaseMs);
    return { outcome: "proceed", token };
  }

  /**
   * For a request that found its key taken ({@link claim} said `check`) and has hashed its body: the
   * first answer when the fingerprints match, a mismatch when they differ, in progress while the first
   * request runs (or, when the key was freed meanwhile, so that the retry claims it).
   */
  async resolve(key: string, fingerprint: string): Promise<BeginResult> {
    const now = nowMs();
    const entry = await this.ctx.storage.get<Entry>(key);
    if (!entry) return { outcome: "inProgress" };
    if (entry.state === "done") {
      if (entry.expiresAt <= now) return { outcome: "inProgress" };
      return entry.fingerprint === fingerprint ? { outcome: "replay", response: entry.response } : { outcome: "mismatch" };
    }
    if (entry.fingerprint !== null && entry.fingerprint !== fingerprint) return { outcome: "mismatch" };
    return { outcome: "inProgress" };
  }

  /**
   * Records the fingerprint of a claimed request once its body has passed, so a concurrent retry with another body is told it is
   * a mismatch.
   */
  async fingerprinted(key: string, token: string, fingerprint: string): Promise<void> {
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry?.state === "pending" && entry.token === token) await this.ctx.storage.put<Entry>(key, { ...entry, fingerprint });
  }

  /** Extends a claim while its body is still arriving (a slow upload outlives one lease). */
  async extend(key: string, token: string, leaseMs: number): Promise<void> {
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry?.state === "pending" && entry.token === token)
      await this.ctx.storage.put<Entry>(key, { ...entry, leaseUntil: nowMs() + leaseMs });
  }

  async complete(key: string, fingerprint: string, response: StoredResponse, head?: string): Promise<void> {
    const expiresAt = nowMs() + RETENTION_MS;
    await this.ctx.storage.put<Entry>(key, { state: "done", fingerprint, ...(head ? { head } : {}), expiresAt, response });
    await this.ensureSweep(expiresAt);
  }

  /** Releases a streamed request's claim (it failed, or its body could not be read to the end), so a retry runs again. */
  async releaseClaim(key: string, token: string): Promise<void> {
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry?.state === "pending" && entry.token === token) await this.ctx.storage.delete(key);
  }

  /** Releases a claim whose request failed unexpectedly, so the client's retry runs again. */
  async release(key: string, fingerprint: string): Promise<void> {
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry?.state === "pending" && entry.fingerprint === fingerprint) await this.ctx.storage.delete(key);
  }

  override async alarm(): Promise<void> {
    const now = nowMs();
    let next = Number.POSITIVE_INFINITY;
    const entries = await this.ctx.storage.list<Entry>();
    const expired: string[] = [];
    for (const [key, entry] of entries) {
      const until = entry.state === "done" ? entry.expiresAt : entry.leaseUntil;
      if (until <= now) expired.push(key);
      else next = Math.min(next, until);
    }
    for (let i = 0; i < expired.length; i += 128) await this.ctx.storage.delete(expired.slice(i, i + 128));
    if (Number.isFinite(next)) await this.ctx.storage.setAlarm(next);
  }

  private async ensureSweep(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }
}
