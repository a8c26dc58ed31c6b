/**
 * The monitoring loop (issue 25): when a monitor job succeeds, every controller of the monitor is
 * evaluated for every population item, in one pass over what the model reported; an alarm is entered
 * where a controller starts to hold and left where it stops. Entering runs the controller's actions
 * (a deviation raised on the item's asset with its origin, a work item from a template linked to it,
 * the item's criticality) in the same D1 batch as the alarm row, its history entry and its outbox
 * event; leaving records the exit, its event and the optional status of the raised deviation.
 *
 * Idempotency: an active alarm's `active_key` ({item}:{controller}) is unique, so whatever enters it
 * a second time (a redelivered job end, a retried evaluation, two overlapping jobs of one monitor)
 * fails its batch, which then changes nothing; the evaluation reads the alarms again and finds it
 * entered. A leave is guarded on its history entry (unique per alarm and action), so it is recorded,
 * announced and acted on once. An evaluation is retried from fresh reads at most {@link ATTEMPTS} times.
 *
 * Cost: three reads (monitor, items, active alarms), the evaluation in memory, then writes only for
 * the alarms that change, their rows travelling as JSON parameters (json_each), {@link ENTER_CHUNK}
 * alarms per batch. A job whose values change nothing writes nothing but its evaluated mark.
 */
import type { Database } from "../db/statements";
import type { Bindings } from "../env";
import type { EventContext } from "../events/outbox";
import type { AssetRef } from "../assets/designations";
import { isAssertionFailure, isUniqueViolation, newEtagToken, type WriteContext } from "../pkg/db";
import { nameKey } from "../pkg/unicode";
import { toLinkedProperties, toPropertyValueRows, checkLinkedValues, type ResolvedProperty } from "../properties/values";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";
import { composeDeviation, DEVIATION_COLUMNS, DEVIATION_KIND, hydrateDeviations, type DeviationRow } from "../deviations/store";
import type { DeviationOrigin } from "../deviations/schema";
import { generatedReferenceId } from "../deviations/write";
import { jsonRowStatements } from "../db/statements";
import { prepareInstantiation, readInstantiationSources, type InstantiationSources } from "../work-items/instantiate";
import { workItemCreateStatements } from "../work-items/write";
import type { WorkItemFields } from "../work-items/fields";
import { DEFAULT_STATUS } from "../work/common";
import {
  conditionsSeen,
  controllerHolds,
  describeConditions,
  prepareActions,
  type ConditionSeen,
  type PreparedActions,
} from "./controllers";
import type { AssetType, Controller } from "./schema";

/** The outbox entity kind of alarm events; actions `entered` and `left` (docs/decisions.md). */
export const ALARM_EVENT_KIND = "alarm";
/** Alarms entered per batch (each with at most one deviation and one work item). */
export const ENTER_CHUNK = 20;
/** Evaluations restart from fresh reads at most this many times when a concurrent one got there first. */
const ATTEMPTS = 4;

export interface VariableReport {
  assetId: string;
  name: string;
  value: number;
}

/** Reads `{ variables: [{ assetId, name, value }] }` reports; returns them and the problems with the entries that were refused. */
export function variableReports(outputs: unknown[]): { reports: VariableReport[]; problems: string[] } {
  const reports: VariableReport[] = [];
  const problems: string[] = [];
  for (const output of outputs) {
    const list = (output as { variables?: unknown } | null)?.variables;
    if (!Array.isArray(list)) continue;
    for (const [i, entry] of list.entries()) {
      const { assetId, name, value } = (entry ?? {}) as { assetId?: unknown; name?: unknown; value?: unknown };
      if (
        typeof assetId !== "string" ||
        typeof name !== "string" ||
        name.length === 0 ||
        name.length > 200 ||
        typeof value !== "number" ||
        !Number.isFinite(value)
      ) {
        problems.push(`variables[${i}] is not { assetId: string, name: text, value: number }`);
      } else reports.push({ assetId, name, value });
    }
  }
  return { reports, problems };
}

