/**
 * Deliveries: one row per (subscription, event), made by the fan-out from the outbox's queue consumer
 * and sent by the WEBHOOKS queue's consumer (./sender.ts). The unique key (subscription_id, event_id)
 * makes a redelivered or re-handled event make no second delivery; a delivery row not yet handed to
 * the queue (`enqueued_at` null) is handed over by the next run of the same event, or by the sweep.
 */
import { tableStatements, type Database, type Insert } from "../db/statements";
import { webhookDeliveries } from "../db/schema";
import { platform } from "../platform/services";
import { configOf } from "../config";
import type { z } from "@hono/zod-openapi";
import type { Bindings } from "../env";
import type { DomainEvent } from "../events/outbox";
import { ApiError, notFound } from "../pkg/errors";
import type { Logger } from "../pkg/logger";
import { compileListQuery, defineList, enumCondition, inList, noProperties, runListQuery, splitCsv, type Condition } from "../pkg/query";
import { searchCondition } from "../pkg/query/params";
import { eventType } from "./catalogue";
import { webhookBody } from "./payload";
import { DELIVERY_STATUSES, type Delivery, type DeliveryListQuery, type DeliveryStatus, type StoredFilter } from "./schema";

/** What the WEBHOOKS queue carries: which delivery, and which round of it (a redelivery starts a new one). */
export interface DeliveryMessage {
  deliveryId: string;
  round: number;
}

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  entity_kind: string;
  entity_id: string;
  occurred_at: string;
  payload: string;
  truncated: number;
  status: DeliveryStatus;
  attempts: number;
  round: number;
  round_attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_response_excerpt: string | null;
  last_error: string | null;
  delivered_at: string | null;
  redelivered_at: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS =
  "d.id, d.subscription_id, d.event_id, d.event_type, d.entity_kind, d.entity_id, d.occurred_at, d.truncated, " +
  "d.status, d.attempts, d.round, d.round_attempts, " +
  "d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_response_excerpt, d.last_error, " +
  "d.delivered_at, d.redelivered_at, d.created_at, d.updated_at";

