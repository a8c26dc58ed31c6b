/**
 * The audit trail's tables (issue 34; docs/decisions.md, "The audit trail"): the one module that
 * writes audit_records, audit_seals, audit_segments and audit_archived_entities. The outbox builders
 * (src/events/outbox.ts) compose {@link auditRecordStatement} and {@link auditForRowsStatement}, so every
 * event is written with its audit record, in the same batch and under the same guard; the cron's
 * sealing (./chain.ts) and archiving (./archive.ts) compose the others.
 *
 * A record holds the entity's state after the change (the event's payload, redacted as webhooks
 * redact it) and before it: the `after` of the entity's previous record, read inside the insert (in
 * D1, or of its last archived record), so a write pays no extra read for it.
 */
import { auditSegments } from "../db/schema";
import { jsonChunks, tableStatements, type Database } from "../db/statements";
import type { EntityKind, EventAction } from "../events/kinds";
import { redact } from "../subscriptions/payload";

/** Who made a change: a person's token, a machine client's token, or the service itself. */
export type ActorType = "user" | "client" | "service";

/** What an audit record carries besides the event: who, why, under which request. */
export interface AuditContext {
  now: string;
  actorId: string | null;
  actorName?: string | null;
  /** Absent: a request's user when it names an actor, else the service. */
  actorType?: ActorType;
  /** Work of the service: what it was doing (`monitoring loop`, `alarm timers`...). */
  cause?: string | null;
  requestId: string | null;
  /** The caller's Audit-Reason header. */
  reason?: string | null;
}

/**
 * Where a kind's rows (and their ETag tokens) live: the version after a change is read from the
 * row, in the same batch, right after the change wrote it.
 */
const ETAG_TABLES: Partial<Record<EntityKind, string>> = {
  activity: "activities",
  activityTemplate: "activity_templates",
  activityType: "activity_types",
  alarm: "monitor_alarms",
  asset: "assets",
  category: "categories",
  channel: "channels",
  channelAvailability: "channel_catalogue",
  channelType: "channel_catalogue",
  classification: "classifications",
  dataOrigin: "channel_catalogue",
  dataType: "data_types",
  deviation: "deviations",
  entityType: "entity_types",
  file: "files",
  job: "jobs",
  jobOutput: "job_outputs",
  jobConfiguration: "job_configurations",
  media: "medias",
  mediaReference: "media_references",
  model: "models",
  modelDefinition: "model_definitions",
  monitor: "monitors",
  outputType: "output_types",
  propertyDefinition: "property_definitions",
  searchIndex: "search_indices",
  searchQuery: "search_queries",
  subscription: "webhook_subscriptions",
  userStatus: "user_statuses",
  workItem: "work_items",
  workTemplate: "work_templates",
};

const INSERT_RECORD =
  "INSERT INTO audit_records (event_id, occurred_at, entity_kind, entity_id, action, etag, actor_type, actor_id, actor_name, " +
  "cause, request_id, reason, before, after)";

/**
 * The entity's latest recorded state, SQL over the entity's kind and id expressions: its newest
 * record in D1, or when its records have all been archived, the last state the archive kept.
 */
const beforeOf = (kind: string, id: string) =>
  `(SELECT s FROM (SELECT after AS s, seq FROM audit_records WHERE entity_kind = ${kind} AND entity_id = ${id} ` +
  `UNION ALL SELECT last_after, last_seq FROM audit_archived_entities WHERE entity_kind = ${kind} AND entity_id = ${id}) ` +
  "ORDER BY seq DESC LIMIT 1)";

const etagOf = (kind: EntityKind, action: EventAction, id: string) => {
  const table = ETAG_TABLES[kind];
  return action === "deleted" || !table ? "NULL" : `(SELECT etag FROM ${table} WHERE id = ${id} LIMIT 1)`;
};

/**
 * The state after, SQL: none after a deletion; a payload that names only what changed (`partial`)
 * merged into the state before (RFC 7396, SQLite's json_patch); else the payload as it is.
 */
const afterOf = (action: EventAction, partial: boolean, payload: string, before: string) =>
  action === "deleted" ? "NULL" : partial ? `json_patch(coalesce(${before}, '{}'), ${payload})` : payload;

const FIELD = /^[A-Za-z][A-Za-z0-9]*$/;

/** The state before (`b.s`) with an id added to or removed from one of its lists, SQL. */
function linkedAfter(link: { field: string; linked: boolean }, id: string): string {
  if (!FIELD.test(link.field)) throw new Error(`not a field name: ${link.field}`);
  const path = `'$.${link.field}'`;
  return (
    `json_set(coalesce(b.s, '{}'), ${path}, json((SELECT json_group_array(v) FROM (SELECT value AS v FROM ` +
    `json_each(coalesce(b.s, '{}'), ${path}) WHERE value <> ${id}${link.linked ? ` UNION ALL SELECT ${id}` : ""}))))`
  );
}

