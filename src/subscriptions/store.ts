/**
 * Webhook subscriptions in D1, on the resource contract (src/pkg/resource.ts): versioned reads,
 * If-Match checked inside the write, the outbox event guarded in the same batch. The secret is sealed
 * before it is written and never read back here, except by the sender (src/subscriptions/sender.ts).
 */
import { tableStatements, type Database } from "../db/statements";
import { webhookSubscriptions } from "../db/schema";
import type { z } from "@hono/zod-openapi";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import type { Principal } from "../pkg/auth";
import { newEtagToken, parseJson, runBatch, type WriteContext } from "../pkg/db";
import { ApiError, invalid, notFound, type FieldProblem } from "../pkg/errors";
import { compileListQuery, defineList, noProperties, runListQuery, splitCsv, type Condition } from "../pkg/query";
import { searchCondition } from "../pkg/query/params";
import { assertVersion, commitVersioned, type Versioned, retryWrite } from "../pkg/resource";
import { EVENT_KINDS, eventKindOf } from "./catalogue";
import type { Filter, StoredFilter, Subscription, SubscriptionInput, SubscriptionListQuery } from "./schema";
import { newSigningSecret, sealSecret } from "./secret";
import { checkTarget, type TargetSettings } from "./targets";

export const SUBSCRIPTION_KIND = "subscription";

interface SubscriptionRow {
  id: string;
  url: string;
  description: string | null;
  filters: string;
  enabled: number;
  disabled_reason: string | null;
  disabled_at: string | null;
  secret_rotated_at: string;
  etag: string;
  created_at: string;
  updated_at: string;
}

const COLUMNS =
  "s.id, s.url, s.description, s.filters, s.enabled, s.disabled_reason, s.disabled_at, s.secret_rotated_at, " +
  "s.etag, s.created_at, s.updated_at";

