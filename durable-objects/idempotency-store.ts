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
  /** The body as sent, or, when `sealed`, the body sealed (src/pkg/idempotency.ts): an answer with secrets is never stored in plain text. */
  body: string;
  sealed?: boolean;
}

type Entry =
  | { state: "pending"; fingerprint: string; leaseUntil: number }
  | { state: "done"; fingerprint: string; expiresAt: number; response: StoredResponse };

export type BeginResult =
  | { outcome: "proceed" }
  | { outcome: "replay"; response: StoredResponse }
  | { outcome: "mismatch" }
  | { outcome: "inProgress" };

export const RETENTION_MS = 24 * 60 * 60 * 1000;

export class IdempotencyStore extends DurableObject {
  async begin(key: string, fingerprint: string, leaseMs: number): Promise<BeginResult> {
    const now = Date.now();
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry) {
      if (entry.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (entry.state === "done" && entry.expiresAt > now) return { outcome: "replay", response: entry.response };
      if (entry.state === "pending" && entry.leaseUntil > now) return { outcome: "inProgress" };
    }
    await this.ctx.storage.put<Entry>(key, { state: "pending", fingerprint, leaseUntil: now + leaseMs });
    await this.ensureSweep(now + leaseMs);
    return { outcome: "proceed" };
  }

  async complete(key: string, fingerprint: string, response: StoredResponse): Promise<void> {
    const expiresAt = Date.now() + RETENTION_MS;
    await this.ctx.storage.put<Entry>(key, { state: "done", fingerprint, expiresAt, response });
    await this.ensureSweep(expiresAt);
  }

  /** Releases a claim whose request failed unexpectedly, so the client's retry runs again. */
  async release(key: string, fingerprint: string): Promise<void> {
    const entry = await this.ctx.storage.get<Entry>(key);
    if (entry?.state === "pending" && entry.fingerprint === fingerprint) await this.ctx.storage.delete(key);
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
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
