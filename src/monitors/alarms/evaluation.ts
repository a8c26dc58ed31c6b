/**
 * The monitoring loop (issue 25): when a monitor job succeeds, every controller of the monitor is
 * evaluated for every population item, in one pass over what the model reported; an alarm is entered
 * where a controller starts to hold (./enter.ts) and left where it stops (./leave.ts).
 *
 * The loop owns only the alarms' tables (./store.ts) and the causes of its events (./causes.ts).
 * What an alarm does elsewhere (a deviation, its designation and property values, a work item, their
 * link, the item's criticality, every event) is made by the owners' statement builders, composed
 * into the loop's own batches, so it exists exactly when the alarm does.
 *
 * Idempotency: an active alarm's `active_key` ({item}:{controller}) is unique, so whatever enters it
 * a second time (a redelivered job end, a retried evaluation, two overlapping jobs of one monitor)
 * fails its batch, which then changes nothing; the evaluation reads the alarms again and finds it
 * entered. A leave is guarded on its history entry (unique per alarm and action), so it is recorded,
 * announced and acted on once. An evaluation is retried from fresh reads at most {@link ATTEMPTS} times.
 *
 * Chattering (issue 33): a controller's `pendingFor` and `clearAfter` count consecutive evaluations
 * (./streaks.ts) before an alarm is entered or left, and a condition's deadband keeps an active alarm's
 * condition holding until the value is clearly back. A timed shelving still in force on a cleared
 * alarm of the same controller and item is inherited by the alarm entered again (./enter.ts).
 *
 * Cost: one batch of reads (monitor, items, active alarms, a newer evaluated job, the streaks and the
 * shelvings of the monitor), the evaluation in memory, then writes only for the alarms and streaks that
 * change, their rows travelling as JSON parameters (json_each). A job whose values change nothing
 * writes nothing but its evaluated mark.
 */
import type { Database } from "../../db/statements";
import type { Bindings } from "../../env";
import type { EventContext } from "../../events/outbox";
import { isAssertionFailure, isUniqueViolation } from "../../pkg/db";
import { monitorJobRow, newerEvaluatedJobStatement } from "../monitor-jobs/store";
import type { VariableReport } from "../monitor-jobs/reports";
import { controllerHolds } from "../monitors/controllers";
import type { Controller } from "../monitors/schema";
import { monitorRow, monitorRowStatement } from "../monitors/store";
import { monitorItemOf, monitorItemsStatement } from "../populations/store";
import { enter, type EnteringAlarm } from "./enter";
import { leave, type Leaving } from "./leave";
import { monitorSource, type AlarmItem, type AlarmSource, type EvaluatedJob, type Evaluation } from "./payload";
import {
  activeAlarmRow,
  activeAlarmsOfMonitorsStatement,
  activeKey,
  alarmRow,
  shelvesOfMonitorStatement,
  type ActiveAlarmRow,
  type ShelfRow,
} from "./store";
import { countWith, streakRow, streaksOfMonitorStatement, streakStatements, type StreakDirection, type StreakRow } from "./streaks";

export type { AlarmItem, AlarmSource, EvaluatedJob } from "./payload";

/** Evaluations restart from fresh reads at most this many times when a concurrent one got there first. */
const ATTEMPTS = 4;

interface EvaluationResult {
  entered: number;
  left: number;
  /** What the job's error message should say (actions that no longer fit, a stale job). */
  notes: string[];
}

/**
 * Evaluates the controllers of `job`'s monitor on the reported variables and writes the alarms that
 * change. Safe to run again for the same job (see the module comment).
 */
export async function evaluateControllers(
  env: Bindings,
  job: EvaluatedJob,
  variables: readonly VariableReport[],
  events: EventContext,
): Promise<EvaluationResult> {
  const byAsset = new Map<string, Map<string, number>>();
  for (const v of variables) {
    let values = byAsset.get(v.assetId);
    if (!values) byAsset.set(v.assetId, (values = new Map()));
    values.set(v.name, v.value);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await evaluateOnce(env, job, byAsset, events);
    } catch (error) {
      // Another evaluation entered one of these alarms, or a template changed under a work item: read again.
      if (attempt < ATTEMPTS && (isUniqueViolation(error) || isAssertionFailure(error))) continue;
      throw error;
    }
  }
}

async function evaluateOnce(
  env: Bindings,
  job: EvaluatedJob,
  byAsset: ReadonlyMap<string, ReadonlyMap<string, number>>,
  events: EventContext,
): Promise<EvaluationResult> {
  const db = env.DB;
  const [monitorResult, itemResult, newerResult, ...state] = await db.batch<Record<string, unknown>>([
    monitorRowStatement(db, job.monitor_ref),
    monitorItemsStatement(db, job.monitor_ref),
    newerEvaluatedJobStatement(db, job.monitor_ref, job.created_at),
    ...alarmStateStatements(db, job.monitor_ref),
  ]);
  const monitorRaw = monitorResult?.results[0];
  if (!monitorRaw) return { entered: 0, left: 0, notes: [] };
  const newerRaw = newerResult?.results[0];
  // A job that started before one already evaluated holds older values: it changes no alarm.
  if (newerRaw)
    return {
      entered: 0,
      left: 0,
      notes: [`Controllers not evaluated: monitor job ${monitorJobRow(newerRaw).id}, started after this one, was evaluated first.`],
    };
  const items: AlarmItem[] = (itemResult?.results ?? []).map(monitorItemOf);
  return evaluateItems(db, job, monitorSource(monitorRow(monitorRaw)), items, alarmState(state), byAsset, events);
}

