/**
 * Generation (issue 36), run by the minute dispatcher (src/pkg/schedule, kind `inspection-plans`, one
 * fixed every-minute schedule). Each tick:
 *
 * 1. finds the targets whose open item was completed, closed, cancelled or deleted since (a join of the
 *    targets with an open item to their work items): the item is no longer open, and a completion is
 *    recorded as the last completed item (its `updated_at`, the write that completed it);
 * 2. finds the targets of condition plans whose channel's series moved on since they were computed;
 * 3. finds the targets whose `generate_at` has come (a range scan of its index);
 *
 * and for each recomputes the next due date (./due.ts); when its generation time has come, it writes
 * the work item (the work items' own statement builders: the template's latest revision instantiated),
 * the plan's item row (unique per plan, asset and due date) and the target moved on, in one batch behind
 * assertions that the plan and target are as read. A batch run twice (two ticks for the same minute, a
 * lease taken over) fails on the unique key and changes nothing: one item per plan, asset and due date.
 *
 * Catch-up: a target whose generation time passed long ago (the service was down, or its previous item
 * stayed open) generates its earliest missed due date once, and every calendar occurrence whose
 * generation time has passed by now counts as consumed by it.
 */
import type { Database } from "../db/statements";
import type { Bindings } from "../env";
import { serviceEventContext } from "../events/outbox";
import { isAssertionFailure, isUniqueViolation, assertStatement, type WriteContext } from "../pkg/db";
import { errorFields, type Logger } from "../pkg/logger";
import type { DueRun, ScheduleKind } from "../pkg/schedule";
import { platform } from "../platform/services";
import { checkWorkItemFields } from "../work-items/fields";
import { prepareInstantiation, readInstantiationSources, type InstantiationSources } from "../work-items/instantiate";
import { workItemCreateStatements } from "../work-items/write";
import { advancedMeterBase, generateTime, lastCalendarUpTo } from "./due";
import { runOverdue } from "./overdue";
import {
  ALL_ASSETS,
  calendarOf,
  nextOf,
  planItemInsert,
  planRow,
  PLAN_COLUMNS,
  readChannelStates,
  targetRecomputeStatement,
  targetReplace,
  targetRow,
  TARGET_COLUMNS,
  type ChannelState,
  type PlanRow,
  type TargetRow,
} from "./store";
import type { ConditionRule, DueReason } from "./schema";

export const PLANS_KIND = "inspection-plans";

/** Targets read per round, and rounds per tick (what is left waits for the next minute). */
const ROUND = 100;
const ROUNDS = 20;
/** A target whose generation failed (its asset deleted, say) is tried again this much later. */
const RETRY_MS = 60 * 60 * 1000;
/** Statuses that end a generated item: `completed` and `closed` complete it, `cancelled` (or a delete) only ends it. */
const COMPLETING = ["completed", "closed"];
const ENDING = [...COMPLETING, "cancelled"];

export interface GenerationReport {
  examined: number;
  generated: number;
  failed: number;
}

interface Ended {
  workItemId: string;
  completedAt: string | null;
}

const key = (planId: string, assetKey: string) => `${planId}\u0000${assetKey}`;

/** Targets whose open item ended (completed, closed, cancelled or deleted). */
async function endedItems(env: Bindings): Promise<Map<string, Ended>> {
  const { results } = await env.DB.prepare(
    `SELECT t.plan_id, t.asset_key, t.open_work_item_id, w.status, w.updated_at FROM inspection_plan_targets t
       LEFT JOIN work_items w ON w.id = t.open_work_item_id
      WHERE t.open_work_item_id IS NOT NULL AND (w.id IS NULL OR w.status IN (SELECT value FROM json_each(?1)))`,
  )
    .bind(JSON.stringify(ENDING))
    .all<{ plan_id: string; asset_key: string; open_work_item_id: string; status: string | null; updated_at: string | null }>();
  return new Map(
    results.map((r) => [
      key(r.plan_id, r.asset_key),
      { workItemId: r.open_work_item_id, completedAt: r.status !== null && COMPLETING.includes(r.status) ? r.updated_at : null },
    ]),
  );
}