export function toDelivery(row: Omit<DeliveryRow, "payload">): Delivery {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type,
    entityKind: row.entity_kind,
    entityId: row.entity_id,
    occurredAt: row.occurred_at,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    lastResponse: row.last_attempt_at
      ? { statusCode: row.last_status_code, excerpt: row.last_response_excerpt, error: row.last_error }
      : null,
    deliveredAt: row.delivered_at,
    redeliveredAt: row.redelivered_at,
    truncated: row.truncated === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const deliveryList = defineList({
  table: "webhook_deliveries",
  alias: "d",
  entityKind: "webhookDelivery",
  idColumn: "id",
  fields: {
    createdAt: { column: "d.created_at", type: "datetime" },
    updatedAt: { column: "d.updated_at", type: "datetime" },
    status: { column: "d.status" },
    attempts: { column: "d.attempts", type: "number" },
    eventType: { column: "d.event_type" },
    lastAttemptAt: { column: "d.last_attempt_at", type: "datetime" },
  },
  searchColumns: ["d.event_type", "d.entity_id", "d.event_id"],
  defaultOrder: "createdAt desc",
  select: COLUMNS,
});

export async function listDeliveries(
  db: Database,
  subscriptionId: string,
  query: z.infer<typeof DeliveryListQuery>,
): Promise<{ items: Delivery[]; total: number | undefined }> {
  const conditions: Condition[] = [(v) => `d.subscription_id = ${v.value(subscriptionId)}`];
  const search = searchCondition(deliveryList, query.searchText);
  if (search) conditions.push(search);
  conditions.push(...enumCondition(query.statuses, DELIVERY_STATUSES, "query.statuses", "d.status", "a delivery status"));
  const types = splitCsv(query.eventTypes);
  if (types.length > 0) conditions.push(inList("d.event_type", types));
  const compiled = await compileListQuery(deliveryList, query, noProperties, conditions);
  const { items, total } = await runListQuery<DeliveryRow>(db, compiled);
  return { items: items.map(toDelivery), total };
}

export async function getDelivery(db: Database, subscriptionId: string, id: string): Promise<Delivery & { payload: unknown }> {
  const row = await db
    .prepare(`SELECT ${COLUMNS}, d.payload FROM webhook_deliveries d WHERE d.id = ?1 AND d.subscription_id = ?2`)
    .bind(id, subscriptionId)
    .first<DeliveryRow>();
  if (!row) throw notFound("Delivery", id);
  return { ...toDelivery(row), payload: JSON.parse(row.payload) as unknown };
}

/** Whether one stored filter wants the event (kind, action, and the entity's status when it names some). */
export function filterMatches(filter: StoredFilter, event: Pick<DomainEvent, "entityKind" | "action" | "payload">): boolean {
  if (filter.entityKind !== event.entityKind) return false;
  if (filter.action !== null && filter.action !== event.action) return false;
  if (filter.statuses === null) return true;
  const status = (event.payload as { status?: unknown } | null)?.status;
  return typeof status === "string" && filter.statuses.includes(status);
}

/** Most delivery rows written in one batch, and messages in one sendBatch (the queue takes 100). */
const CHUNK = 50;

/**
 * The outbox event handler (registered in src/handlers.ts): a delivery for each enabled subscription
 * whose filters match the event, then one queue message for each delivery not yet handed over. Safe
 * to run again for the same event: the unique key keeps one delivery per subscription.
 */
export async function fanOutEvent(event: DomainEvent, env: Bindings, log: Logger): Promise<void> {
  const { results } = await env.DB.prepare(
    `SELECT s.id, s.filters FROM webhook_subscriptions s
     WHERE s.enabled = 1 AND EXISTS (SELECT 1 FROM webhook_subscription_filters f WHERE f.subscription_id = s.id AND
     f.entity_kind = ?1 AND f.action IN (?2, '*'))`,
  )
    .bind(event.entityKind, event.action)
    .all<{ id: string; filters: string }>();
  const matching = results.filter((s) => (JSON.parse(s.filters) as StoredFilter[]).some((f) => filterMatches(f, event)));
  if (matching.length === 0) return;
  const body = webhookBody(event, configOf(env).PUBLIC_API_URL ?? "");
  const now = platform().clock.now().toISOString();
  const type = eventType(event.entityKind, event.action);
  for (let i = 0; i < matching.length; i += CHUNK) {
    await env.DB.batch(
      matching.slice(i, i + CHUNK).map((s) =>
        insertDeliveryStatement(env.DB, {
          id: platform().ids.uuid(),
          subscriptionId: s.id,
          eventId: event.id,
          eventType: type,
          entityKind: event.entityKind,
          entityId: event.entityId,
          occurredAt: event.occurredAt,
          payload: body.text,
          truncated: body.truncated,
          status: "pending",
          attempts: 0,
          round: 0,
          roundAttempts: 0,
          nextAttemptAt: now,
          createdAt: now,
          updatedAt: now,
        }),
      ),
    );
  }
  await enqueuePending(env, "event_id = ?1", [event.id]);
  log.debug("webhook deliveries made", { eventId: event.id, subscriptions: matching.length, truncated: body.truncated });
}

/** Hands the pending deliveries that `where` selects (and that no message carries yet) to the queue. */
async function enqueuePending(env: Bindings, where: string, bindings: unknown[]): Promise<number> {
  const { results } = await env.DB.prepare(
    `SELECT id, round FROM webhook_deliveries WHERE ${where} AND status = 'pending' AND enqueued_at IS NULL LIMIT 500`,
  )
    .bind(...bindings)
    .all<{ id: string; round: number }>();
  for (let i = 0; i < results.length; i += CHUNK) {
    const chunk = results.slice(i, i + CHUNK);
    await env.WEBHOOKS.sendBatch(
      chunk.map((d) => ({ body: { deliveryId: d.id, round: d.round } satisfies DeliveryMessage, contentType: "json" as const })),
    );
    await env.DB.prepare(
      "UPDATE webhook_deliveries SET enqueued_at = ?1 WHERE id IN (SELECT value FROM json_each(?2)) AND enqueued_at IS NULL",
    )
      .bind(platform().clock.now().toISOString(), JSON.stringify(chunk.map((d) => d.id)))
      .run();
  }
  return results.length;
}

/**
 * Sends one delivery again, now, in a new round: the same body and `webhook-id`, a fresh signature
 * and timestamp, and the full backoff schedule again. Refused while the subscription is disabled.
 */
export async function redeliver(env: Bindings, subscriptionId: string, id: string, now: string): Promise<Delivery> {
  const row = await env.DB.prepare(
    `SELECT d.round, s.enabled, s.disabled_reason FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = ` +
      `d.subscription_id WHERE d.id = ?1 AND d.subscription_id = ?2`,
  )
    .bind(id, subscriptionId)
    .first<{ round: number; enabled: number; disabled_reason: string | null }>();
  if (!row) throw notFound("Delivery", id);
  if (row.enabled !== 1) {
    throw new ApiError(
      "Conflict",
      `Subscription ${subscriptionId} is disabled${row.disabled_reason ? ` (${row.disabled_reason})` : ""}; enable it ` +
        `(PUT /Subscriptions with enabled true) before redelivering.`,
    );
  }
  const round = row.round + 1;
  const updated = await env.DB.prepare(
    `UPDATE webhook_deliveries SET status = 'pending', round = ?1, round_attempts = 0, next_attempt_at = ?2, lease_until =
    NULL, enqueued_at = NULL, redelivered_at = ?2, updated_at = ?2
     WHERE id = ?3 AND round = ?4`,
  )
    .bind(round, now, id, row.round)
    .run();
  if (updated.meta.changes !== 1)
    throw new ApiError("Conflict", `Delivery ${id} was redelivered by someone else at the same moment; read it again.`);
  await enqueuePending(env, "id = ?1", [id]);
  return toDelivery((await env.DB.prepare(`SELECT ${COLUMNS} FROM webhook_deliveries d WHERE d.id = ?1`).bind(id).first<DeliveryRow>())!);
}

/** Deliveries are kept this long after they were made, then removed by the cron. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** A pending or retrying delivery this far past its time has lost its message: it is handed over again. */
export const STUCK_AFTER_MS = 15 * 60 * 1000;

/**
 * The minute cron's share: re-enqueue deliveries whose message was lost (never handed over, or long
 * past their next attempt with no consumer holding them), and prune old deliveries.
 */
export async function sweepDeliveries(env: Bindings, now: Date, log: Logger): Promise<void> {
  const nowIso = now.toISOString();
  const stuckBefore = new Date(now.getTime() - STUCK_AFTER_MS).toISOString();
  // Lost messages: make them pending and unqueued again, in their current round.
  const lost = await env.DB.prepare(
    `UPDATE webhook_deliveries SET status = 'pending', enqueued_at = NULL, next_attempt_at = ?1, updated_at = ?1
     WHERE status IN ('pending', 'retrying') AND coalesce(next_attempt_at, created_at) < ?2 AND (lease_until IS NULL OR lease_until < ?1)
       AND id IN (SELECT id FROM webhook_deliveries WHERE status IN ('pending', 'retrying') AND coalesce(next_attempt_at,
       created_at) < ?2 LIMIT 200)`,
  )
    .bind(nowIso, stuckBefore)
    .run();
  const requeued = await enqueuePending(env, "next_attempt_at = ?1", [nowIso]);
  // Pending rows of a fan-out that stopped between its insert and its send.
  const unsent = await enqueuePending(env, "created_at < ?1", [new Date(now.getTime() - 60_000).toISOString()]);
  const cutoff = new Date(now.getTime() - DELIVERY_RETENTION_MS).toISOString();
  await env.DB.prepare("DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < ?1 LIMIT 1000)")
    .bind(cutoff)
    .run();
  if (lost.meta.changes > 0 || unsent > 0)
    log.warn("webhook deliveries handed to the queue again", { lost: lost.meta.changes, requeued, unsent });
}

// --- Statements ----------------------------------------------------------------------------------------

const deliveryTable = tableStatements(webhookDeliveries);

/** A new delivery; one per subscription and event, so a second fan-out of an event changes nothing. */
export function insertDeliveryStatement(db: Database, values: Insert<typeof webhookDeliveries>): D1PreparedStatement {
  return deliveryTable.insertOrIgnore(db, values);
}

// --- Statements of an attempt (the sender's) ----------------------------------------------------------

type DeliveryRound = { id: string; round: number };

/** Claims a delivery of this round for one attempt until `until`, unless another copy of its message holds it. */
export function claimDeliveryStatement(db: Database, delivery: DeliveryRound, lease: { until: string; now: string }): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE webhook_deliveries SET lease_until = ?1 WHERE id = ?2 AND round = ?3 AND status IN ('pending', ` +
        `'retrying') AND (lease_until IS NULL OR lease_until <= ?4)`,
    )
    .bind(lease.until, delivery.id, delivery.round, lease.now);
}

/** Puts off a claimed delivery of this round until `nextAttemptAt`, without an attempt (its receiver is busy failing). */
export function deferDeliveryStatement(
  db: Database,
  delivery: DeliveryRound,
  change: { nextAttemptAt: string; now: string },
): D1PreparedStatement {
  return db
    .prepare("UPDATE webhook_deliveries SET next_attempt_at = ?1, lease_until = NULL, updated_at = ?2 WHERE id = ?3 AND round = ?4")
    .bind(change.nextAttemptAt, change.now, delivery.id, delivery.round);
}

/** Records an attempt of this round: what came back, and what happens next (succeeded, retrying, or dead-lettered). */
export function recordAttemptStatement(
  db: Database,
  delivery: DeliveryRound,
  attempt: {
    status: "succeeded" | "retrying" | "deadLettered";
    attempts: number;
    at: string;
    answer: { statusCode: number | null; excerpt: string | null };
    error: string | null;
    nextAttemptAt: string | null;
  },
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE webhook_deliveries SET status = ?1, attempts = attempts + 1, round_attempts = ?2, last_attempt_at = ?3,
         last_status_code = ?4, last_response_excerpt = ?5, last_error = ?6, next_attempt_at = ?7, lease_until = NULL, updated_at = ?3,
         delivered_at = CASE WHEN ?1 = 'succeeded' THEN ?3 ELSE delivered_at END
       WHERE id = ?8 AND round = ?9`,
    )
    .bind(
      attempt.status,
      attempt.attempts,
      attempt.at,
      attempt.answer.statusCode,
      attempt.answer.excerpt,
      attempt.error,
      attempt.nextAttemptAt,
      delivery.id,
      delivery.round,
    );
}

/**
 * Dead-letters a delivery of this round with a reason: keeping the last answer's time when
 * `keepAnswer`, and only while it is still pending or retrying when `onlyIfActive`.
 */
export function deadLetterStatement(
  db: Database,
  delivery: DeliveryRound,
  options: { reason: string; now: string; keepAnswer: boolean; onlyIfActive: boolean },
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE webhook_deliveries SET status = 'deadLettered', last_error = ?1, last_attempt_at = CASE WHEN ?5 THEN
         last_attempt_at ELSE coalesce(last_attempt_at, ?2) END, next_attempt_at = NULL, lease_until = NULL, updated_at = ?2
       WHERE id = ?3 AND round = ?4${options.onlyIfActive ? " AND status IN ('pending', 'retrying')" : ""}`,
    )
    .bind(options.reason, options.now, delivery.id, delivery.round, options.keepAnswer ? 1 : 0);
}
