/**
 * Inspection plans in D1: the owner of `inspection_plans`, `inspection_plan_targets` and
 * `inspection_plan_items`. A plan's write checks its template, assets, channel and due rules (a 400
 * naming the field and rule), and writes the plan with its targets (one per asset, or one for all), each
 * with its next due date computed (./due.ts), and its event, in one batch. Generation (./generate.ts)
 * composes the work items' own statement builders with this module's.
 */
import { tableStatements, type Database, type Row } from "../db/statements";
import { inspectionPlanItems, inspectionPlans, inspectionPlanTargets } from "../db/schema";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import { assertStatement, isAssertionFailure, newEtagToken, type WriteContext } from "../pkg/db";
import { ApiError, notFound, type FieldProblem } from "../pkg/errors";
import { assertVersion, commitVersioned, READ_AGAIN, retryWrite, type Versioned } from "../pkg/resource";
import { nextRunAfter, scheduleRuleProblem } from "../pkg/schedule";
import { resolveDesignations } from "../assets/designations";
import { checkLinkedValues } from "../properties/values/resolve";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";
import { normaliseTags, ownerOrCaller } from "../work/common";
import {
  candidates,
  earliest,
  generateTime,
  intervalMs,
  isRealLocal,
  localParts,
  nextCalendarAfter,
  type Calendar,
  type DueInputs,
} from "./due";
import type { ConditionRule, DueReason, InspectionPlan, Interval, PlanInput, PlanTarget } from "./schema";

export const PLAN_KIND = "inspectionPlan";
/** The target of a plan that makes one work item for all its assets. */
export const ALL_ASSETS = "all";

const planTable = tableStatements(inspectionPlans);
const targetTable = tableStatements(inspectionPlanTargets);
const itemTable = tableStatements(inspectionPlanItems);
export type PlanRow = Row<typeof inspectionPlans>;
export type TargetRow = Row<typeof inspectionPlanTargets>;
export type PlanItemRow = Row<typeof inspectionPlanItems>;
export const planRow = (raw: Record<string, unknown>): PlanRow => planTable.row(raw);
export const targetRow = (raw: Record<string, unknown>): TargetRow => targetTable.row(raw);
export const PLAN_COLUMNS = planTable.columns;
export const TARGET_COLUMNS = targetTable.columns;

/** What a plan's channel says, as its condition reads it. */
export interface ChannelState {
  id: string;
  nextInspectionAt: string | null;
  lastValue: number | null;
  lastReadingAt: string | null;
  seriesVersion: number;
}

export async function readChannelStates(db: Database, ids: readonly string[]): Promise<Map<string, ChannelState>> {
  if (ids.length === 0) return new Map();
  const { results } = await db
    .prepare(
      "SELECT id, next_inspection_at, last_value, last_reading_at, series_version FROM channels " +
        "WHERE id IN (SELECT value FROM json_each(?1))",
    )
    .bind(JSON.stringify([...new Set(ids)]))
    .all<{
      id: string;
      next_inspection_at: string | null;
      last_value: number | null;
      last_reading_at: string | null;
      series_version: number;
    }>();
  return new Map(
    results.map((r) => [
      r.id,
      {
        id: r.id,
        nextInspectionAt: r.next_inspection_at,
        lastValue: r.last_value,
        lastReadingAt: r.last_reading_at,
        seriesVersion: r.series_version,
      },
    ]),
  );
}

/** The plan's rules as ./due.ts reads them. */
export function calendarOf(row: PlanRow): Calendar | null {
  if (row.calendar === null) return null;
  const rule = JSON.parse(row.calendar) as { cron: string | null; every: Interval | null };
  return { cron: rule.cron, every: rule.every, timeZone: row.timeZone, start: row.startDate };
}
const conditionOf = (row: PlanRow) => (row.condition === null ? null : (JSON.parse(row.condition) as ConditionRule));
const fromCompletionOf = (row: PlanRow) => (row.fromCompletion === null ? null : (JSON.parse(row.fromCompletion) as { every: Interval }));