/** Targets of condition plans whose channel has readings they were not computed from. */
async function movedChannels(env: Bindings): Promise<string[]> {
  const { results } = await env.DB.prepare(
    `SELECT t.plan_id, t.asset_key FROM inspection_plans p
       JOIN channels ch ON ch.id = p.condition_channel_id
       JOIN inspection_plan_targets t ON t.plan_id = p.id
      WHERE p.condition_channel_id IS NOT NULL AND ch.series_version > coalesce(t.channel_version, -1)
      LIMIT ?1`,
  )
    .bind(ROUND * ROUNDS)
    .all<{ plan_id: string; asset_key: string }>();
  return results.map((r) => key(r.plan_id, r.asset_key));
}

async function dueTargets(
  env: Bindings,
  now: string,
  after: string | null,
): Promise<{ plan_id: string; asset_key: string; generate_at: string }[]> {
  const { results } = await env.DB.prepare(
    `SELECT plan_id, asset_key, generate_at FROM inspection_plan_targets
      WHERE generate_at <= ?1 AND (?2 IS NULL OR generate_at >= ?2) ORDER BY generate_at LIMIT ?3`,
  )
    .bind(now, after, ROUND)
    .all<{ plan_id: string; asset_key: string; generate_at: string }>();
  return results;
}

/** One tick of generation at the platform's time; returns what it did. */
export async function runGeneration(env: Bindings, log: Logger): Promise<GenerationReport> {
  const report: GenerationReport = { examined: 0, generated: 0, failed: 0 };
  const now = platform().clock.now();
  const nowIso = now.toISOString();
  const ended = await endedItems(env);
  const moved = await movedChannels(env);
  const first = [...new Set([...ended.keys(), ...moved])];
  const seen = new Set<string>();
  const sources = new Map<string, InstantiationSources>();

  const process = async (keys: readonly string[]) => {
    const fresh = keys.filter((k) => !seen.has(k));
    for (const k of fresh) seen.add(k);
    for (let i = 0; i < fresh.length; i += ROUND) await processTargets(env, fresh.slice(i, i + ROUND), ended, sources, now, log, report);
  };
  await process(first);
  let after: string | null = null;
  for (let round = 0; round < ROUNDS; round++) {
    const due = await dueTargets(env, nowIso, after);
    const keys = due.map((d) => key(d.plan_id, d.asset_key)).filter((k) => !seen.has(k));
    if (keys.length === 0) break;
    await process(keys);
    after = due[due.length - 1]!.generate_at;
  }
  if (report.generated > 0 || report.failed > 0) log.info("inspection plans generated", { ...report });
  return report;
}

async function processTargets(
  env: Bindings,
  keys: readonly string[],
  ended: ReadonlyMap<string, Ended>,
  sources: Map<string, InstantiationSources>,
  now: Date,
  log: Logger,
  report: GenerationReport,
): Promise<void> {
  const pairs = keys.map((k) => {
    const [planId, assetKey] = k.split("\u0000") as [string, string];
    return { plan_id: planId, asset_key: assetKey };
  });
  const [targetsRaw, plansRaw] = await env.DB.batch<Record<string, unknown>>([
    env.DB.prepare(
      `SELECT ${TARGET_COLUMNS} FROM inspection_plan_targets WHERE (plan_id, asset_key) IN
         (SELECT json_extract(value, '$.plan_id'), json_extract(value, '$.asset_key') FROM json_each(?1))`,
    ).bind(JSON.stringify(pairs)),
    env.DB.prepare(`SELECT ${PLAN_COLUMNS} FROM inspection_plans WHERE id IN (SELECT value FROM json_each(?1))`).bind(
      JSON.stringify([...new Set(pairs.map((p) => p.plan_id))]),
    ),
  ]);
  const plans = new Map(plansRaw!.results.map((raw) => planRow(raw)).map((p) => [p.id, p]));
  const channels = await readChannelStates(
    env.DB,
    [...plans.values()].map((p) => p.conditionChannelId).filter((c): c is string => c !== null),
  );
  // Targets that only moved on (a new next due date, an ended item) are written together, each guarded by its version.
  const recomputed: D1PreparedStatement[] = [];
  for (const raw of targetsRaw!.results) {
    const target = targetRow(raw);
    const plan = plans.get(target.planId);
    if (!plan) continue;
    report.examined++;
    const channel = plan.conditionChannelId ? (channels.get(plan.conditionChannelId) ?? null) : null;
    try {
      const generated = await advanceTarget(
        env,
        plan,
        target,
        ended.get(key(target.planId, target.assetKey)) ?? null,
        channel,
        sources,
        now,
        recomputed,
      );
      if (generated) report.generated++;
    } catch (error) {
      report.failed++;
      log.error("inspection plan generation failed", { planId: plan.id, assetKey: target.assetKey, ...errorFields(error) });
      await env.DB.batch([
        targetAssertion(env.DB, target),
        targetReplace(env.DB, { ...target, generateAt: new Date(now.getTime() + RETRY_MS).toISOString(), updatedAt: now.toISOString() }),
      ]).catch(() => undefined);
    }
  }
  if (recomputed.length > 0) await env.DB.batch(recomputed);
}

