/**
 * The audit trail's hash chain (docs/decisions.md, "The audit trail"). One stream: every record, in
 * the order of its sequence number. A record's hash is
 *
 *     SHA-256( prevHash + "\n" + JSON.stringify([seq, eventId, occurredAt, entityKind, entityId, action,
 *              etag, actorType, actorId, actorName, cause, requestId, reason, before, after]) )
 *
 * in lower-case hex, where `before` and `after` are the stored JSON text (or null) and `prevHash` is the
 * hash of the record before it (64 zeros for the first). Records are written by many writers at once
 * and SQLite has no SHA-256, so a record gets its sequence number when it is written and its hash
 * afterwards: the minute cron seals the records after the last sealed one, in order ({@link sealAuditTrail}).
 * A record changed or removed once sealed breaks its own hash or the next record's link.
 */
import type { Bindings } from "../env";
import type { Logger } from "../pkg/logger";
import { platform } from "../platform/services";
import { sealStatements } from "./store";

export const GENESIS_HASH = "0".repeat(64);

/** A record as stored (audit_records' columns), the same in D1 and in an archived segment. */
export interface AuditRow {
  seq: number;
  event_id: string;
  occurred_at: string;
  entity_kind: string;
  entity_id: string;
  action: string;
  etag: string | null;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  cause: string | null;
  request_id: string | null;
  reason: string | null;
  before: string | null;
  after: string | null;
}

/** A record with its seal (null while it is not sealed yet). */
export interface SealedRow extends AuditRow {
  prev_hash: string | null;
  hash: string | null;
}

export const AUDIT_COLUMNS =
  "seq, event_id, occurred_at, entity_kind, entity_id, action, etag, actor_type, actor_id, actor_name, cause, request_id, " +
  "reason, before, after";

/** The canonical form of a record, what its hash covers (with the hash before it). */
export function canonicalRecord(row: AuditRow): string {
  return JSON.stringify([
    row.seq,
    row.event_id,
    row.occurred_at,
    row.entity_kind,
    row.entity_id,
    row.action,
    row.etag,
    row.actor_type,
    row.actor_id,
    row.actor_name,
    row.cause,
    row.request_id,
    row.reason,
    row.before,
    row.after,
  ]);
}

export async function recordHash(prevHash: string, row: AuditRow): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${prevHash}\n${canonicalRecord(row)}`));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The last sealed record: its seq and hash (in D1, or the end of the archive when D1 holds no seal). */
async function chainHead(env: Bindings): Promise<{ seq: number; hash: string }> {
  const sealed = await env.DB.prepare("SELECT seq, hash FROM audit_seals ORDER BY seq DESC LIMIT 1").first<{ seq: number; hash: string }>();
  if (sealed) return sealed;
  const archived = await env.DB.prepare(
    "SELECT last_seq AS seq, last_hash AS hash FROM audit_segments ORDER BY last_seq DESC LIMIT 1",
  ).first<{
    seq: number;
    hash: string;
  }>();
  return archived ?? { seq: 0, hash: GENESIS_HASH };
}

/** Records one run of the cron seals at most (a few hundred ms of hashing and one write). */
const SEAL_BATCH = 500;

/**
 * Seals the records written since the last seal, in sequence order, up to `rounds` batches. Safe to
 * run twice at once: both compute the same hashes, and a seal already there is kept (INSERT OR IGNORE).
 * Returns how many records it sealed.
 */
export async function sealAuditTrail(env: Bindings, log: Logger, rounds = 4): Promise<number> {
  let sealed = 0;
  for (let round = 0; round < rounds; round++) {
    const head = await chainHead(env);
    const { results } = await env.DB.prepare(`SELECT ${AUDIT_COLUMNS} FROM audit_records WHERE seq > ?1 ORDER BY seq LIMIT ?2`)
      .bind(head.seq, SEAL_BATCH)
      .all<AuditRow>();
    if (results.length === 0) break;
    let prev = head.hash;
    const seals: { seq: number; prevHash: string; hash: string }[] = [];
    for (const row of results) {
      const hash = await recordHash(prev, row);
      seals.push({ seq: row.seq, prevHash: prev, hash });
      prev = hash;
    }
    await env.DB.batch(sealStatements(env.DB, seals, platform().clock.now().toISOString()));
    sealed += results.length;
    if (results.length < SEAL_BATCH) break;
  }
  if (sealed > 0) log.debug("audit trail sealed", { sealed });
  return sealed;
}

/** What a verification found: the records checked, and the first broken link when there is one. */
export interface Verification {
  from: string | null;
  to: string | null;
  checked: number;
  /** Records in the range not sealed yet (written within the last minute or so): not checked. */
  unsealed: number;
  firstSequence: number | null;
  lastSequence: number | null;
  valid: boolean;
  broken: { sequence: number; occurredAt: string | null; problem: string } | null;
}

/**
 * Checks sealed records in sequence order: each one's hash against its canonical form and the hash
 * before it, and each link (its `prevHash` is the hash of the record before it, and no sequence
 * number is missing). `rows` come oldest first; `previous` is the record before the first (or null
 * at the start of the chain).
 */
export async function verifyRows(
  rows: AsyncIterable<SealedRow>,
  previous: { seq: number; hash: string } | null,
): Promise<Pick<Verification, "checked" | "unsealed" | "firstSequence" | "lastSequence" | "broken">> {
  let checked = 0;
  let unsealed = 0;
  let first: number | null = null;
  let last: number | null = null;
  let before = previous;
  const broken = (row: SealedRow, problem: string) => ({
    checked,
    unsealed,
    firstSequence: first,
    lastSequence: last,
    broken: { sequence: row.seq, occurredAt: row.occurred_at, problem },
  });
  for await (const row of rows) {
    if (row.hash === null || row.prev_hash === null) {
      unsealed += 1;
      continue;
    }
    first ??= row.seq;
    if (before !== null && row.seq !== before.seq + 1)
      return broken(row, `records ${before.seq + 1} to ${row.seq - 1} are missing: the record before this one is ${before.seq}`);
    if (before !== null && row.prev_hash !== before.hash) return broken(row, "its link does not name the hash of the record before it");
    if ((await recordHash(row.prev_hash, row)) !== row.hash) return broken(row, "its content does not match its hash: it was changed");
    checked += 1;
    last = row.seq;
    before = { seq: row.seq, hash: row.hash };
  }
  return { checked, unsealed, firstSequence: first, lastSequence: last, broken: null };
}