/** The due inputs of one target of a plan. */
export function dueInputs(row: PlanRow, target: TargetRow, channel: ChannelState | null): DueInputs {
  return {
    calendar: calendarOf(row),
    fromCompletion: fromCompletionOf(row)?.every ?? null,
    condition: conditionOf(row),
    timeZone: row.timeZone,
    start: row.startDate,
    target: {
      calendarAfter: target.calendarAfter,
      conditionAfter: target.conditionAfter,
      meterBase: target.meterBase,
      open: target.openWorkItemId !== null,
      lastGeneratedAt: target.lastGeneratedAt,
      lastCompletedAt: target.lastCompletedAt,
    },
    channel,
  };
}

/**
 * Where a target's next item stands: its next due date and reason, and when it is generated (null
 * while the plan is suspended, or an item is open and the plan does not stack its calendar).
 */
export function nextOf(
  row: PlanRow,
  target: TargetRow,
  channel: ChannelState | null,
): Pick<TargetRow, "nextDueAt" | "nextReason" | "generateAt" | "channelVersion"> {
  const next = earliest(candidates(dueInputs(row, target, channel)));
  const blocked = target.openWorkItemId !== null && !(row.stack && next?.reason === "calendar");
  return {
    nextDueAt: next?.at.toISOString() ?? null,
    nextReason: next?.reason ?? null,
    generateAt: next && row.status === "active" && !blocked ? generateTime(next.at, row.leadTimeDays).toISOString() : null,
    channelVersion: channel?.seriesVersion ?? null,
  };
}

export function toPlan(row: PlanRow, targets: readonly TargetRow[]): Versioned<InspectionPlan> {
  const calendar = row.calendar === null ? null : (JSON.parse(row.calendar) as InspectionPlan["calendar"]);
  return {
    value: {
      id: row.id,
      name: row.name,
      description: row.description,
      workTemplateId: row.workTemplateId,
      assetIds: JSON.parse(row.assetIds) as string[],
      itemPer: row.itemPer === "plan" ? "plan" : "asset",
      objectOwner: { id: row.ownerId, name: row.ownerName },
      responsible: row.responsibleId === null ? null : { id: row.responsibleId, name: row.responsibleName },
      tags: JSON.parse(row.tags) as string[],
      properties: JSON.parse(row.properties) as { name: string; value: unknown }[],
      status: row.status === "suspended" ? "suspended" : "active",
      timeZone: row.timeZone,
      startDate: row.startDate,
      calendar,
      fromCompletion: fromCompletionOf(row),
      condition: conditionOf(row),
      leadTimeDays: row.leadTimeDays,
      stack: row.stack,
      reminderIntervalDays: row.reminderIntervalDays,
      targets: targets.map(toTarget),
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    },
    etag: row.etag,
  };
}

function toTarget(t: TargetRow): PlanTarget {
  return {
    assetId: t.assetKey === ALL_ASSETS ? null : t.assetKey,
    nextDueAt: t.nextDueAt,
    nextReason: (t.nextReason as DueReason | null) ?? null,
    generateAt: t.generateAt,
    openWorkItemId: t.openWorkItemId,
    lastGenerated:
      t.lastGeneratedWorkItemId && t.lastGeneratedDueAt && t.lastGeneratedAt
        ? { workItemId: t.lastGeneratedWorkItemId, dueAt: t.lastGeneratedDueAt, generatedAt: t.lastGeneratedAt }
        : null,
    lastCompleted:
      t.lastCompletedWorkItemId && t.lastCompletedAt ? { workItemId: t.lastCompletedWorkItemId, completedAt: t.lastCompletedAt } : null,
  };
}

export async function readTargets(db: Database, planIds: readonly string[]): Promise<Map<string, TargetRow[]>> {
  const out = new Map<string, TargetRow[]>();
  if (planIds.length === 0) return out;
  const { results } = await db
    .prepare(
      `SELECT ${TARGET_COLUMNS} FROM inspection_plan_targets WHERE plan_id IN (SELECT value FROM json_each(?1)) ` +
        "ORDER BY plan_id, asset_key",
    )
    .bind(JSON.stringify(planIds))
    .all<Record<string, unknown>>();
  for (const raw of results) {
    const t = targetRow(raw);
    out.set(t.planId, [...(out.get(t.planId) ?? []), t]);
  }
  return out;
}

export async function getPlanRow(db: Database, id: string): Promise<PlanRow> {
  const raw = await db
    .prepare(`SELECT ${PLAN_COLUMNS} FROM inspection_plans WHERE id = ?1`)
    .bind(id.toLowerCase())
    .first<Record<string, unknown>>();
  if (!raw) throw notFound("InspectionPlan", id);
  return planRow(raw);
}