/** The target is as read (its `updated_at`): a plan write or another tick meanwhile makes this one change nothing. */
function targetAssertion(db: Database, t: TargetRow): D1PreparedStatement {
  return assertStatement(
    db,
    "EXISTS (SELECT 1 FROM inspection_plan_targets WHERE plan_id = ?1 AND asset_key = ?2 AND updated_at = ?3)",
    t.planId,
    t.assetKey,
    t.updatedAt,
  );
}

function planAssertion(db: Database, plan: PlanRow): D1PreparedStatement {
  return assertStatement(db, "EXISTS (SELECT 1 FROM inspection_plans WHERE id = ?1 AND etag = ?2)", plan.id, plan.etag);
}

/** A fresh `updated_at` for a target: later than the one read, so a guard on the old one fails. */
function touched(target: TargetRow, now: Date): string {
  const at = Math.max(now.getTime(), Date.parse(target.updatedAt) + 1);
  return new Date(at).toISOString();
}

/** Moves one target on: records its ended item, and generates its next item when due. True when it generated. */
async function advanceTarget(
  env: Bindings,
  plan: PlanRow,
  read: TargetRow,
  ended: Ended | null,
  channel: ChannelState | null,
  sources: Map<string, InstantiationSources>,
  now: Date,
  recomputed: D1PreparedStatement[],
): Promise<boolean> {
  const db = env.DB;
  const nowIso = now.toISOString();
  const target: TargetRow = { ...read };
  if (ended && ended.workItemId === target.openWorkItemId) {
    target.openWorkItemId = null;
    if (ended.completedAt !== null) {
      target.lastCompletedWorkItemId = ended.workItemId;
      target.lastCompletedAt = ended.completedAt;
    }
  }
  const next = nextOf(plan, target, channel);
  const updatedAt = touched(read, now);
  if (next.generateAt === null || next.nextDueAt === null || Date.parse(next.generateAt) > now.getTime()) {
    const unchanged =
      !ended &&
      next.nextDueAt === read.nextDueAt &&
      next.nextReason === read.nextReason &&
      next.generateAt === read.generateAt &&
      next.channelVersion === read.channelVersion;
    if (!unchanged) {
      recomputed.push(
        targetRecomputeStatement(
          db,
          read,
          {
            ...next,
            openWorkItemId: target.openWorkItemId,
            lastCompletedWorkItemId: target.lastCompletedWorkItemId,
            lastCompletedAt: target.lastCompletedAt,
          },
          updatedAt,
        ),
      );
    }
    return false;
  }

  const dueAt = next.nextDueAt;
  const reason = next.nextReason as DueReason;
  const events = serviceEventContext(`inspection plan ${plan.id} generated its item due ${dueAt}`, nowIso);
  const ctx: WriteContext = { ...events, db, actorName: null, expectedEtag: undefined };
  const workItemId = ctx.uuid();
  const owner = { id: plan.ownerId, name: plan.ownerName };
  const assetIds = target.assetKey === ALL_ASSETS ? (JSON.parse(plan.assetIds) as string[]) : [target.assetKey];
  const fields = await checkWorkItemFields(
    ctx,
    {
      displayName: plan.name,
      referenceId: null,
      dueDate: dueAt,
      objectOwner: owner,
      tags: JSON.parse(plan.tags) as string[],
      properties: JSON.parse(plan.properties) as { name: string; value: unknown }[],
      designations: assetIds.map((id) => ({ id })),
      metadata: null,
    },
    null,
  );
  let templateSources = sources.get(plan.workTemplateId);
  if (!templateSources) {
    templateSources = await readInstantiationSources(db, [plan.workTemplateId]);
    sources.set(plan.workTemplateId, templateSources);
  }
  const instantiation = await prepareInstantiation(
    ctx,
    {
      workItemId,
      owner,
      templates: [{ id: plan.workTemplateId, field: "workTemplateId" }],
      usedRevisions: new Map(),
      firstActivityPosition: 0,
      firstBasedOnPosition: 0,
    },
    templateSources,
  );
  const assetName = target.assetKey === ALL_ASSETS ? null : (fields.designations[0]?.name ?? null);
  const displayName = `${plan.name}${assetName ? `: ${assetName}` : ""} (due ${dueAt.slice(0, 10)})`.slice(0, 500);
  const metadata = {
    inspectionPlan: {
      id: plan.id,
      name: plan.name,
      dueDate: dueAt,
      reason,
      assetId: target.assetKey === ALL_ASSETS ? null : target.assetKey,
    },
    ...(plan.responsibleId ? { responsible: { id: plan.responsibleId, name: plan.responsibleName } } : {}),
  };
  const created = workItemCreateStatements(ctx, workItemId, { displayName, referenceId: null, metadata }, fields, instantiation);

  // Everything whose generation time has come is consumed by this item (catch-up: once, not once per missed date).
  const horizon = new Date(now.getTime() + plan.leadTimeDays * 86_400_000);
  const calendar = calendarOf(plan);
  const consumedCalendar = calendar ? lastCalendarUpTo(calendar, new Date(target.calendarAfter ?? 0), horizon) : null;
  const condition = plan.condition === null ? null : (JSON.parse(plan.condition) as ConditionRule);
  const channelNext = condition?.kind === "nextInspection" ? (channel?.nextInspectionAt ?? null) : null;
  const moved: TargetRow = {
    ...target,
    openWorkItemId: workItemId,
    lastGeneratedWorkItemId: workItemId,
    lastGeneratedDueAt: dueAt,
    lastGeneratedAt: nowIso,
    calendarAfter: consumedCalendar?.toISOString() ?? target.calendarAfter,
    conditionAfter:
      channelNext !== null && generateTime(new Date(channelNext), plan.leadTimeDays).getTime() <= now.getTime()
        ? channelNext
        : target.conditionAfter,
    meterBase:
      condition?.kind === "readingPasses" && channel?.lastValue != null
        ? advancedMeterBase(target.meterBase ?? 0, channel.lastValue, condition.every)
        : target.meterBase,
    updatedAt,
  };
  const after: TargetRow = { ...moved, ...nextOf(plan, moved, channel) };
  try {
    await db.batch([
      planAssertion(db, plan),
      targetAssertion(db, read),
      ...created.statements,
      planItemInsert(db, { workItemId, planId: plan.id, assetKey: target.assetKey, dueAt, reason, generatedAt: nowIso }),
      targetReplace(db, after),
    ]);
  } catch (error) {
    // Another tick generated it, or the plan changed meanwhile: nothing was written; the next tick looks again.
    if (isAssertionFailure(error) || isUniqueViolation(error)) return false;
    throw error;
  }
  return true;
}

/** The dispatcher's kind: one fixed schedule, every minute; a run handles whatever is due then (run twice, it finds nothing more). */
export const inspectionPlansKind: ScheduleKind = {
  kind: PLANS_KIND,
  fixed: [{ ownerId: "plans", rule: { cron: "* * * * *" } }],
  async start(env: Bindings, _runs: readonly DueRun[], log: Logger) {
    await runGeneration(env, log);
    await runOverdue(env, log);
  },
};
