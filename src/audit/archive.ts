/**
 * The audit trail's archive (docs/decisions.md, "The audit trail"): records older than
 * AUDIT_RETENTION_DAYS leave D1 for R2 (AUDIT_ARCHIVE), a UTC day at a time, as gzip NDJSON segments of
 * sealed records with their hashes; audit_segments indexes them with their first and last hash, and
 * audit_archived_entities says which segments hold which entity. The minute cron moves a few segments
 * per run ({@link archiveAuditTrail}), so no run holds the isolate long. Reads (./read.ts) read the
 * segments a query can match, so callers never see where a record lives.
 */
import { gunzipSync, gzipSync, strFromU8, strToU8 } from "fflate";
import { configOf } from "../config";
import type { Database } from "../db/statements";
import type { Bindings } from "../env";
import type { Logger } from "../pkg/logger";
import { AUDIT_COLUMNS, type SealedRow } from "./chain";
import { archiveSegmentStatements, expireSegmentStatements, type SegmentValues } from "./store";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Records in one segment at most (a busy day is several segments). */
const SEGMENT_RECORDS = 5000;

export interface SegmentRow {
  first_seq: number;
  last_seq: number;
  day: string;
  records: number;
  first_at: string;
  last_at: string;
  prev_hash: string;
  first_hash: string;
  last_hash: string;
  object_key: string;
  bytes: number;
}

const SEGMENT_COLUMNS = "first_seq, last_seq, day, records, first_at, last_at, prev_hash, first_hash, last_hash, object_key, bytes";

const startOfDay = (ms: number) => new Date(Math.floor(ms / DAY_MS) * DAY_MS);

/**
 * Archives up to `maxSegments` segments of records older than the retention (whole UTC days before
 * the cut-off, sealed records only), then forgets segments past the archive's life. Returns the
 * number of records archived.
 */
export async function archiveAuditTrail(env: Bindings, now: Date, log: Logger, maxSegments = 4): Promise<number> {
  const config = configOf(env);
  const cutoff = startOfDay(now.getTime() - config.AUDIT_RETENTION_DAYS * DAY_MS).toISOString();
  let archived = 0;
  for (let i = 0; i < maxSegments; i++) {
    const moved = await archiveOneSegment(env, cutoff, now);
    if (moved === 0) break;
    archived += moved;
  }
  await expireSegments(
    env,
    startOfDay(now.getTime() - config.AUDIT_ARCHIVE_DAYS * DAY_MS)
      .toISOString()
      .slice(0, 10),
  );
  if (archived > 0) log.info("audit trail archived", { records: archived });
  return archived;
}

async function archiveOneSegment(env: Bindings, cutoff: string, now: Date): Promise<number> {
  const oldest = await env.DB.prepare("SELECT seq, occurred_at FROM audit_records ORDER BY seq LIMIT 1").first<{
    seq: number;
    occurred_at: string;
  }>();
  if (!oldest || oldest.occurred_at >= cutoff) return 0;
  const day = oldest.occurred_at.slice(0, 10);
  const end = new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS).toISOString();
  const until = end < cutoff ? end : cutoff;
  const { results } = await env.DB.prepare(
    `SELECT ${AUDIT_COLUMNS.split(", ")
      .map((c) => `r.${c}`)
      .join(", ")}, s.prev_hash, s.hash FROM audit_records r LEFT JOIN audit_seals s ON s.seq = r.seq ` +
      "WHERE r.seq >= ?1 ORDER BY r.seq LIMIT ?2",
  )
    .bind(oldest.seq, SEGMENT_RECORDS)
    .all<SealedRow>();
  // A contiguous run of sealed records of the day: it stops at the first record of a later day or not sealed yet.
  const rows: SealedRow[] = [];
  for (const row of results) {
    if (row.occurred_at >= until || row.hash === null || (rows.length > 0 && row.seq !== rows[rows.length - 1]!.seq + 1)) break;
    rows.push(row);
  }
  if (rows.length === 0) return 0;
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const body = gzipSync(strToU8(rows.map((row) => JSON.stringify(row)).join("\n") + "\n"));
  const objectKey = `audit/${day}/${String(first.seq).padStart(12, "0")}-${String(last.seq).padStart(12, "0")}.ndjson.gz`;
  await env.AUDIT_ARCHIVE.put(objectKey, body, {
    httpMetadata: { contentType: "application/x-ndjson", contentEncoding: "gzip" },
    customMetadata: { firstSeq: String(first.seq), lastSeq: String(last.seq), prevHash: first.prev_hash!, lastHash: last.hash! },
  });
  const segment: SegmentValues = {
    firstSeq: first.seq,
    lastSeq: last.seq,
    day,
    records: rows.length,
    firstAt: rows.reduce((min, r) => (r.occurred_at < min ? r.occurred_at : min), first.occurred_at),
    lastAt: rows.reduce((max, r) => (r.occurred_at > max ? r.occurred_at : max), first.occurred_at),
    prevHash: first.prev_hash!,
    firstHash: first.hash!,
    lastHash: last.hash!,
    objectKey,
    bytes: body.byteLength,
    archivedAt: now.toISOString(),
  };
  await env.DB.batch(archiveSegmentStatements(env.DB, segment));
  return rows.length;
}