export async function getPlan(db: Database, id: string): Promise<Versioned<InspectionPlan>> {
  const row = await getPlanRow(db, id);
  const targets = await readTargets(db, [row.id]);
  return toPlan(row, targets.get(row.id) ?? []);
}

const DAY_MS = 86_400_000;

function validationFailed(problems: FieldProblem[]): ApiError {
  return new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
}

/** The shortest gap between the calendar's next occurrences (the first few), for the lead time check. */
function calendarSpacingMs(calendar: Calendar, from: Date): number | null {
  let previous = nextCalendarAfter(calendar, from);
  if (!previous) return null;
  let shortest: number | null = null;
  for (let i = 0; i < 12; i++) {
    const next = nextCalendarAfter(calendar, previous);
    if (!next) break;
    const gap = next.getTime() - previous.getTime();
    shortest = shortest === null ? gap : Math.min(shortest, gap);
    previous = next;
  }
  return shortest;
}

interface Checked {
  owner: { id: string; name: string | null };
  startDate: string;
  channel: ChannelState | null;
}

/** Checks a plan's input against the database and its rules; throws one ValidationFailed listing every problem. */
async function check(ctx: WriteContext, input: PlanInput, current: PlanRow | null): Promise<Checked> {
  const db = ctx.db;
  const problems: FieldProblem[] = [];
  const push = (field: string, rule: string, message: string) => problems.push({ field, rule, message });

  if (!input.calendar && !input.fromCompletion && !input.condition)
    push("body", "dueRule", "A plan needs at least one due rule: calendar, fromCompletion or condition.");

  let timeZoneOk = true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: input.timeZone });
  } catch {
    timeZoneOk = false;
    push("body.timeZone", "timeZone", `'${input.timeZone}' is not an IANA time zone (e.g. Europe/Berlin, America/Houston).`);
  }
  const startDate = normaliseStart(input.startDate ?? current?.startDate ?? startOfDay(ctx.now, timeZoneOk ? input.timeZone : "UTC"));
  if (input.startDate !== undefined && !isRealLocal(startDate))
    push("body.startDate", "format", `'${input.startDate}' is not a real date.`);

  const leadMs = input.leadTimeDays * DAY_MS;
  if (input.calendar) {
    const { cron, every } = input.calendar;
    if ((cron === null) === (every === null))
      push("body.calendar", "oneOf", "A calendar rule has either a cron expression or an interval (every), not both or neither.");
    if (cron !== null) {
      const problem = scheduleRuleProblem({ cron, timeZone: timeZoneOk ? input.timeZone : null });
      if (problem && problem.part === "cron") push("body.calendar.cron", "cron", problem.message);
      else if (!problem && nextRunAfter({ cron, timeZone: input.timeZone }, new Date(ctx.now)) === null)
        push("body.calendar.cron", "neverFires", `'${cron}' never fires (e.g. 30 February).`);
      else if (!problem && timeZoneOk && isRealLocal(startDate)) {
        const spacing = calendarSpacingMs({ cron, every: null, timeZone: input.timeZone, start: startDate }, new Date(ctx.now));
        if (spacing !== null && leadMs >= spacing)
          push("body.leadTimeDays", "leadTime", `A lead time of ${input.leadTimeDays} days is not shorter than the calendar's interval.`);
      }
    }
    if (every !== null && leadMs >= intervalMs(every))
      push(
        "body.leadTimeDays",
        "leadTime",
        `A lead time of ${input.leadTimeDays} days is not shorter than the calendar interval (${every.count} ${every.unit}).`,
      );
  }
  if (input.fromCompletion && leadMs >= intervalMs(input.fromCompletion.every))
    push(
      "body.leadTimeDays",
      "leadTime",
      `A lead time of ${input.leadTimeDays} days is not shorter than the from-completion interval ` +
        `(${input.fromCompletion.every.count} ${input.fromCompletion.every.unit}).`,
    );

  const [template, designations, properties, channel] = await Promise.all([
    db.prepare("SELECT id FROM work_templates WHERE id = ?1 AND is_latest = 1").bind(input.workTemplateId.toLowerCase()).first(),
    resolveDesignations(
      db,
      input.assetIds.map((id, i) => ({ id, field: `body.assetIds.${i}` })),
    ).catch((error: unknown) => {
      if (error instanceof ApiError && error.errors) problems.push(...error.errors);
      else throw error;
      return [];
    }),
    checkLinkedValues(db, {
      entityTypeId: DEFAULT_ENTITY_TYPE_ID,
      applicationRule: "WorkItem",
      values: input.properties,
      field: "body.properties",
      entityTypeField: "body.properties",
    }),
    input.condition ? readChannelStates(db, [input.condition.channelId.toLowerCase()]) : Promise.resolve(new Map<string, ChannelState>()),
  ]);
  void designations;
  if (!template) push("body.workTemplateId", "exists", `The work template ${input.workTemplateId} does not exist (GET /WorkTemplates).`);
  if (!properties.ok) problems.push(...properties.errors);
  const channelState = input.condition ? (channel.get(input.condition.channelId.toLowerCase()) ?? null) : null;
  if (input.condition && !channelState)
    push("body.condition.channelId", "exists", `The channel ${input.condition.channelId} does not exist (GET /Channels).`);
  if (problems.length > 0) throw validationFailed(problems);

  const caller = ctx.actorId === null ? null : { id: ctx.actorId, name: ctx.actorName ?? "" };
  const owner = input.objectOwner || !current ? ownerOrCaller(input.objectOwner, caller) : { id: current.ownerId, name: current.ownerName };
  return { owner, startDate, channel: channelState };
}