export interface EvaluatedJob {
  id: string;
  monitor_ref: string;
  created_at: string;
  trigger_depth: number;
}

export interface EvaluationResult {
  entered: number;
  left: number;
  /** What the job's error message should say (actions that no longer fit, a stale job). */
  notes: string[];
}

interface ItemRow {
  id: string;
  population_id: string;
  asset_id: string;
  asset_name: string | null;
  asset_type: AssetType;
}

interface ActiveAlarm {
  id: string;
  item_id: string;
  controller: string;
  deviation_id: string | null;
  work_item_id: string | null;
}

interface MonitorFacts {
  id: string;
  monitor_id: string;
  name: string;
  controllers: string;
  owner_id: string;
  owner_name: string | null;
}

const activeKey = (itemId: string, controller: string) => `${itemId}:${controller}`;

/** The alarm event payload (docs/decisions.md, "Alarm events"). */
function alarmPayload(
  state: "alarm" | "normal",
  alarm: { id: string; controller: string; enteredAt?: string; deviationId: string | null; workItemId: string | null },
  monitor: MonitorFacts,
  item: ItemRow | undefined,
  monitorJobId: string,
  conditions: ConditionSeen[],
  at: string,
) {
  return {
    id: alarm.id,
    state,
    monitor: { id: monitor.id, monitorId: monitor.monitor_id, name: monitor.name },
    controller: alarm.controller,
    populationItem: item ? { id: item.id, populationId: item.population_id } : null,
    asset: item ? { id: item.asset_id, name: item.asset_name, type: item.asset_type } : null,
    monitorJobId,
    conditions,
    at,
    deviationId: alarm.deviationId,
    workItemId: alarm.workItemId,
  };
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
  const [monitorResult, itemResult, activeResult, newerResult] = await db.batch<Record<string, unknown>>([
    db.prepare("SELECT id, monitor_id, name, controllers, owner_id, owner_name FROM monitors WHERE id = ?1").bind(job.monitor_ref),
    db
      .prepare(
        `SELECT i.id, i.population_id, i.asset_id, i.asset_name, p.asset_type FROM population_items i JOIN populations p ON
        p.id = i.population_id
          WHERE p.owner_kind = 'monitor' AND p.owner_id = ?1`,
      )
      .bind(job.monitor_ref),
    db
      .prepare(
        "SELECT id, item_id, controller, deviation_id, work_item_id FROM monitor_alarms WHERE monitor_ref = ?1 AND active_key IS NOT NULL",
      )
      .bind(job.monitor_ref),
    db
      .prepare(
        "SELECT id FROM monitor_jobs WHERE monitor_ref = ?1 AND evaluated_at IS NOT NULL AND created_at > ?2 ORDER BY " +
          "created_at DESC LIMIT 1",
      )
      .bind(job.monitor_ref, job.created_at),
  ]);
  const monitor = monitorResult!.results[0] as unknown as MonitorFacts | undefined;
  if (!monitor) return { entered: 0, left: 0, notes: [] };
  const newer = newerResult!.results[0] as { id: string } | undefined;
  // A job that started before one already evaluated holds older values: it changes no alarm.
  if (newer)
    return {
      entered: 0,
      left: 0,
      notes: [`Controllers not evaluated: monitor job ${newer.id}, started after this one, was evaluated first.`],
    };

  // Controllers by name (the first of a name, for monitors saved before names had to be unique).
  const controllers = new Map<string, Controller>();
  for (const c of JSON.parse(monitor.controllers) as Controller[]) if (!controllers.has(c.name)) controllers.set(c.name, c);
  const items = itemResult!.results as unknown as ItemRow[];
  const active = new Map((activeResult!.results as unknown as ActiveAlarm[]).map((a) => [activeKey(a.item_id, a.controller), a]));

  // The one pass: every controller for every item.
  const entering: { item: ItemRow; controller: Controller }[] = [];
  const leaving: { alarm: ActiveAlarm; item: ItemRow | undefined; controller: Controller | null }[] = [];
  const list = [...controllers.values()];
  for (const item of items) {
    const values = byAsset.get(item.asset_id);
    for (const controller of list) {
      const key = activeKey(item.id, controller.name);
      const current = active.get(key);
      const holds = controllerHolds(controller, values);
      if (current) {
        active.delete(key);
        if (!holds) leaving.push({ alarm: current, item, controller });
      } else if (holds) entering.push({ item, controller });
    }
  }
  // Alarms of controllers the monitor no longer has are left (recorded without conditions).
  for (const alarm of active.values()) leaving.push({ alarm, item: items.find((i) => i.id === alarm.item_id), controller: null });

  const notes: string[] = [];
  const ctx = writeContextFor(db, events);
  if (leaving.length > 0) await leave(ctx, job, monitor, leaving, byAsset, notes);
  if (entering.length > 0) await enter(ctx, job, monitor, entering, byAsset, notes);
  return { entered: entering.length, left: leaving.length, notes };
}

