/**
 * Reads of the audit trail: pages (GET /AuditTrail, GET /{Resource}/{id}/History) on the shared list
 * engine over D1, continued into the archive in R2 when a page reaches past what D1 keeps; the export
 * (every record of a filter, streamed); and the verification of the hash chain over a range. Newest
 * first: D1 holds the newest records, the archive the older ones, so a page reads D1, then segments.
 */
import type { Database } from "../db/statements";
import type { Bindings } from "../env";
import { ENTITY_KINDS, EVENT_ACTIONS } from "../events/kinds";
import { ApiError } from "../pkg/errors";
import {
  compileListQuery,
  defineList,
  noProperties,
  parseDateValue,
  queryError,
  runListQuery,
  splitCsv,
  SqlValues,
  type Condition,
} from "../pkg/query";
import type { Principal } from "../pkg/auth";
import { EVENT_KINDS } from "../subscriptions/catalogue";
import { readSegment, segmentsFor, segmentsFrom, type SegmentRow } from "./archive";
import { AUDIT_COLUMNS, verifyRows, type AuditRow, type SealedRow, type Verification } from "./chain";

/** The longest time range one read or export may span. */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface AuditFilter {
  entityKinds: string[];
  entityIds: string[];
  actorIds: string[];
  actions: string[];
  requestId: string | null;
  from: string | null;
  to: string | null;
}

/** The kinds whose records a caller may read: those whose entities it may read (the change feed's rule). */
export function readableKinds(principal: Principal): string[] {
  return Object.entries(EVENT_KINDS)
    .filter(([, kind]) => principal.permissions.has(kind.permission))
    .map(([name]) => name);
}

const instant = (value: string | undefined, name: "from" | "to"): string | null => {
  if (value === undefined || value === "") return null;
  const parsed = parseDateValue(value);
  if (parsed === undefined) throw queryError(`query.${name}`, "format", `${name}: '${value}' is not an ISO 8601 date-time.`);
  return new Date(parsed).toISOString();
};

const rangeError = (rule: string, message: string) =>
  new ApiError("InvalidQuery", message, { errors: [{ field: "query.to", rule, message }] });

/** A time range: from before to, at most {@link MAX_RANGE_DAYS} days. */
export function timeRange(fromText: string | undefined, toText: string | undefined): { from: string | null; to: string | null } {
  const from = instant(fromText, "from");
  const to = instant(toText, "to");
  if (from !== null && to !== null) {
    if (to <= from) throw rangeError("afterFrom", `to (${to}) must be later than from (${from}): the range is backwards.`);
    if (Date.parse(to) - Date.parse(from) > MAX_RANGE_DAYS * DAY_MS)
      throw rangeError("maxRange", `from and to span more than ${MAX_RANGE_DAYS} days; ask for at most ${MAX_RANGE_DAYS} at a time.`);
  }
  return { from, to };
}

/** The filters of a request, checked: known kinds and actions, kinds the caller may read, a sound range. */
export function auditFilter(
  principal: Principal,
  query: { entityKinds?: string; entityIds?: string; actorIds?: string; actions?: string; requestId?: string; from?: string; to?: string },
): AuditFilter {
  const readable = readableKinds(principal);
  const kinds = splitCsv(query.entityKinds);
  for (const kind of kinds) {
    if (!(ENTITY_KINDS as readonly string[]).includes(kind))
      throw queryError("query.entityKinds", "enum", `'${kind}' is not an entity kind: ${ENTITY_KINDS.join(", ")}.`);
    if (!readable.includes(kind))
      throw new ApiError(
        "Forbidden",
        `Reading the history of ${kind} needs the permission '${EVENT_KINDS[kind as keyof typeof EVENT_KINDS].permission}'.`,
      );
  }
  const actions = splitCsv(query.actions);
  for (const action of actions)
    if (!(EVENT_ACTIONS as readonly string[]).includes(action))
      throw queryError("query.actions", "enum", `'${action}' is not an action: ${EVENT_ACTIONS.join(", ")}.`);
  return {
    entityKinds: kinds.length > 0 ? kinds : readable,
    entityIds: splitCsv(query.entityIds),
    actorIds: splitCsv(query.actorIds),
    actions,
    requestId: query.requestId?.trim() || null,
    ...timeRange(query.from, query.to),
  };
}