/** `YYYY-MM-DD` → `YYYY-MM-DDT00:00`, seconds dropped when zero: one stored form. */
function normaliseStart(text: string): string {
  const [date, time = "00:00"] = text.split("T");
  const [h = "00", m = "00", s] = time.split(":");
  return `${date}T${h}:${m}${s && s !== "00" ? `:${s}` : ""}`;
}

function startOfDay(nowIso: string, timeZone: string): string {
  const p = localParts(new Date(nowIso), timeZone);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T00:00`;
}

function valuesOf(input: PlanInput, checked: Checked) {
  return {
    name: input.name,
    description: input.description,
    workTemplateId: input.workTemplateId.toLowerCase(),
    assetIds: JSON.stringify(input.assetIds.map((a) => a.toLowerCase())),
    itemPer: input.itemPer,
    ownerId: checked.owner.id,
    ownerName: checked.owner.name,
    responsibleId: input.responsible?.id ?? null,
    responsibleName: input.responsible?.name ?? null,
    tags: JSON.stringify(normaliseTags(input.tags)),
    properties: JSON.stringify(input.properties.map((p) => ({ name: p.name, value: p.value ?? null }))),
    status: input.status,
    timeZone: input.timeZone,
    startDate: checked.startDate,
    calendar: input.calendar ? JSON.stringify({ cron: input.calendar.cron, every: input.calendar.every }) : null,
    fromCompletion: input.fromCompletion ? JSON.stringify(input.fromCompletion) : null,
    condition: input.condition ? JSON.stringify({ ...input.condition, channelId: input.condition.channelId.toLowerCase() }) : null,
    conditionChannelId: input.condition?.channelId.toLowerCase() ?? null,
    leadTimeDays: input.leadTimeDays,
    stack: input.stack,
    reminderIntervalDays: input.reminderIntervalDays,
  };
}

/** The asset keys a plan generates for. */
export function assetKeysOf(row: Pick<PlanRow, "itemPer" | "assetIds">): string[] {
  return row.itemPer === "plan" ? [ALL_ASSETS] : (JSON.parse(row.assetIds) as string[]);
}

function emptyTarget(planId: string, assetKey: string, now: string, channel: ChannelState | null): TargetRow {
  return {
    planId,
    assetKey,
    nextDueAt: null,
    nextReason: null,
    generateAt: null,
    openWorkItemId: null,
    lastGeneratedWorkItemId: null,
    lastGeneratedDueAt: null,
    lastGeneratedAt: null,
    lastCompletedWorkItemId: null,
    lastCompletedAt: null,
    calendarAfter: null,
    conditionAfter: null,
    // A meter counts from the reading the plan found.
    meterBase: channel?.lastValue ?? 0,
    channelVersion: null,
    updatedAt: now,
  };
}

/** The plan's targets after a write: kept (recomputed) for assets still designated, new for new ones, gone for removed ones. */
function targetsAfter(row: PlanRow, current: readonly TargetRow[], channel: ChannelState | null, now: string) {
  const keys = assetKeysOf(row);
  const byKey = new Map(current.map((t) => [t.assetKey, t]));
  const targets = keys.map((key) => {
    const base = byKey.get(key) ?? emptyTarget(row.id, key, now, channel);
    return { ...base, ...nextOf(row, base, channel), updatedAt: now };
  });
  const removed = current.filter((t) => !keys.includes(t.assetKey)).map((t) => t.assetKey);
  return { targets, removed };
}

/**
 * The guard that the plan's template and every asset it names still exist, in a plan's batch (a delete
 * of one meanwhile: read again, and the check then says which is gone).
 */
function referencesAssertion(db: Database, row: Pick<PlanRow, "workTemplateId" | "assetIds">): D1PreparedStatement {
  return assertStatement(
    db,
    "EXISTS (SELECT 1 FROM work_templates WHERE id = ?1 AND is_latest = 1) AND " +
      "NOT EXISTS (SELECT 1 FROM json_each(?2) a WHERE NOT EXISTS (SELECT 1 FROM assets WHERE id = a.value))",
    row.workTemplateId,
    row.assetIds,
  );
}

export async function createPlan(ctx: WriteContext, input: PlanInput): Promise<Versioned<InspectionPlan>> {
  const id = ctx.uuid();
  return retryWrite(ctx, async () => {
    const checked = await check(ctx, input, null);
    const row: PlanRow = {
      id,
      ...valuesOf(input, checked),
      etag: newEtagToken(),
      createdAt: ctx.now,
      updatedAt: ctx.now,
      createdBy: ctx.actorId,
    };
    const { targets } = targetsAfter(row, [], checked.channel, ctx.now);
    const plan = toPlan(row, targets);
    try {
      await ctx.db.batch([
        referencesAssertion(ctx.db, row),
        planTable.insert(ctx.db, row),
        ...targetTable.insertMany(ctx.db, targets),
        ...outboxStatements(ctx.db, ctx, { entityKind: PLAN_KIND, entityId: id, action: "created", payload: plan.value }),
      ]);
    } catch (error) {
      if (isAssertionFailure(error)) return READ_AGAIN;
      throw error;
    }
    return plan;
  });
}

export async function updatePlan(ctx: WriteContext, input: PlanInput & { id: string }): Promise<Versioned<InspectionPlan>> {
  return retryWrite(ctx, async () => {
    const current = await getPlanRow(ctx.db, input.id);
    const expected = assertVersion(ctx, current.etag);
    const checked = await check(ctx, input, current);
    const etag = newEtagToken();
    const row: PlanRow = { ...current, ...valuesOf(input, checked), etag, updatedAt: ctx.now };
    const currentTargets = (await readTargets(ctx.db, [current.id])).get(current.id) ?? [];
    // A condition on another channel (or none) starts its bookkeeping again.
    const sameChannel = current.conditionChannelId === row.conditionChannelId;
    const kept = currentTargets.map((t) => (sameChannel ? t : { ...t, conditionAfter: null, meterBase: checked.channel?.lastValue ?? 0 }));
    const { targets, removed } = targetsAfter(row, kept, checked.channel, ctx.now);
    const plan = toPlan(row, targets);
    try {
      await commitVersioned(ctx, [
        planTable.update(ctx.db, { ...valuesOf(input, checked), etag, updatedAt: ctx.now }, { id: current.id, etag: expected }),
        referencesAssertion(ctx.db, row),
        ...removed.map((key) => targetTable.delete(ctx.db, { planId: row.id, assetKey: key })),
        ...targets.map((t) => targetUpsertStatement(ctx.db, t)),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: PLAN_KIND, entityId: row.id, action: "updated", payload: plan.value },
          {
            table: "inspection_plans",
            etag,
          },
        ),
      ]);
    } catch (error) {
      if (isAssertionFailure(error)) return READ_AGAIN;
      throw error;
    }
    return plan;
  });
}

/** Inserts a target or replaces every column of the one there. */
function targetUpsertStatement(db: Database, t: TargetRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO inspection_plan_targets (${TARGET_COLUMNS}) SELECT ${TARGET_COLUMNS.split(", ")
        .map((c) => `json_extract(?1, '$.${c}')`)
        .join(", ")}
       WHERE true
       ON CONFLICT (plan_id, asset_key) DO UPDATE SET ${TARGET_COLUMNS.split(", ")
         .filter((c) => c !== "plan_id" && c !== "asset_key")
         .map((c) => `${c} = excluded.${c}`)
         .join(", ")}`,
    )
    .bind(JSON.stringify(targetJson(t)));
}

