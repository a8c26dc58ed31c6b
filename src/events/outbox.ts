/**
 * Platform events. A change and its event are written in one `db.batch()` (the outbox pattern), so
 * an event exists exactly when its change committed. The relay sends pending rows to the EVENTS
 * queue right after the request (waitUntil) and again from the minute cron, so a failed send is
 * retried; the consumer records each event id and ignores a redelivery.
 */
import { auditForRowsStatement, auditManyStatement, auditRecordStatement, auditState, type AuditContext } from "../audit/store";
import { jsonChunks, type Database } from "../db/statements";
import type { Bindings } from "../env";
import type { Logger } from "../pkg/logger";
import { platform } from "../platform/services";
import type { EntityKind, EventAction } from "./kinds";

export type { EntityKind, EventAction } from "./kinds";

export interface DomainEvent {
  id: string;
  entityKind: EntityKind;
  entityId: string;
  action: EventAction;
  occurredAt: string;
  actorId: string | null;
  requestId: string | null;
  payload: unknown;
}

/**
 * Who and when, for the events of one write: a request's, or background work's (its actor null, its
 * cause named); with what the audit trail records besides (src/audit/store.ts).
 */
export interface EventContext extends AuditContext {
  /** Mints the event ids (the request's or the platform's IdGenerator). */
  uuid(): string;
}

export interface EventInput {
  entityKind: EntityKind;
  entityId: string;
  action: EventAction;
  payload: unknown;
  /**
   * The payload names only what changed (a link, a flag): the audit trail merges it into the state
   * before (RFC 7396) to record the state after. Default: the payload is the entity's whole state.
   */
  partial?: boolean;
  /** The entity's ETag after the change, when the writer knows it (else the audit trail reads the row's token). */
  etag?: string;
  /** A link or unlink of another entity: what the audit trail records as the change of its list (src/audit/store.ts). */
  link?: { field: string; id: string; linked: boolean };
}

/**
 * When an event is written: always, or only when its change was:
 * - `{ table, etag }`: when the entity row (in `table`, our own constant) now carries `etag`, the
 *   fresh token this batch's guarded update set (use after an update whose WHERE names the old etag);
 * - `"previousChanged"`: when the statement just before it in the batch changed a row (a delete).
 */
export type EventGuard = { table: string; etag: string } | "previousChanged";

/** The outbox's columns as every event is written (the only INSERT INTO outbox in src/). */
const INSERT_EVENT = "INSERT INTO outbox (id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id)";

/**
 * The outbox insert of one event and its audit record (src/audit/store.ts), to put in the same batch
 * as the change they describe; with a `guard`, both are written only when the change was (see
 * {@link EventGuard}): the record follows its event, and is written when the event row exists.
 */
export function outboxStatements(db: Database, ctx: EventContext, event: EventInput, guard?: EventGuard): D1PreparedStatement[] {
  const id = ctx.uuid();
  const values = [
    id,
    event.entityKind,
    event.entityId,
    event.action,
    JSON.stringify(event.payload ?? null),
    ctx.now,
    ctx.actorId,
    ctx.requestId,
  ];
  const audit = (guardEtag?: string) => {
    const etag = event.etag ?? guardEtag;
    return auditRecordStatement(db, ctx, id, event, { guarded: guard !== undefined, ...(etag !== undefined ? { etag } : {}) });
  };
  if (guard === undefined) return [db.prepare(`${INSERT_EVENT} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`).bind(...values), audit()];
  if (guard === "previousChanged") {
    return [db.prepare(`${INSERT_EVENT} SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE changes() > 0`).bind(...values), audit()];
  }
  return [
    db
      .prepare(
        `${INSERT_EVENT} SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (SELECT 1 FROM ${guard.table} WHERE id = ?3 AND etag = ?9)`,
      )
      .bind(...values, guard.etag),
    audit(guard.etag),
  ];
}

/** {@link outboxStatements} with a guard (kept as its own name: the guard is the point at its call sites). */
export function guardedOutboxStatements(db: Database, ctx: EventContext, event: EventInput, guard: EventGuard): D1PreparedStatement[] {
  return outboxStatements(db, ctx, event, guard);
}

/** Outbox rows (and their audit records) for many events in as few statements as their payloads allow. */
export function outboxManyStatements(db: Database, ctx: EventContext, events: readonly EventInput[]): D1PreparedStatement[] {
  const rows = events.map((e) => ({
    id: ctx.uuid(),
    kind: e.entityKind,
    entity: e.entityId,
    action: e.action,
    payload: JSON.stringify(e.payload ?? null),
    state: e.action === "deleted" ? null : auditState(e.payload),
    partial: e.partial === true,
  }));
  const statements: D1PreparedStatement[] = [];
  for (const json of jsonChunks(rows)) {
    statements.push(
      db
        .prepare(
          `${INSERT_EVENT} SELECT json_extract(value, '$.id'), json_extract(value, '$.kind'), json_extract(value, '$.entity'), ` +
            "json_extract(value, '$.action'), json_extract(value, '$.payload'), ?2, ?3, ?4 FROM json_each(?1)",
        )
        .bind(json, ctx.now, ctx.actorId, ctx.requestId),
      auditManyStatement(db, ctx, json),
    );
  }
  return statements;
}

/**
 * Outbox rows (and their audit records) for the entities a statement earlier in the same batch
 * changed, one per row `rows` selects: its trusted SQL (the owner's own) yields `entity_id` and
 * `payload` (JSON text) and binds its own values as ?1...?n. Each event's id is one id from the
 * IdGenerator and the entity's id, so the ids come from the seam and stay one per entity.
 */