/** The filter as SQL conditions over audit_records (alias `ar`). */
function conditions(filter: AuditFilter): Condition[] {
  const list = (column: string, values: readonly string[]): Condition[] =>
    values.length > 0 ? [(v: SqlValues) => `${column} IN ${v.list(values)}`] : [];
  return [
    // An empty list of kinds (a caller who may read none) matches nothing.
    filter.entityKinds.length > 0 ? (v: SqlValues) => `ar.entity_kind IN ${v.list(filter.entityKinds)}` : () => "0",
    ...list("ar.entity_id", filter.entityIds),
    ...list("ar.actor_id", filter.actorIds),
    ...list("ar.action", filter.actions),
    ...(filter.requestId !== null ? [(v: SqlValues) => `ar.request_id = ${v.value(filter.requestId)}`] : []),
    ...(filter.from !== null ? [(v: SqlValues) => `ar.occurred_at >= ${v.value(filter.from)}`] : []),
    ...(filter.to !== null ? [(v: SqlValues) => `ar.occurred_at < ${v.value(filter.to)}`] : []),
  ];
}

/** The filter over a record read from the archive (what {@link conditions} says in SQL). */
function matches(filter: AuditFilter, row: AuditRow): boolean {
  const inList = (values: readonly string[], value: string | null) => values.length === 0 || (value !== null && values.includes(value));
  return (
    filter.entityKinds.includes(row.entity_kind) &&
    inList(filter.entityIds, row.entity_id) &&
    inList(filter.actorIds, row.actor_id) &&
    inList(filter.actions, row.action) &&
    (filter.requestId === null || row.request_id === filter.requestId) &&
    (filter.from === null || row.occurred_at >= filter.from) &&
    (filter.to === null || row.occurred_at < filter.to)
  );
}

const auditList = defineList({
  table: "audit_records",
  alias: "ar",
  entityKind: "auditRecord",
  idColumn: "event_id",
  idFormat: "text",
  select: AUDIT_COLUMNS.split(", ")
    .map((c) => `ar.${c}`)
    .join(", "),
  fields: { sequence: { column: "ar.seq", type: "number", uniqueValues: false, indexed: true } },
  searchColumns: ["ar.reason"],
  defaultOrder: "sequence desc",
});

/** The archived records of a filter, newest first, segment by segment. */
async function* archivedMatches(env: Pick<Bindings, "DB" | "AUDIT_ARCHIVE">, filter: AuditFilter): AsyncGenerator<AuditRow> {
  const segments = await segmentsFor(env.DB, filter);
  for (const segment of segments) {
    const rows = await readSegment(env, segment);
    for (let i = rows.length - 1; i >= 0; i--) if (matches(filter, rows[i]!)) yield rows[i]!;
  }
}

/** One page of the trail, newest first, across D1 and the archive. */
export async function auditPage(
  env: Pick<Bindings, "DB" | "AUDIT_ARCHIVE">,
  filter: AuditFilter,
  paging: { skip: number; take: number; includeTotal: boolean },
): Promise<{ items: AuditRow[]; total: number | undefined }> {
  const compiled = await compileListQuery(auditList, paging, noProperties, conditions(filter));
  const page = await runListQuery<AuditRow>(env.DB, compiled);
  if (page.items.length === paging.take && !paging.includeTotal) return { items: page.items, total: undefined };
  // The page reaches past what D1 holds (or the total is asked): continue into the archive.
  let inD1 = page.total;
  if (inD1 === undefined) {
    if (page.items.length > 0) inD1 = paging.skip + page.items.length;
    else {
      const count = await env.DB.prepare(compiled.count.sql)
        .bind(...compiled.count.params)
        .first<{ total: number }>();
      inD1 = count?.total ?? 0;
    }
  }
  const items = [...page.items];
  let skip = Math.max(0, paging.skip - inD1);
  let archived = 0;
  for await (const row of archivedMatches(env, filter)) {
    archived += 1;
    if (items.length >= paging.take) {
      if (!paging.includeTotal) break;
      continue;
    }
    if (skip > 0) skip -= 1;
    else items.push(row);
  }
  return { items, total: paging.includeTotal ? inD1 + archived : undefined };
}

const EXPORT_PAGE = 500;

/** Every record of a filter, newest first (D1 by pages, then the archive), for a streamed export. */
export async function* exportRows(env: Pick<Bindings, "DB" | "AUDIT_ARCHIVE">, filter: AuditFilter): AsyncGenerator<AuditRow> {
  let below = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const values = new SqlValues();
    const where = [...conditions(filter).map((c) => c(values)), `ar.seq < ${values.value(below)}`].join(" AND ");
    const { results } = await env.DB.prepare(
      `SELECT ${AUDIT_COLUMNS.split(", ")
        .map((c) => `ar.${c}`)
        .join(", ")} FROM audit_records ar WHERE ${where} ORDER BY ar.seq DESC LIMIT ${EXPORT_PAGE}`,
    )
      .bind(values.toJson())
      .all<AuditRow>();
    yield* results;
    if (results.length < EXPORT_PAGE) break;
    below = results[results.length - 1]!.seq;
  }
  yield* archivedMatches(env, filter);
}