function targetJson(t: TargetRow): Record<string, unknown> {
  return {
    plan_id: t.planId,
    asset_key: t.assetKey,
    next_due_at: t.nextDueAt,
    next_reason: t.nextReason,
    generate_at: t.generateAt,
    open_work_item_id: t.openWorkItemId,
    last_generated_work_item_id: t.lastGeneratedWorkItemId,
    last_generated_due_at: t.lastGeneratedDueAt,
    last_generated_at: t.lastGeneratedAt,
    last_completed_work_item_id: t.lastCompletedWorkItemId,
    last_completed_at: t.lastCompletedAt,
    calendar_after: t.calendarAfter,
    condition_after: t.conditionAfter,
    meter_base: t.meterBase,
    channel_version: t.channelVersion,
    updated_at: t.updatedAt,
  };
}

export async function deletePlan(ctx: WriteContext, id: string): Promise<void> {
  await retryWrite(ctx, async () => {
    const current = await getPlanRow(ctx.db, id);
    const expected = assertVersion(ctx, current.etag);
    await commitVersioned(ctx, [
      planTable.delete(ctx.db, { id: current.id, etag: expected }),
      // Its targets go with it (ON DELETE CASCADE); the items it generated stay, naming it.
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: PLAN_KIND, entityId: current.id, action: "deleted", payload: null },
        "previousChanged",
      ),
    ]);
  });
}