function toSubscription(row: SubscriptionRow): Versioned<Subscription> {
  return {
    value: {
      id: row.id,
      url: row.url,
      description: row.description,
      filters: parseJson<StoredFilter[]>(row.filters) ?? [],
      enabled: row.enabled === 1,
      disabledReason: row.disabled_reason,
      disabledAt: row.disabled_at,
      secretRotatedAt: row.secret_rotated_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: row.etag,
  };
}

/** What the outbox says about a subscription: never its secret. */
const eventPayload = (s: Subscription) => ({
  id: s.id,
  url: s.url,
  filters: s.filters,
  enabled: s.enabled,
  disabledReason: s.disabledReason,
});

const subscriptionList = defineList({
  table: "webhook_subscriptions",
  alias: "s",
  entityKind: SUBSCRIPTION_KIND,
  idColumn: "id",
  fields: {
    url: { column: "s.url" },
    description: { column: "s.description" },
    enabled: { column: "s.enabled", type: "boolean" },
    createdAt: { column: "s.created_at", type: "datetime" },
    updatedAt: { column: "s.updated_at", type: "datetime" },
  },
  searchColumns: ["s.url", "s.description"],
  defaultOrder: "createdAt desc",
  select: COLUMNS,
});

export async function listSubscriptions(
  db: Database,
  query: z.infer<typeof SubscriptionListQuery>,
): Promise<{ items: Subscription[]; total: number | undefined }> {
  const conditions: Condition[] = [];
  const search = searchCondition(subscriptionList, query.searchText);
  if (search) conditions.push(search);
  if (query.enabled !== undefined) conditions.push((v) => `s.enabled = ${v.value(query.enabled === "true" ? 1 : 0)}`);
  const kinds = splitCsv(query.entityKinds);
  if (kinds.length > 0)
    conditions.push(
      (v) => `EXISTS (SELECT 1 FROM webhook_subscription_filters f WHERE f.subscription_id = s.id AND f.entity_kind IN ${v.list(kinds)})`,
    );
  const compiled = await compileListQuery(subscriptionList, query, noProperties, conditions);
  const { items, total } = await runListQuery<SubscriptionRow>(db, compiled);
  return { items: items.map((row) => toSubscription(row).value), total };
}

export async function findSubscription(db: Database, id: string): Promise<Versioned<Subscription> | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM webhook_subscriptions s WHERE s.id = ?1`).bind(id).first<SubscriptionRow>();
  return row ? toSubscription(row) : null;
}

export async function getSubscription(db: Database, id: string): Promise<Versioned<Subscription>> {
  const found = await findSubscription(db, id);
  if (!found) throw notFound("Subscription", id);
  return found;
}

/**
 * The filters as stored: each names a known entity kind and one of its actions, and the author holds
 * the permission that reads that kind (a subscription must not hear what its author may not read).
 */
export function checkFilters(filters: readonly Filter[], principal: Principal | undefined): StoredFilter[] {
  const problems: FieldProblem[] = [];
  const missing = new Map<string, string>();
  const stored = filters.map((filter, i) => {
    const kind = eventKindOf(filter.entityKind);
    if (!kind) {
      problems.push({
        field: `body.filters.${i}.entityKind`,
        rule: "enum",
        message: `'${filter.entityKind}' is not an entity kind with events; known: ${Object.keys(EVENT_KINDS).sort().join(", ")}.`,
      });
    } else {
      if (filter.action != null && !kind.actions.includes(filter.action)) {
        problems.push({
          field: `body.filters.${i}.action`,
          rule: "enum",
          message:
            `'${filter.action}' is not an action of ${filter.entityKind} events; they are ${kind.actions.join(", ")} (or ` +
            `leave action out for any).`,
        });
      }
      if (principal && !principal.permissions.has(kind.permission)) missing.set(filter.entityKind, kind.permission);
    }
    return {
      entityKind: filter.entityKind,
      action: filter.action ?? null,
      statuses: filter.statuses ? [...new Set(filter.statuses)] : null,
    };
  });
  if (problems.length > 0) throw new ApiError("ValidationFailed", problems.map((p) => p.message).join(" "), { errors: problems });
  if (missing.size > 0) {
    const list = [...missing].map(([kind, permission]) => `${kind} events need ${permission}`).join(", ");
    throw new ApiError("Forbidden", `A subscription hears only what its author may read: ${list}, which the token does not carry.`);
  }
  return stored;
}

export function checkUrl(raw: string, settings: TargetSettings): string {
  const checked = checkTarget(raw, settings);
  if (!checked.ok) throw invalid("body.url", "target", `url ${checked.reason}.`);
  return checked.url;
}

/**
 * The matching rows of a subscription's filters: (kind, action or `*`), each pair once. With
 * `guardEtag`, they are replaced only when the subscription row now carries that version (the one the
 * batch's guarded update set), so a refused update leaves the old filters.
 */
function filterStatements(db: Database, id: string, filters: readonly StoredFilter[], guardEtag?: string): D1PreparedStatement[] {
  const pairs = [...new Set(filters.map((f) => JSON.stringify([f.entityKind, f.action ?? "*"])))].map(
    (p) => JSON.parse(p) as [string, string],
  );
  const guard = guardEtag ? " AND EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = ?1 AND etag = ?3)" : "";
  const bind = (statement: D1PreparedStatement, ...values: unknown[]) => statement.bind(...values, ...(guardEtag ? [guardEtag] : []));
  return [
    bind(db.prepare(`DELETE FROM webhook_subscription_filters WHERE subscription_id = ?1${guard.replace("?3", "?2")}`), id),
    bind(
      db.prepare(
        `INSERT INTO webhook_subscription_filters (subscription_id, entity_kind, action) SELECT ?1, json_extract(value, ` +
          `'$[0]'), json_extract(value, '$[1]') FROM json_each(?2) WHERE 1${guard}`,
      ),
      id,
      JSON.stringify(pairs),
    ),
  ];
}

export interface Created {
  subscription: Versioned<Subscription>;
  secret: string;
}

const subscriptionTable = tableStatements(webhookSubscriptions);

export async function createSubscription(
  ctx: WriteContext,
  env: TargetSettings & { DATAPROCESSING_ENCRYPTION_KEY?: string },
  principal: Principal | undefined,
  input: SubscriptionInput,
): Promise<Created> {
  const url = checkUrl(input.url, env);
  const filters = checkFilters(input.filters, principal);
  const secret = newSigningSecret();
  const sealed = await sealSecret(env, secret);
  const id = ctx.uuid();
  const etag = newEtagToken();
  const subscription: Subscription = {
    id,
    url,
    description: input.description || null,
    filters,
    enabled: input.enabled,
    disabledReason: null,
    disabledAt: input.enabled ? null : ctx.now,
    secretRotatedAt: ctx.now,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  await runBatch(ctx.db, [
    subscriptionTable.insert(ctx.db, {
      id,
      url,
      description: subscription.description,
      filters: JSON.stringify(filters),
      enabled: input.enabled,
      disabledReason: null,
      disabledAt: subscription.disabledAt,
      secretSealed: sealed,
      secretRotatedAt: ctx.now,
      etag,
      createdAt: ctx.now,
      updatedAt: ctx.now,
      createdBy: ctx.actorId,
    }),
    ...filterStatements(ctx.db, id, filters),
    ...outboxStatements(ctx.db, ctx, {
      entityKind: SUBSCRIPTION_KIND,
      entityId: id,
      action: "created",
      payload: eventPayload(subscription),
    }),
  ]);
  return { subscription: { value: subscription, etag }, secret };
}

export async function updateSubscription(
  ctx: WriteContext,
  env: TargetSettings,
  principal: Principal | undefined,
  input: SubscriptionInput & { id: string },
): Promise<Versioned<Subscription>> {
  return retryWrite(ctx, async () => {
    const current = await getSubscription(ctx.db, input.id);
    const version = assertVersion(ctx, current.etag);
    const url = checkUrl(input.url, env);
    const filters = checkFilters(input.filters, principal);
    const wasEnabled = current.value.enabled;
    // Enabling clears the service's reason and the failure streak; disabling by hand gives no reason.
    const disabledAt = input.enabled ? null : wasEnabled ? ctx.now : current.value.disabledAt;
    const subscription: Subscription = {
      ...current.value,
      url,
      description: input.description || null,
      filters,
      enabled: input.enabled,
      disabledReason: input.enabled ? null : current.value.disabledReason,
      disabledAt,
      updatedAt: ctx.now,
    };
    const etag = newEtagToken();
    await commitVersioned(ctx, [
      ctx.db
        .prepare(
          `UPDATE webhook_subscriptions SET url = ?1, description = ?2, filters = ?3, enabled = ?4, disabled_reason = ?5, disabled_at = ?6,
           failing_since = CASE WHEN ?4 = 1 AND enabled = 0 THEN NULL ELSE failing_since END, etag = ?7, updated_at = ?8
         WHERE id = ?9 AND etag = ?10`,
        )
        .bind(
          url,
          subscription.description,
          JSON.stringify(filters),
          input.enabled ? 1 : 0,
          subscription.disabledReason,
          disabledAt,
          etag,
          ctx.now,
          input.id,
          version,
        ),
      ...filterStatements(ctx.db, input.id, filters, etag),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: SUBSCRIPTION_KIND, entityId: input.id, action: "updated", payload: eventPayload(subscription) },
        { table: "webhook_subscriptions", etag },
      ),
    ]);
    return { value: subscription, etag };
  });
}

export async function rotateSecret(ctx: WriteContext, env: { DATAPROCESSING_ENCRYPTION_KEY?: string }, id: string): Promise<Created> {
  return retryWrite(ctx, async () => {
    const current = await getSubscription(ctx.db, id);
    const version = assertVersion(ctx, current.etag);
    const secret = newSigningSecret();
    const sealed = await sealSecret(env, secret);
    const etag = newEtagToken();
    const subscription: Subscription = { ...current.value, secretRotatedAt: ctx.now, updatedAt: ctx.now };
    await commitVersioned(ctx, [
      ctx.db
        .prepare(
          "UPDATE webhook_subscriptions SET secret_sealed = ?1, secret_rotated_at = ?2, etag = ?3, updated_at = ?2 WHERE " +
            "id = ?4 AND etag = ?5",
        )
        .bind(sealed, ctx.now, etag, id, version),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        {
          entityKind: SUBSCRIPTION_KIND,
          entityId: id,
          action: "updated",
          payload: { ...eventPayload(subscription), secretRotatedAt: ctx.now },
        },
        { table: "webhook_subscriptions", etag },
      ),
    ]);
    return { subscription: { value: subscription, etag }, secret };
  });
}

/** Deletes a subscription with its filters and deliveries (ON DELETE CASCADE). */
export async function deleteSubscription(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getSubscription(ctx.db, id);
    const version = assertVersion(ctx, current.etag);
    await commitVersioned(ctx, [
      ctx.db.prepare("DELETE FROM webhook_subscriptions WHERE id = ?1 AND etag = ?2").bind(id, version),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: SUBSCRIPTION_KIND, entityId: id, action: "deleted", payload: null },
        "previousChanged",
      ),
    ]);
  });
}

// --- Delivery health (the sender's) -------------------------------------------------------------------

/** A delivery to the subscription succeeded: it is no longer failing. */
export function subscriptionSucceededStatement(db: Database, id: string, now: string): D1PreparedStatement {
  return db
    .prepare("UPDATE webhook_subscriptions SET failing_since = NULL, last_success_at = ?1, attempt_lease_until = NULL WHERE id = ?2")
    .bind(now, id);
}

/** An attempt to the subscription failed: it has been failing since its first failure after a success. */
export function subscriptionFailedStatement(db: Database, id: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE webhook_subscriptions SET failing_since = coalesce(failing_since, ?1), last_failure_at = ?1, attempt_lease_until = NULL " +
        "WHERE id = ?2",
    )
    .bind(now, id);
}

/**
 * While a subscription fails, one attempt at a time: takes its attempt lease until `until`, unless another
 * attempt holds it (no change) or it no longer fails (no change either: then every attempt may go).
 */
export function takeFailingAttemptLeaseStatement(db: Database, id: string, lease: { until: string; now: string }): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE webhook_subscriptions SET attempt_lease_until = ?1 WHERE id = ?2 AND failing_since IS NOT NULL AND " +
        "(attempt_lease_until IS NULL OR attempt_lease_until <= ?3)",
    )
    .bind(lease.until, id, lease.now);
}

/** The service disables a subscription with its reason (a new version; changes nothing if it already was). */
export function disableSubscriptionStatement(
  db: Database,
  id: string,
  change: { reason: string; now: string; etag: string },
): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE webhook_subscriptions SET enabled = 0, disabled_reason = ?1, disabled_at = ?2, etag = ?3, updated_at = ?2 " +
        "WHERE id = ?4 AND enabled = 1",
    )
    .bind(change.reason, change.now, change.etag, id);
}