function writeContextFor(db: Database, events: EventContext): WriteContext {
  return {
    db,
    now: events.now,
    actorId: events.actorId,
    actorName: null,
    requestId: events.requestId,
    uuid: () => crypto.randomUUID(),
    expectedEtag: undefined,
  };
}

/** Cause rows for events the loop writes on deviations, so deviationChanged never loops back (triggers.ts). */
function causeRows(eventIds: readonly string[], job: EvaluatedJob, now: string) {
  return eventIds.map((eventId) => ({ eventId, monitor: job.monitor_ref, job: job.id, depth: job.trigger_depth, now }));
}
const INSERT_CAUSES = `INSERT OR IGNORE INTO monitor_event_causes (event_id, monitor_ref, monitor_job_id, depth, created_at)
  SELECT json_extract(value, '$.eventId'), json_extract(value, '$.monitor'), json_extract(value, '$.job'), json_extract(value,
  '$.depth'), json_extract(value, '$.now') FROM json_each(?1)`;

// --- Leaving ---------------------------------------------------------------------------------------

async function leave(
  ctx: WriteContext,
  job: EvaluatedJob,
  monitor: MonitorFacts,
  leaving: { alarm: ActiveAlarm; item: ItemRow | undefined; controller: Controller | null }[],
  byAsset: ReadonlyMap<string, ReadonlyMap<string, number>>,
  notes: string[],
): Promise<void> {
  const db = ctx.db;
  // Deviations to set a status on, with the status (checked now: it may have been removed since the save).
  const statusFor = new Map<string, string>();
  const checkedStatus = new Map<string, PreparedActions>();
  for (const { alarm, controller } of leaving) {
    if (!controller?.onLeave?.deviationStatus || !alarm.deviation_id) continue;
    let prepared = checkedStatus.get(controller.name);
    if (!prepared)
      checkedStatus.set(
        controller.name,
        (prepared = await prepareActions(
          db,
          { name: controller.name, conditions: [], onLeave: controller.onLeave },
          `controller '${controller.name}'`,
        )),
      );
    if (prepared.leaveStatus) statusFor.set(alarm.deviation_id, prepared.leaveStatus);
  }
  for (const p of checkedStatus.values())
    for (const problem of p.problems) notes.push(`${problem.field}: deviation status not set on leaving: ${problem.message}`);

  const rows = leaving.map(({ alarm, item, controller }) => {
    const conditions = conditionsSeen(controller, item ? byAsset.get(item.asset_id) : undefined);
    const payload = alarmPayload(
      "normal",
      { id: alarm.id, controller: alarm.controller, deviationId: alarm.deviation_id, workItemId: alarm.work_item_id },
      monitor,
      item,
      job.id,
      conditions,
      ctx.now,
    );
    return {
      id: alarm.id,
      history: crypto.randomUUID(),
      event: crypto.randomUUID(),
      conditions: JSON.stringify(conditions),
      payload: JSON.stringify(payload),
    };
  });
  // The deviations whose status changes: their new representation is the event's payload.
  const deviationIds = [...statusFor.keys()];
  const deviationRows = deviationIds.length
    ? (
        await db
          .prepare(`SELECT ${DEVIATION_COLUMNS} FROM deviations WHERE id IN (SELECT value FROM json_each(?1))`)
          .bind(JSON.stringify(deviationIds))
          .all<DeviationRow>()
      ).results
    : [];
  const changed = deviationRows
    .filter((r) => r.status !== statusFor.get(r.id))
    .map((r) => ({ ...r, status: statusFor.get(r.id)!, etag: newEtagToken(), updated_at: ctx.now, previous: r.etag }));
  const composed = await hydrateDeviations(db, changed);
  const alarmOf = new Map(leaving.filter((l) => l.alarm.deviation_id).map((l) => [l.alarm.deviation_id!, l.alarm.id]));
  const updates = changed.map((r, i) => ({
    id: r.id,
    status: r.status,
    etag: r.etag,
    previous: r.previous,
    alarm: alarmOf.get(r.id)!,
    event: crypto.randomUUID(),
    payload: JSON.stringify(composed[i]!.value),
  }));

  // A leave happens once: the alarm's history entry (unique per alarm and action) is the guard of everything after it.
  const recorded = (alias: string) =>
    `EXISTS (SELECT 1 FROM monitor_alarm_events h WHERE h.id = json_extract(${alias}.value, '$.history'))`;
  await db.batch([
    ...jsonRowStatements(
      db,
      `UPDATE monitor_alarms SET active_key = NULL, left_job_id = ?2, left_at = ?3,
         left_values = (SELECT json_extract(j.value, '$.conditions') FROM json_each(?1) j WHERE json_extract(j.value, '$.id') =
         monitor_alarms.id)
       WHERE id IN (SELECT json_extract(value, '$.id') FROM json_each(?1)) AND active_key IS NOT NULL`,
      rows,
      job.id,
      ctx.now,
    ),
    ...jsonRowStatements(
      db,
      `INSERT OR IGNORE INTO monitor_alarm_events (id, alarm_id, monitor_ref, item_id, controller, action, monitor_job_id,
      conditions, recorded_at)
       SELECT json_extract(j.value, '$.history'), a.id, a.monitor_ref, a.item_id, a.controller, 'left', ?2,
       json_extract(j.value, '$.conditions'), ?3
         FROM json_each(?1) j JOIN monitor_alarms a ON a.id = json_extract(j.value, '$.id') WHERE a.left_job_id = ?2`,
      rows,
      job.id,
      ctx.now,
    ),
    ...jsonRowStatements(
      db,
      `INSERT INTO outbox (id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id)
       SELECT json_extract(j.value, '$.event'), '${ALARM_EVENT_KIND}', json_extract(j.value, '$.id'), 'left',
       json_extract(j.value, '$.payload'), ?2, ?3, ?4
         FROM json_each(?1) j WHERE ${recorded("j")}`,
      rows,
      ctx.now,
      ctx.actorId,
      ctx.requestId,
    ),
    // onLeave.deviationStatus: only when the deviation is as read (a person's change meanwhile wins) and this job left its alarm.
    ...jsonRowStatements(
      db,
      `UPDATE deviations SET status = (SELECT json_extract(j.value, '$.status') FROM json_each(?1) j WHERE
      json_extract(j.value, '$.id') = deviations.id),
              etag = (SELECT json_extract(j.value, '$.etag') FROM json_each(?1) j WHERE json_extract(j.value, '$.id') =
              deviations.id), updated_at = ?2
        WHERE id IN (SELECT json_extract(j.value, '$.id') FROM json_each(?1) j
                      WHERE json_extract(j.value, '$.previous') = deviations.etag
                        AND EXISTS (SELECT 1 FROM monitor_alarm_events h WHERE h.alarm_id = json_extract(j.value, '$.alarm')
                        AND h.action = 'left' AND h.monitor_job_id = ?3))`,
      updates,
      ctx.now,
      job.id,
    ),
    ...jsonRowStatements(
      db,
      `INSERT INTO outbox (id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id)
       SELECT json_extract(j.value, '$.event'), '${DEVIATION_KIND}', json_extract(j.value, '$.id'), 'updated',
       json_extract(j.value, '$.payload'), ?2, ?3, ?4
         FROM json_each(?1) j WHERE EXISTS (SELECT 1 FROM deviations d WHERE d.id = json_extract(j.value, '$.id') AND d.etag =
         json_extract(j.value, '$.etag'))`,
      updates,
      ctx.now,
      ctx.actorId,
      ctx.requestId,
    ),
    ...jsonRowStatements(
      db,
      `${INSERT_CAUSES.replace("FROM json_each(?1)", "FROM json_each(?1) c")} WHERE EXISTS (SELECT 1 FROM outbox o ` +
        `WHERE o.id = json_extract(c.value, '$.eventId'))`,
      causeRows(
        updates.map((u) => u.event),
        job,
        ctx.now,
      ),
    ),
  ]);
}