/**
 * Evaluates the controllers of a source other than a monitor (issue 35: a channel, after a batch of its
 * readings) on `variables`, through the same pass, entries and exits as a monitor job's. `load` reads the
 * source and its items (again on each attempt); null when the source is gone.
 */
export async function evaluateSourceControllers(
  db: Database,
  job: EvaluatedJob,
  load: () => Promise<{ source: AlarmSource; items: AlarmItem[] } | null>,
  byAsset: ReadonlyMap<string, ReadonlyMap<string, number>>,
  events: EventContext,
): Promise<EvaluationResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      const loaded = await load();
      if (!loaded) return { entered: 0, left: 0, notes: [] };
      const state = await db.batch<Record<string, unknown>>(alarmStateStatements(db, loaded.source.id));
      return await evaluateItems(db, job, loaded.source, loaded.items, alarmState(state), byAsset, events);
    } catch (error) {
      if (attempt < ATTEMPTS && (isUniqueViolation(error) || isAssertionFailure(error))) continue;
      throw error;
    }
  }
}

/** The reads of a source's alarm state: its active alarms, running streaks and timed shelvings (map with {@link alarmState}). */
function alarmStateStatements(db: Database, ref: string): D1PreparedStatement[] {
  return [activeAlarmsOfMonitorsStatement(db, [ref]), streaksOfMonitorStatement(db, ref), shelvesOfMonitorStatement(db, ref)];
}

interface AlarmState {
  active: Map<string, ActiveAlarmRow>;
  streaks: Map<string, StreakRow>;
  /** The latest shelving per controller and item. */
  shelves: Map<string, ShelfRow>;
}

function alarmState([activeResult, streakResult, shelfResult]: D1Result<Record<string, unknown>>[]): AlarmState {
  const active = new Map<string, ActiveAlarmRow>(
    (activeResult?.results ?? []).map(activeAlarmRow).map((a) => [activeKey(a.itemId, a.controller), a]),
  );
  const streaks = new Map<string, StreakRow>((streakResult?.results ?? []).map(streakRow).map((r) => [r.key, r]));
  // Rows come newest first: the first of a key is its latest.
  const shelves = new Map<string, ShelfRow>();
  for (const r of (shelfResult?.results ?? []).map(alarmRow))
    if (!shelves.has(activeKey(r.itemId, r.controller))) shelves.set(activeKey(r.itemId, r.controller), r);
  return { active, streaks, shelves };
}

/** The one pass, every controller for every item, and the writes of what changed. */
async function evaluateItems(
  db: Database,
  job: EvaluatedJob,
  source: AlarmSource,
  items: readonly AlarmItem[],
  { active, streaks, shelves }: AlarmState,
  byAsset: ReadonlyMap<string, ReadonlyMap<string, number>>,
  events: EventContext,
): Promise<EvaluationResult> {
  // Controllers by name (the first of a name, for monitors saved before names had to be unique).
  const controllers = new Map<string, Controller>();
  for (const c of JSON.parse(source.controllers) as Controller[]) if (!controllers.has(c.name)) controllers.set(c.name, c);

  const entering: EnteringAlarm[] = [];
  const leaving: Leaving[] = [];
  const counting: { key: string; itemId: string; direction: StreakDirection; count: number }[] = [];
  const list = [...controllers.values()];
  for (const item of items) {
    const values = byAsset.get(item.assetId);
    for (const controller of list) {
      const key = activeKey(item.id, controller.name);
      const current = active.get(key);
      if (current) {
        active.delete(key);
        // An active alarm's conditions hold within their deadbands.
        if (controllerHolds(controller, values, true)) continue;
        const count = countWith(streaks.get(key), "leave", job.id);
        if (count >= (controller.clearAfter ?? 1)) leaving.push({ alarm: current, item, controller });
        else counting.push({ key, itemId: item.id, direction: "leave", count });
      } else if (controllerHolds(controller, values)) {
        const count = countWith(streaks.get(key), "enter", job.id);
        if (count >= (controller.pendingFor ?? 1)) entering.push({ item, controller, shelf: shelves.get(key) ?? null });
        else counting.push({ key, itemId: item.id, direction: "enter", count });
      }
    }
  }
  // Alarms of controllers the source no longer has are left (recorded without conditions).
  for (const alarm of active.values()) leaving.push({ alarm, item: items.find((i) => i.id === alarm.itemId), controller: null });

  const evaluation: Evaluation = { job, source, events, byAsset, notes: [] };
  if (leaving.length > 0) await leave(db, evaluation, leaving);
  if (entering.length > 0) await enter(db, evaluation, entering);
  // The streaks still running; the others (their alarm changed, or they stopped) go. Nothing to write when none ran or runs.
  const streakWrites = streakStatements(db, job.monitor_ref, streaks, counting, job.id, events.now);
  if (streakWrites.length > 0) await db.batch(streakWrites);
  return { entered: entering.length, left: leaving.length, notes: evaluation.notes };
}
