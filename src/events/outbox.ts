/**
 * Platform events. A change and its event are written in one `db.batch()` (the outbox pattern), so
 * an event exists exactly when its change committed. The relay sends pending rows to the EVENTS
 * queue right after the request (waitUntil) and again from the minute cron, so a failed send is
 * retried; the consumer records each event id and ignores a redelivery.
 */
import type { Database } from "../db/statements";
import type { Bindings } from "../env";
import type { Logger } from "../pkg/logger";

/** What happened to the entity; alarms (issue 25) are `entered` and `left`. */
export type EventAction = "created" | "updated" | "deleted" | "entered" | "left";

export interface DomainEvent {
  id: string;
  entityKind: string;
  entityId: string;
  action: EventAction;
  occurredAt: string;
  actorId: string | null;
  requestId: string | null;
  payload: unknown;
}

export interface EventContext {
  actorId: string | null;
  requestId: string | null;
  now: string;
}

export interface EventInput {
  entityKind: string;
  entityId: string;
  action: EventAction;
  payload: unknown;
}

const INSERT_EVENT = "INSERT INTO outbox (id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id)";

function eventValues(ctx: EventContext, event: EventInput): unknown[] {
  return [
    crypto.randomUUID(),
    event.entityKind,
    event.entityId,
    event.action,
    JSON.stringify(event.payload ?? null),
    ctx.now,
    ctx.actorId,
    ctx.requestId,
  ];
}

/** The outbox insert for one event, to put in the same batch as the change it describes. */
export function outboxStatement(db: Database, ctx: EventContext, event: EventInput): D1PreparedStatement {
  return db.prepare(`${INSERT_EVENT} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`).bind(...eventValues(ctx, event));
}

/**
 * The outbox insert for a conditional write, so an event is written only when its change was:
 * - `{ table, etag }`: when the entity row (in `table`, our own constant) now carries `etag`, the
 *   fresh token this batch's guarded update set (use after an update whose WHERE names the old etag);
 * - `"previousChanged"`: when the statement just before it in the batch changed a row (a delete).
 */
export function guardedOutboxStatement(
  db: Database,
  ctx: EventContext,
  event: EventInput,
  guard: { table: string; etag: string } | "previousChanged",
): D1PreparedStatement {
  const values = eventValues(ctx, event);
  if (guard === "previousChanged") {
    return db.prepare(`${INSERT_EVENT} SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE changes() > 0`).bind(...values);
  }
  return db
    .prepare(
      `${INSERT_EVENT} SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (SELECT 1 FROM ${guard.table} WHERE id = ?3 AND etag = ?9)`,
    )
    .bind(...values, guard.etag);
}

interface OutboxRow {
  seq: number;
  id: string;
  entity_kind: string;
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
      .bind(new Date().toISOString(), first, last)
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
  for (const message of batch.messages) {
    const event = message.body;
    try {
      const seen = await env.DB.prepare("SELECT 1 AS seen FROM processed_events WHERE event_id = ?1").bind(event.id).first();
      if (!seen) {
        for (const handler of handlers) await handler(event, env, log);
        await env.DB.prepare("INSERT OR IGNORE INTO processed_events (event_id, processed_at) VALUES (?1, ?2)")
          .bind(event.id, new Date().toISOString())
          .run();
      }
      message.ack();
    } catch (error) {
      log.error("event handling failed", { eventId: event.id, attempts: message.attempts, error: String(error) });
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    }
  }
}