// --- Entering --------------------------------------------------------------------------------------

interface AssetFacts {
  ref: AssetRef | null;
  name: string;
}

/** The entering items' assets: a designation for plants, main systems and equipment; organizations have none. */
async function assetsOf(db: Database, assetIds: readonly string[]): Promise<Map<string, AssetFacts>> {
  const { results } = await db
    .prepare(
      `SELECT a.id, a.kind, a.name, a.plant_id, p.name AS plant_name FROM assets a LEFT JOIN assets p ON p.id = a.plant_id
        WHERE a.id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify([...new Set(assetIds)]))
    .all<{ id: string; kind: AssetRef["kind"]; name: string; plant_id: string | null; plant_name: string | null }>();
  return new Map(
    results.map((a) => {
      const plant =
        a.kind === "plant"
          ? { id: a.id, name: a.name }
          : a.plant_id && a.plant_name !== null
            ? { id: a.plant_id, name: a.plant_name }
            : null;
      return [a.id, { name: a.name, ref: a.kind === "organization" ? null : { id: a.id, kind: a.kind, name: a.name, plant } }];
    }),
  );
}

interface Plan {
  actions: Map<string, PreparedActions>;
  workItemFields: { properties: ResolvedProperty[] } | null;
  sources: InstantiationSources | null;
  assets: Map<string, AssetFacts>;
}

/** Everything the entering alarms' actions need, read once per evaluation (per controller, not per item). */
async function plan(db: Database, entering: { item: ItemRow; controller: Controller }[], notes: string[]): Promise<Plan> {
  const actions = new Map<string, PreparedActions>();
  for (const { controller } of entering) {
    if (actions.has(controller.name)) continue;
    const prepared = await prepareActions(
      db,
      { name: controller.name, conditions: [], actions: controller.actions },
      `controller '${controller.name}'`,
    );
    for (const problem of prepared.problems) notes.push(`${problem.field}: action skipped: ${problem.message}`);
    actions.set(controller.name, prepared);
  }
  const templates = [...new Set([...actions.values()].map((a) => a.workTemplateId).filter((id): id is string => id !== null))];
  let workItemFields: Plan["workItemFields"] = null;
  let sources: InstantiationSources | null = null;
  if (templates.length > 0) {
    // A work item is of the default type, as POST /WorkItems makes it without typeId; its required properties would refuse it.
    const checked = await checkLinkedValues(db, {
      entityTypeId: DEFAULT_ENTITY_TYPE_ID,
      applicationRule: "WorkItem",
      values: [],
      field: "workItem.properties",
      entityTypeField: "workItem.typeId",
    });
    if (checked.ok) workItemFields = { properties: checked.properties };
    else notes.push(`Work items not created: ${checked.errors.map((e) => e.message).join("; ")}`);
    sources = await readInstantiationSources(db, templates);
  }
  const needAssets = entering.some(
    ({ controller }) => actions.get(controller.name)?.deviation || actions.get(controller.name)?.workTemplateId,
  );
  const assets = needAssets
    ? await assetsOf(
        db,
        entering.map((e) => e.item.asset_id),
      )
    : new Map<string, AssetFacts>();
  return { actions, workItemFields, sources, assets };
}

function deviationDescription(
  monitor: MonitorFacts,
  controller: Controller,
  item: ItemRow,
  assetName: string,
  jobId: string,
  conditions: ConditionSeen[],
): string {
  return (
    `Raised by monitor ${monitor.monitor_id} '${monitor.name}', controller '${controller.name}', on ` +
    `${item.asset_type} '${assetName}' (${item.asset_id}): ` +
    `${describeConditions(conditions)}. Monitor job ${jobId}.`
  ).slice(0, 10_000);
}

async function enter(
  ctx: WriteContext,
  job: EvaluatedJob,
  monitor: MonitorFacts,
  entering: { item: ItemRow; controller: Controller }[],
  byAsset: ReadonlyMap<string, ReadonlyMap<string, number>>,
  notes: string[],
): Promise<void> {
  const db = ctx.db;
  const prepared = await plan(db, entering, notes);
  const owner = { id: monitor.owner_id, name: monitor.owner_name };
  for (let start = 0; start < entering.length; start += ENTER_CHUNK) {
    const chunk = entering.slice(start, start + ENTER_CHUNK);
    const alarms: Record<string, unknown>[] = [];
    const history: Record<string, unknown>[] = [];
    const alarmEvents: Record<string, unknown>[] = [];
    const criticality = new Map<string, number>();
    const deviations: Record<string, unknown>[] = [];
    const designations: Record<string, unknown>[] = [];
    const propertyValues: unknown[] = [];
    const deviationEvents: Record<string, unknown>[] = [];
    const links: Record<string, unknown>[] = [];
    const workItemStatements: D1PreparedStatement[] = [];
    for (const { item, controller } of chunk) {
      const actions = prepared.actions.get(controller.name);
      const conditions = conditionsSeen(controller, byAsset.get(item.asset_id));
      const asset = prepared.assets.get(item.asset_id);
      const assetName = asset?.name ?? item.asset_name ?? item.asset_id;
      const alarmId = crypto.randomUUID();
      const deviationId = actions?.deviation ? crypto.randomUUID() : null;
      const workItemId =
        actions?.workTemplateId && prepared.workItemFields && prepared.sources?.works.has(actions.workTemplateId)
          ? crypto.randomUUID()
          : null;

      if (deviationId && actions?.deviation) {
        const d = actions.deviation;
        const origin: DeviationOrigin = {
          kind: "monitoring",
          monitor: { id: monitor.id, monitorId: monitor.monitor_id, name: monitor.name },
          controller: controller.name,
          monitorJobId: job.id,
          alarmId,
        };
        const row: DeviationRow = {
          id: deviationId,
          reference_id: generatedReferenceId(deviationId),
          description: deviationDescription(monitor, controller, item, assetName, job.id, conditions),
          status: d.status,
          type_id: d.typeId,
          owner_id: owner.id,
          owner_name: owner.name,
          risk_id: null,
          risk_name: null,
          metadata: null,
          origin: JSON.stringify(origin),
          etag: newEtagToken(),
          created_at: ctx.now,
          updated_at: ctx.now,
        };
        const refs = asset?.ref ? [asset.ref] : [];
        const composed = await composeDeviation(row, {
          typeName: d.typeName,
          assets: refs,
          properties: toLinkedProperties(d.properties),
          relationships: [],
          workItemIds: workItemId ? [workItemId] : [],
        });
        deviations.push({ ...row, reference_key: nameKey(row.reference_id), monitor: monitor.id });
        for (const ref of refs) {
          designations.push({ entity: deviationId, kind: ref.kind, asset: ref.id, derived: 0 });
          if (ref.plant && ref.plant.id !== ref.id)
            designations.push({ entity: deviationId, kind: "plant", asset: ref.plant.id, derived: 1 });
        }
        propertyValues.push(...toPropertyValueRows(DEVIATION_KIND, deviationId, d.properties));
        deviationEvents.push({ event: crypto.randomUUID(), id: deviationId, payload: JSON.stringify(composed.value) });
      }

      if (workItemId && actions?.workTemplateId && prepared.sources && prepared.workItemFields) {
        const fields: WorkItemFields = {
          status: DEFAULT_STATUS,
          dueDate: null,
          owner,
          typeId: DEFAULT_ENTITY_TYPE_ID,
          properties: prepared.workItemFields.properties,
          designations: asset?.ref ? [asset.ref] : [],
          tags: [],
        };
        const instantiation = await prepareInstantiation(
          ctx,
          {
            workItemId,
            owner,
            templates: [{ id: actions.workTemplateId, field: `controller '${controller.name}'.actions.createWorkItem.workTemplateId` }],
            usedRevisions: new Map(),
            firstActivityPosition: 0,
            firstBasedOnPosition: 0,
          },
          prepared.sources,
        );
        const displayName = `${controller.name}: ${assetName} (${monitor.monitor_id})`.slice(0, 500);
        workItemStatements.push(
          ...workItemCreateStatements(
            ctx,
            workItemId,
            { displayName, referenceId: null, metadata: null },
            fields,
            instantiation,
            deviationId ? [deviationId] : [],
          ).statements,
        );
        if (deviationId) links.push({ deviation: deviationId, workItem: workItemId });
      }

      if (actions?.criticality !== null && actions?.criticality !== undefined)
        criticality.set(item.id, Math.max(criticality.get(item.id) ?? 0, actions.criticality));
      alarms.push({
        id: alarmId,
        item: item.id,
        asset: item.asset_id,
        controller: controller.name,
        key: activeKey(item.id, controller.name),
        conditions: JSON.stringify(conditions),
        deviation: deviationId,
        workItem: workItemId,
      });
      history.push({
        id: crypto.randomUUID(),
        alarm: alarmId,
        item: item.id,
        controller: controller.name,
        conditions: JSON.stringify(conditions),
      });
      const payload = alarmPayload(
        "alarm",
        { id: alarmId, controller: controller.name, deviationId, workItemId },
        monitor,
        item,
        job.id,
        conditions,
        ctx.now,
      );
      alarmEvents.push({ event: crypto.randomUUID(), id: alarmId, payload: JSON.stringify(payload) });
    }

    const statements: D1PreparedStatement[] = [
      // First: a second entry of an active alarm fails here (unique active_key), and the whole batch with it.
      ...jsonRowStatements(
        db,
        `INSERT INTO monitor_alarms (id, monitor_ref, item_id, asset_id, controller, active_key, entered_job_id, entered_at,
        entered_values, deviation_id, work_item_id)
         SELECT json_extract(value, '$.id'), ?2, json_extract(value, '$.item'), json_extract(value, '$.asset'),
         json_extract(value, '$.controller'), json_extract(value, '$.key'),
                ?3, ?4, json_extract(value, '$.conditions'), json_extract(value, '$.deviation'), json_extract(value,
                '$.workItem') FROM json_each(?1)`,
        alarms,
        job.monitor_ref,
        job.id,
        ctx.now,
      ),
      ...jsonRowStatements(
        db,
        `INSERT INTO monitor_alarm_events (id, alarm_id, monitor_ref, item_id, controller, action, monitor_job_id, conditions, recorded_at)
         SELECT json_extract(value, '$.id'), json_extract(value, '$.alarm'), ?2, json_extract(value, '$.item'),
         json_extract(value, '$.controller'), 'entered', ?3,
                json_extract(value, '$.conditions'), ?4 FROM json_each(?1)`,
        history,
        job.monitor_ref,
        job.id,
        ctx.now,
      ),
      ...jsonRowStatements(
        db,
        `INSERT INTO outbox (id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id)
         SELECT json_extract(value, '$.event'), '${ALARM_EVENT_KIND}', json_extract(value, '$.id'), 'entered',
         json_extract(value, '$.payload'), ?2, ?3, ?4 FROM json_each(?1)`,
        alarmEvents,
        ctx.now,
        ctx.actorId,
        ctx.requestId,
      ),
    ];
    if (criticality.size > 0) {
      const rows = [...criticality].map(([item, value]) => ({ item, value, id: crypto.randomUUID() }));
      statements.push(
        ...jsonRowStatements(
          db,
          `UPDATE population_items SET criticality = (SELECT json_extract(j.value, '$.value') FROM json_each(?1) j WHERE
          json_extract(j.value, '$.item') = population_items.id), last_monitor_job_id = ?2
            WHERE id IN (SELECT json_extract(value, '$.item') FROM json_each(?1))`,
          rows,
          job.id,
        ),
        ...jsonRowStatements(
          db,
          `INSERT INTO criticality_history (id, item_id, monitor_job_id, criticality, recorded_at)
           SELECT json_extract(value, '$.id'), json_extract(value, '$.item'), ?2, json_extract(value, '$.value'), ?3 FROM
           json_each(?1) WHERE true
           ON CONFLICT (item_id, monitor_job_id) DO UPDATE SET criticality = excluded.criticality`,
          rows,
          job.id,
          ctx.now,
        ),
      );
    }
    if (deviations.length > 0) {
      statements.push(
        ...jsonRowStatements(
          db,
          `INSERT INTO deviations (id, reference_id, reference_key, description, status, type_id, owner_id, owner_name,
          risk_id, risk_name, metadata, origin, origin_monitor_ref, etag, created_at, updated_at, created_by)
           SELECT json_extract(value, '$.id'), json_extract(value, '$.reference_id'), json_extract(value, '$.reference_key'),
           json_extract(value, '$.description'), json_extract(value, '$.status'),
                  json_extract(value, '$.type_id'), json_extract(value, '$.owner_id'), json_extract(value, '$.owner_name'),
                  NULL, NULL, NULL, json_extract(value, '$.origin'),
                  json_extract(value, '$.monitor'), json_extract(value, '$.etag'), ?2, ?2, ?3 FROM json_each(?1)`,
          deviations,
          ctx.now,
          ctx.actorId,
        ),
        ...jsonRowStatements(
          db,
          `INSERT OR IGNORE INTO designations (entity_kind, entity_id, asset_kind, asset_id, derived)
           SELECT '${DEVIATION_KIND}', json_extract(value, '$.entity'), json_extract(value, '$.kind'), json_extract(value,
           '$.asset'), json_extract(value, '$.derived') FROM json_each(?1)`,
          designations,
        ),
        ...jsonRowStatements(
          db,
          `INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_text, value_num, value_json)
           SELECT json_extract(value, '$.entity_kind'), json_extract(value, '$.entity_id'), json_extract(value, '$.name'),
           json_extract(value, '$.position'), json_extract(value, '$.definition_id'),
                  json_extract(value, '$.value_text'), json_extract(value, '$.value_num'), json_extract(value, '$.value_json')
                  FROM json_each(?1)`,
          propertyValues,
        ),
        ...jsonRowStatements(
          db,
          `INSERT INTO outbox (id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id)
           SELECT json_extract(value, '$.event'), '${DEVIATION_KIND}', json_extract(value, '$.id'), 'created',
           json_extract(value, '$.payload'), ?2, ?3, ?4 FROM json_each(?1)`,
          deviationEvents,
          ctx.now,
          ctx.actorId,
          ctx.requestId,
        ),
        ...jsonRowStatements(
          db,
          INSERT_CAUSES,
          causeRows(
            deviationEvents.map((e) => e.event as string),
            job,
            ctx.now,
          ),
        ),
      );
    }
    statements.push(...workItemStatements);
    if (links.length > 0) {
      statements.push(
        ...jsonRowStatements(
          db,
          `INSERT INTO deviation_work_items (deviation_id, work_item_id, created_at, created_by)
           SELECT json_extract(value, '$.deviation'), json_extract(value, '$.workItem'), ?2, ?3 FROM json_each(?1)`,
          links,
          ctx.now,
          ctx.actorId,
        ),
      );
    }
    await db.batch(statements);
  }
}