/** Whether an entity ever had a record (in D1, or archived). */
export async function hasHistory(db: Database, kind: string, id: string): Promise<boolean> {
  const row = await db
    .prepare(
      "SELECT EXISTS (SELECT 1 FROM audit_records WHERE entity_kind = ?1 AND entity_id = ?2) OR " +
        "EXISTS (SELECT 1 FROM audit_archived_entities WHERE entity_kind = ?1 AND entity_id = ?2) AS found",
    )
    .bind(kind, id)
    .first<{ found: number }>();
  return row?.found === 1;
}

const VERIFY_PAGE = 1000;

/**
 * Verifies the chain over the records of a time range (every record whose sequence number lies
 * between the first and the last record of the range), archived segments included: each segment's
 * records must also match the first and last hash its index row keeps.
 */
export async function verifyRange(
  env: Pick<Bindings, "DB" | "AUDIT_ARCHIVE">,
  from: string | null,
  to: string | null,
): Promise<Verification> {
  const bounds = await env.DB.prepare(
    "SELECT min(s) AS first, max(e) AS last FROM (SELECT min(seq) AS s, max(seq) AS e FROM audit_records " +
      "WHERE occurred_at >= ?1 AND occurred_at < ?2 " +
      "UNION ALL SELECT min(first_seq), max(last_seq) FROM audit_segments WHERE last_at >= ?1 AND first_at < ?2)",
  )
    .bind(from ?? "", to ?? "9999")
    .first<{ first: number | null; last: number | null }>();
  const empty = { from, to, checked: 0, unsealed: 0, firstSequence: null, lastSequence: null, valid: true, broken: null };
  if (!bounds || bounds.first === null || bounds.last === null) return empty;
  const first = bounds.first;
  const last = bounds.last;
  const segments = await segmentsFrom(env.DB, first, last);
  const previous = await previousSeal(env.DB, first);
  let segmentProblem: { sequence: number; occurredAt: string | null; problem: string } | null = null;
  async function* rows(): AsyncGenerator<SealedRow> {
    for (const segment of segments) {
      const records = await readSegment(env, segment);
      const problem = segmentMismatch(segment, records);
      if (problem) {
        segmentProblem = { sequence: segment.first_seq, occurredAt: segment.first_at, problem };
        return;
      }
      for (const row of records) if (row.seq >= first && row.seq <= last) yield row;
    }
    let after = segments.length > 0 ? Math.max(first - 1, segments[segments.length - 1]!.last_seq) : first - 1;
    for (;;) {
      const { results } = await env.DB.prepare(
        `SELECT ${AUDIT_COLUMNS.split(", ")
          .map((c) => `r.${c}`)
          .join(", ")}, s.prev_hash, s.hash FROM audit_records r LEFT JOIN audit_seals s ON s.seq = r.seq ` +
          "WHERE r.seq > ?1 AND r.seq <= ?2 ORDER BY r.seq LIMIT ?3",
      )
        .bind(after, last, VERIFY_PAGE)
        .all<SealedRow>();
      yield* results;
      if (results.length < VERIFY_PAGE) break;
      after = results[results.length - 1]!.seq;
    }
  }
  const result = await verifyRows(rows(), previous);
  const broken = result.broken ?? segmentProblem;
  return { from, to, ...result, valid: broken === null, broken };
}

/** The seal of the record before `seq` (in D1, or the end of its archived segment), or null at the chain's start. */
async function previousSeal(db: Database, seq: number): Promise<{ seq: number; hash: string } | null> {
  const row = await db
    .prepare(
      "SELECT seq, hash FROM audit_seals WHERE seq = ?1 " +
        "UNION ALL SELECT last_seq, last_hash FROM audit_segments WHERE last_seq = ?1 LIMIT 1",
    )
    .bind(seq - 1)
    .first<{ seq: number; hash: string }>();
  return row ?? null;
}

/** How a segment's records disagree with its index row (an object altered in R2), or null. */
function segmentMismatch(segment: SegmentRow, records: readonly SealedRow[]): string | null {
  const first = records[0];
  const last = records[records.length - 1];
  if (!first || !last || first.seq !== segment.first_seq || last.seq !== segment.last_seq || records.length !== segment.records)
    return `archived segment ${segment.object_key} does not hold records ${segment.first_seq} to ${segment.last_seq}`;
  if (first.prev_hash !== segment.prev_hash || first.hash !== segment.first_hash || last.hash !== segment.last_hash)
    return `archived segment ${segment.object_key} does not match the hashes its index keeps`;
  return null;
}