export function outboxForRowsStatements(
  db: Database,
  ctx: EventContext,
  event: { entityKind: EntityKind; action: EventAction },
  rows: { sql: string; bindings: readonly unknown[] },
): D1PreparedStatement[] {
  const n = rows.bindings.length;
  const prefix = ctx.uuid();
  return [
    db
      .prepare(
        `${INSERT_EVENT} SELECT ?${n + 1} || ':' || r.entity_id, ?${n + 2}, r.entity_id, ?${n + 3}, r.payload, ` +
          `?${n + 4}, ?${n + 5}, ?${n + 6} FROM (${rows.sql}) r`,
      )
      .bind(...rows.bindings, prefix, event.entityKind, event.action, ctx.now, ctx.actorId, ctx.requestId),
    auditForRowsStatement(db, ctx, prefix, event, rows),
  ];
}

/**
 * The event context of background work: no actor, no request, the platform's time and ids; the
 * audit trail names the service as the actor and `cause` as what it was doing.
 */
export function serviceEventContext(cause: string, now: string = platform().clock.now().toISOString()): EventContext {
  return {
    actorId: null,
    actorType: "service",
    actorName: "integrity-edge",
    cause,
    requestId: null,
    now,
    uuid: () => platform().ids.uuid(),
  };
}

interface OutboxRow {
  seq: number;
  id: string;
  entity_kind: EntityKind;
  entity_id: string;
  action: EventAction;
  payload: string;
  occurred_at: string;
  actor_id: string | null;
  request_id: string | null;
}

const RELAY_BATCH = 100;

/**
 * Sends undispatched events to the queue in commit order and marks them dispatched. Safe to run
 * concurrently: a row sent twice is deduplicated by the consumer.
 */
export async function relayOutbox(env: Bindings, log: Logger, maxRounds = 10): Promise<number> {
  let sent = 0;
  for (let round = 0; round < maxRounds; round++) {
    const { results } = await env.DB.prepare(
      "SELECT seq, id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id FROM outbox WHERE " +
        "dispatched_at IS NULL ORDER BY seq LIMIT ?1",
    )
      .bind(RELAY_BATCH)
      .all<OutboxRow>();
    if (results.length === 0) break;
    const events: DomainEvent[] = results.map((r) => ({
      id: r.id,
      entityKind: r.entity_kind,
      entityId: r.entity_id,
      action: r.action,
      occurredAt: r.occurred_at,
      actorId: r.actor_id,
      requestId: r.request_id,
      payload: JSON.parse(r.payload) as unknown,
    }));
    await env.EVENTS.sendBatch(events.map((body) => ({ body, contentType: "json" as const })));
    const first = results[0]!.seq;
    const last = results[results.length - 1]!.seq;
    await env.DB.prepare("UPDATE outbox SET dispatched_at = ?1 WHERE seq BETWEEN ?2 AND ?3 AND dispatched_at IS NULL")
      .bind(platform().clock.now().toISOString(), first, last)
      .run();
    sent += results.length;
    if (results.length < RELAY_BATCH) break;
  }
  if (sent > 0) log.debug("outbox relayed", { sent });
  return sent;
}

/** Dispatched events are kept this long for diagnosis, then removed by the cron. */
export const OUTBOX_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export async function pruneOutbox(env: Bindings, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - OUTBOX_RETENTION_MS).toISOString();
  await env.DB.batch([
    env.DB.prepare("DELETE FROM outbox WHERE dispatched_at IS NOT NULL AND dispatched_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM processed_events WHERE processed_at < ?1").bind(cutoff),
  ]);
}

/** A subscriber to platform events (search indexing will be one). It must tolerate replays. */
export type EventHandler = (event: DomainEvent, env: Bindings, log: Logger) => Promise<void>;

/**
 * Handles one delivered batch: each event runs its handlers once; an event id seen before is
 * acknowledged without running them again. A failing event is retried by the queue alone.
 */
export async function consumeEvents(
  batch: MessageBatch<DomainEvent>,
  env: Bindings,
  log: Logger,
  handlers: readonly EventHandler[],
): Promise<void> {
  const handle = async (message: Message<DomainEvent>) => {
    const event = message.body;
    try {
      const seen = await env.DB.prepare("SELECT 1 AS seen FROM processed_events WHERE event_id = ?1").bind(event.id).first();
      if (!seen) {
        for (const handler of handlers) await handler(event, env, log);
        await env.DB.prepare("INSERT OR IGNORE INTO processed_events (event_id, processed_at) VALUES (?1, ?2)")
          .bind(event.id, platform().clock.now().toISOString())
          .run();
      }
      message.ack();
    } catch (error) {
      log.error("event handling failed", { eventId: event.id, attempts: message.attempts, error: String(error) });
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    }
  };
  // One lane per entity, its events in the order they came; up to EVENT_LANES lanes at once, so a burst of
  // one user's events (an import's thousand deviations) is worked through in parallel instead of one by one
  // in front of everyone else's webhooks and index updates.
  const lanes = new Map<string, Message<DomainEvent>[]>();
  for (const message of batch.messages) {
    const key = `${message.body.entityKind}:${message.body.entityId}`;
    const lane = lanes.get(key);
    if (lane) lane.push(message);
    else lanes.set(key, [message]);
  }
  const queue = [...lanes.values()];
  const worker = async () => {
    for (let lane = queue.shift(); lane; lane = queue.shift()) for (const message of lane) await handle(message);
  };
  await Promise.all(Array.from({ length: Math.min(EVENT_LANES, queue.length) }, worker));
}

/** Entities whose events one queue batch works on at once (each entity's events stay in order). */
const EVENT_LANES = 8;