async function expireSegments(env: Bindings, beforeDay: string): Promise<void> {
  const { results } = await env.DB.prepare("SELECT first_seq, object_key FROM audit_segments WHERE day < ?1 ORDER BY first_seq LIMIT 20")
    .bind(beforeDay)
    .all<{ first_seq: number; object_key: string }>();
  for (const segment of results) {
    await env.AUDIT_ARCHIVE.delete(segment.object_key);
    await env.DB.batch(expireSegmentStatements(env.DB, segment.first_seq));
  }
}

/** The records of one segment, as they were in D1, with their seals. */
export async function readSegment(env: Pick<Bindings, "AUDIT_ARCHIVE">, segment: Pick<SegmentRow, "object_key">): Promise<SealedRow[]> {
  const object = await env.AUDIT_ARCHIVE.get(segment.object_key);
  if (!object) throw new Error(`the audit archive has lost ${segment.object_key}`);
  const text = strFromU8(gunzipSync(new Uint8Array(await object.arrayBuffer())));
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as SealedRow);
}

/** What a read of the trail asks of the archive: the segments that may hold its records. */
export interface ArchiveScope {
  entityKinds: readonly string[];
  entityIds: readonly string[];
  from: string | null;
  to: string | null;
}

/** The segments that may hold records of `scope`, newest first. */
export async function segmentsFor(db: Database, scope: ArchiveScope): Promise<SegmentRow[]> {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => `?${values.push(value)}`;
  if (scope.entityIds.length > 0) {
    const kinds =
      scope.entityKinds.length > 0 ? ` AND entity_kind IN (SELECT value FROM json_each(${param(JSON.stringify(scope.entityKinds))}))` : "";
    conditions.push(
      `first_seq IN (SELECT first_seq FROM audit_archived_entities WHERE entity_id IN (SELECT value FROM json_each(` +
        `${param(JSON.stringify(scope.entityIds))}))${kinds})`,
    );
  }
  if (scope.from !== null) conditions.push(`last_at >= ${param(scope.from)}`);
  if (scope.to !== null) conditions.push(`first_at < ${param(scope.to)}`);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
  const { results } = await db
    .prepare(`SELECT ${SEGMENT_COLUMNS} FROM audit_segments ${where} ORDER BY first_seq DESC`)
    .bind(...values)
    .all<SegmentRow>();
  return results;
}

/** Every segment in sequence order from the one holding `fromSeq` (for verification). */
export async function segmentsFrom(db: Database, fromSeq: number, toSeq: number): Promise<SegmentRow[]> {
  const { results } = await db
    .prepare(`SELECT ${SEGMENT_COLUMNS} FROM audit_segments WHERE last_seq >= ?1 AND first_seq <= ?2 ORDER BY first_seq`)
    .bind(fromSeq, toSeq)
    .all<SegmentRow>();
  return results;
}