/** The plans that use a work template (for its delete's refusal), by name. */
export async function plansUsingTemplate(db: Database, templateId: string): Promise<{ id: string; name: string }[]> {
  const { results } = await db
    .prepare("SELECT id, name FROM inspection_plans WHERE work_template_id = ?1 ORDER BY name LIMIT 5")
    .bind(templateId.toLowerCase())
    .all<{ id: string; name: string }>();
  return results;
}

/** The plans naming an asset among their assets (a whole scan of the plans: an asset's delete is rare). */
const PLANS_ON_ASSET = "FROM inspection_plans p, json_each(p.asset_ids) a WHERE a.value = ?1";

/** The plans that generate work on an asset (for its delete's refusal), by name. */
export async function plansOnAsset(db: Database, assetId: string): Promise<{ id: string; name: string }[]> {
  const { results } = await db
    .prepare(`SELECT DISTINCT p.id, p.name ${PLANS_ON_ASSET} ORDER BY p.name LIMIT 5`)
    .bind(assetId.toLowerCase())
    .all<{ id: string; name: string }>();
  return results;
}

/** A guard for an asset's delete batch: no plan names it (a plan created meanwhile fails the batch). */
export function noPlanOnAssetAssertion(db: Database, assetId: string): D1PreparedStatement {
  return assertStatement(db, `NOT EXISTS (SELECT 1 ${PLANS_ON_ASSET})`, assetId.toLowerCase());
}

/** A guard for a work template's delete batch: no plan uses it (a plan created meanwhile fails the batch). */
export function noPlanUsesTemplateAssertion(db: Database, templateId: string): D1PreparedStatement {
  return assertStatement(db, "NOT EXISTS (SELECT 1 FROM inspection_plans WHERE work_template_id = ?1)", templateId.toLowerCase());
}

// Generation's statements (./generate.ts): the item row, and the target moved on.
export const planItemInsert = (db: Database, item: PlanItemRow) => itemTable.insert(db, item);
export const targetReplace = targetUpsertStatement;

/** A target's computed fields (its next due date, generation time, channel version) written only while it is as read. */
export function targetRecomputeStatement(
  db: Database,
  read: TargetRow,
  next: Pick<
    TargetRow,
    "nextDueAt" | "nextReason" | "generateAt" | "channelVersion" | "openWorkItemId" | "lastCompletedWorkItemId" | "lastCompletedAt"
  >,
  updatedAt: string,
): D1PreparedStatement {
  return targetTable.update(db, { ...next, updatedAt }, { planId: read.planId, assetKey: read.assetKey, updatedAt: read.updatedAt });
}