export const actorTypeOf = (ctx: AuditContext): ActorType => ctx.actorType ?? (ctx.actorId ? "user" : "service");

/** The redacted JSON of a state: run option values, tokens, secrets never reach the trail. */
export const auditState = (payload: unknown): string => JSON.stringify(redact(payload ?? null));

export interface AuditedEvent {
  entityKind: EntityKind;
  entityId: string;
  action: EventAction;
  payload: unknown;
  /** The payload names only what changed (merged into the state before); default: it is the whole state. */
  partial?: boolean;
  /**
   * A link or unlink: the state after is the state before with `id` added to (or removed from) its
   * list `field` (e.g. a deviation's `workItemIds`); the payload, which names the link, is not a state.
   */
  link?: { field: string; id: string; linked: boolean };
}

/**
 * The audit record of one event, to follow its outbox insert in the batch. `guarded`: written only
 * when the event was (its outbox row `eventId` exists), so a guarded change that did not happen leaves
 * neither. `etag`: the version after, when the caller knows it (a guarded update's fresh token).
 */
export function auditRecordStatement(
  db: Database,
  ctx: AuditContext,
  eventId: string,
  event: AuditedEvent,
  options: { guarded: boolean; etag?: string },
): D1PreparedStatement {
  const deleted = event.action === "deleted";
  const values: unknown[] = [
    eventId,
    ctx.now,
    event.entityKind,
    event.entityId,
    event.action,
    actorTypeOf(ctx),
    ctx.actorId,
    ctx.actorName ?? null,
    ctx.cause ?? null,
    ctx.requestId,
    ctx.reason ?? null,
  ];
  // D1 refuses a bound value its SQL does not use: a deletion binds neither a state nor a version.
  const param = (value: unknown) => `?${values.push(value)}`;
  const after = deleted
    ? "NULL"
    : event.link
      ? linkedAfter(event.link, param(event.link.id))
      : afterOf(event.action, event.partial === true, param(auditState(event.payload)), "b.s");
  const etag = deleted ? "NULL" : options.etag !== undefined ? param(options.etag) : etagOf(event.entityKind, event.action, "?4");
  const sql =
    `${INSERT_RECORD} SELECT ?1, ?2, ?3, ?4, ?5, ${etag}, ?6, ?7, ?8, ?9, ?10, ?11, b.s, ${after} ` +
    `FROM (SELECT ${beforeOf("?3", "?4")} AS s) b` +
    (options.guarded ? " WHERE EXISTS (SELECT 1 FROM outbox WHERE id = ?1)" : "");
  return db.prepare(sql).bind(...values);
}

/**
 * The audit records of the events an outbox insert wrote for the rows `rows` selects (its owner's
 * trusted SQL yielding `entity_id` and `payload`, binding ?1...?n), each event id `eventIdPrefix:entity_id`.
 * Written only for the events that were (their outbox rows exist). The payloads come from the owner's
 * columns in SQL, so they are what the owner chose to publish: no run options nor secrets are among them.
 */
export function auditForRowsStatement(
  db: Database,
  ctx: AuditContext,
  eventIdPrefix: string,
  event: { entityKind: EntityKind; action: EventAction },
  rows: { sql: string; bindings: readonly unknown[] },
): D1PreparedStatement {
  const n = rows.bindings.length;
  const p = (i: number) => `?${n + i}`;
  const before = beforeOf(p(2), "r.entity_id");
  return db
    .prepare(
      `${INSERT_RECORD} SELECT ${p(1)} || ':' || r.entity_id, ${p(3)}, ${p(2)}, r.entity_id, ${p(4)}, ` +
        `${etagOf(event.entityKind, event.action, "r.entity_id")}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)}, ` +
        `${before}, ${afterOf(event.action, false, "r.payload", "")} FROM (${rows.sql}) r ` +
        `WHERE EXISTS (SELECT 1 FROM outbox WHERE id = ${p(1)} || ':' || r.entity_id)`,
    )
    .bind(
      ...rows.bindings,
      eventIdPrefix,
      event.entityKind,
      ctx.now,
      event.action,
      actorTypeOf(ctx),
      ctx.actorId,
      ctx.actorName ?? null,
      ctx.cause ?? null,
      ctx.requestId,
      ctx.reason ?? null,
    );
}

/**
 * The audit records of many events written by one outbox statement (`events`: JSON rows with `id`,
 * `kind`, `entity`, `action`, `state` (the redacted state, null after a deletion) and `partial`).
 * Each is written when its outbox row exists. Within one such statement no record sees another as
 * its before (SQLite reads the statement's SELECT before it inserts): the builders never carry two
 * events of one entity in one statement.
 */
export function auditManyStatement(db: Database, ctx: AuditContext, json: string): D1PreparedStatement {
  const kind = "json_extract(value, '$.kind')";
  const id = "json_extract(value, '$.entity')";
  const before = beforeOf(kind, id);
  const state = "json_extract(value, '$.state')";
  return db
    .prepare(
      `${INSERT_RECORD} SELECT json_extract(value, '$.id'), ?2, ${kind}, ${id}, json_extract(value, '$.action'), ` +
        `CASE WHEN json_extract(value, '$.action') = 'deleted' THEN NULL ELSE ${etagCase(kind, id)} END, ` +
        `?3, ?4, ?5, ?6, ?7, ?8, ${before}, ` +
        `CASE WHEN json_extract(value, '$.action') = 'deleted' THEN NULL WHEN json_extract(value, '$.partial') THEN ` +
        `json_patch(coalesce(${before}, '{}'), ${state}) ELSE ${state} END ` +
        "FROM json_each(?1) WHERE EXISTS (SELECT 1 FROM outbox WHERE id = json_extract(value, '$.id'))",
    )
    .bind(json, ctx.now, actorTypeOf(ctx), ctx.actorId, ctx.actorName ?? null, ctx.cause ?? null, ctx.requestId, ctx.reason ?? null);
}

/** The ETag token of a row whose kind is only known in SQL. */
function etagCase(kind: string, id: string): string {
  const arms = Object.entries(ETAG_TABLES).map(([k, table]) => `WHEN '${k}' THEN (SELECT etag FROM ${table} WHERE id = ${id} LIMIT 1)`);
  return `CASE ${kind} ${arms.join(" ")} ELSE NULL END`;
}

/** The seals of records, in order (src/audit/chain.ts computed them); a seal already there stays. */
export function sealStatements(db: Database, seals: readonly { seq: number; prevHash: string; hash: string }[], now: string) {
  return jsonChunks(seals).map((json) =>
    db
      .prepare(
        "INSERT OR IGNORE INTO audit_seals (seq, prev_hash, hash, sealed_at) SELECT json_extract(value, '$.seq'), " +
          "json_extract(value, '$.prevHash'), json_extract(value, '$.hash'), ?2 FROM json_each(?1)",
      )
      .bind(json, now),
  );
}

/** What the index of the archive keeps of one segment (its records are in R2 under `objectKey`). */
export interface SegmentValues {
  firstSeq: number;
  lastSeq: number;
  day: string;
  records: number;
  firstAt: string;
  lastAt: string;
  prevHash: string;
  firstHash: string;
  lastHash: string;
  objectKey: string;
  bytes: number;
  archivedAt: string;
}

const segmentTable = tableStatements(auditSegments);

/**
 * Moves the records `firstSeq`...`lastSeq` out of D1 once their segment is in R2: the segment's index
 * row, each archived entity's segment and last state (the `before` of its next change), then the
 * records and their seals. One batch: D1 never holds both, nor neither.
 */
export function archiveSegmentStatements(db: Database, segment: SegmentValues): D1PreparedStatement[] {
  return [
    segmentTable.insert(db, segment),
    db
      .prepare(
        "INSERT OR REPLACE INTO audit_archived_entities (entity_kind, entity_id, first_seq, last_seq, last_after) " +
          "SELECT r.entity_kind, r.entity_id, ?1, max(r.seq), (SELECT l.after FROM audit_records l WHERE l.entity_kind = r.entity_kind " +
          "AND l.entity_id = r.entity_id AND l.seq BETWEEN ?1 AND ?2 ORDER BY l.seq DESC LIMIT 1) " +
          "FROM audit_records r WHERE r.seq BETWEEN ?1 AND ?2 GROUP BY r.entity_kind, r.entity_id",
      )
      .bind(segment.firstSeq, segment.lastSeq),
    db.prepare("DELETE FROM audit_records WHERE seq BETWEEN ?1 AND ?2").bind(segment.firstSeq, segment.lastSeq),
    db.prepare("DELETE FROM audit_seals WHERE seq BETWEEN ?1 AND ?2").bind(segment.firstSeq, segment.lastSeq),
  ];
}

/** Forgets a segment past the archive's life (its object removed from R2 first). */
export function expireSegmentStatements(db: Database, firstSeq: number): D1PreparedStatement[] {
  return [db.prepare("DELETE FROM audit_archived_entities WHERE first_seq = ?1").bind(firstSeq), segmentTable.delete(db, { firstSeq })];
}

/** Whether an entity of a kind with a table of its own exists now (its history may predate the trail). */
export async function entityExists(db: Database, kind: EntityKind, id: string): Promise<boolean> {
  const table = ETAG_TABLES[kind];
  if (!table) return false;
  return (await db.prepare(`SELECT 1 AS found FROM ${table} WHERE id = ?1 LIMIT 1`).bind(id).first()) !== null;
}
