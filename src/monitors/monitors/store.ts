/**
 * Monitors in D1: the owner of monitors. A monitor is numbered MON-n, runs a model, and keeps NULL in
 * the resource columns it inherits from its model (a read shows the effective value). It copies its
 * model's populations when it is created (the populations' store's statements), and its trigger
 * schedule is the shared dispatcher's (kind `monitor`).
 */
import { tableStatements, type Database, type Row } from "../../db/statements";
import { monitors } from "../../db/schema";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import type { Principal } from "../../pkg/auth";
import { assertStatement, isAssertionFailure, newEtagToken, type WriteContext } from "../../pkg/db";
import { invalid, notFound } from "../../pkg/errors";
import { assertVersion, commitVersioned, retryWrite } from "../../pkg/resource";
import { scheduleRuleProblem, scheduleStatement, type ScheduleRule } from "../../pkg/schedule";
import { ownerOrCaller } from "../../work/common";
import { checkTransition, getModelRow, modelRow, modelRowsStatement, type ModelRow } from "../models/store";
import { STATUSES, type Status } from "../models/schema";
import { nextNumber } from "../numbers";
import type { Population } from "../populations/schema";
import { copyPopulationsStatements, deleteOwnerPopulationsStatement, populationsOfMany } from "../populations/store";
import { storedEnum } from "../stored";
import { checkControllers } from "./controllers";
import type { Controller } from "./schema";

const monitorTable = tableStatements(monitors);

export type MonitorRow = Row<typeof monitors>;
/** A monitor row as read with every column (a list page among them), typed by the schema. */
export const monitorRow = (raw: Record<string, unknown>): MonitorRow => monitorTable.row(raw);
const SELECT_MONITOR = `SELECT ${monitorTable.columns} FROM monitors`;

/** The schedule kind of monitors' trigger schedules (src/pkg/schedule). */
export const MONITOR_SCHEDULE_KIND = "monitor";

type Params = Record<string, string>;
const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

interface MonitorInput {
  name: string;
  modelId: string;
  status: Status;
  triggerSchedule: string | null;
  timeZone: string | null;
  triggerEvent: unknown;
  instructions: string | null;
  cpuCores: number | null;
  memory: number | null;
  gpuCores: number | null;
  gpuSku: string | null;
  configurableParameters: Params | null;
  staticParameters?: unknown;
  controllers: Controller[];
  maxShelveMinutes: number;
  objectOwner?: { id: string; name: string | null } | null;
}

/** A monitor's effective values: its own where it overrides, its model's elsewhere. */
export function effectiveOf(m: MonitorRow, model: ModelRow) {
  const own = parse<Params>(m.configurableParameters);
  const inheritsGpu = m.gpuCores === null && m.gpuSku === null;
  return {
    cpuCores: m.cpuCores ?? model.cpuCores,
    memory: m.memoryGb ?? model.memoryGb,
    gpuCores: m.cpuCores === null && inheritsGpu ? model.gpuCores : m.gpuCores,
    gpuSku: m.cpuCores === null && inheritsGpu ? model.gpuSku : m.gpuSku,
    configurableParameters: own ?? (JSON.parse(model.configurableParameters) as Params),
    staticParameters: JSON.parse(model.staticParameters) as Params,
    inherited: {
      cpuCores: m.cpuCores === null,
      memory: m.memoryGb === null,
      gpuCores: inheritsGpu,
      gpuSku: inheritsGpu,
      configurableParameters: own === null,
    },
  };
}

/** Monitors as answered, in a fixed number of queries whatever their number (models, schedules, populations). */
export async function toMonitors(db: Database, rows: readonly MonitorRow[]) {
  if (rows.length === 0) return [];
  const ids = JSON.stringify(rows.map((m) => m.id));
  const [[models, schedules], populations] = await Promise.all([
    db.batch<Record<string, unknown>>([
      modelRowsStatement(
        db,
        rows.map((m) => m.modelRef),
      ),
      db
        .prepare("SELECT owner_id, next_run_at FROM schedules WHERE kind = ?1 AND owner_id IN (SELECT value FROM json_each(?2))")
        .bind(MONITOR_SCHEDULE_KIND, ids),
    ]),
    populationsOfMany(
      db,
      "monitor",
      rows.map((m) => m.id),
    ),
  ]);
  const modelById = new Map((models?.results ?? []).map(modelRow).map((r) => [r.id, r]));
  const nextById = new Map(
    (schedules?.results ?? []).map((r) => [String(r.owner_id), r.next_run_at === null ? null : String(r.next_run_at)] as const),
  );
  return rows.map((m) => {
    const model = modelById.get(m.modelRef);
    // A monitor's model cannot be deleted while the monitor exists (InUse), so this holds.
    if (!model) throw new Error(`monitor ${m.id} names model ${m.modelRef}, which does not exist`);
    return monitorOf(m, model, nextById.get(m.id) ?? null, populations.get(m.id) ?? []);
  });
}

export async function toMonitor(db: Database, m: MonitorRow) {
  return (await toMonitors(db, [m]))[0]!;
}

function monitorOf(m: MonitorRow, owner: ModelRow, nextRunAt: string | null, populations: Population[]) {
  const effective = effectiveOf(m, owner);
  return {
    id: m.id,
    monitorId: m.monitorId,
    name: m.name,
    modelId: owner.id,
    model: { id: owner.id, modelId: owner.modelId, name: owner.name },
    status: storedEnum(STATUSES, m.status, "monitors.status"),
    triggerSchedule: m.triggerSchedule,
    timeZone: m.timeZone,
    nextRunAt,
    triggerEvent: parse<{ kind: "fileProcessed"; dataTypeId: string } | { kind: "deviationChanged" }>(m.triggerEvent),
    instructions: m.instructions,
    cpuCores: effective.cpuCores,
    memory: effective.memory,
    gpuCores: effective.gpuCores,
    gpuSku: effective.gpuSku,
    configurableParameters: effective.configurableParameters,
    inherited: effective.inherited,
    controllers: JSON.parse(m.controllers) as Controller[],
    maxShelveMinutes: m.maxShelveMinutes,
    objectOwner: { id: m.ownerId, name: m.ownerName },
    populations,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

/** The statement reading one monitor's row, for a caller's batch (map it with {@link monitorRow}). */
export function monitorRowStatement(db: Database, id: string): D1PreparedStatement {
  return db.prepare(`${SELECT_MONITOR} WHERE id = ?1`).bind(id);
}

export async function getMonitorRow(db: Database, id: string): Promise<MonitorRow> {
  const row = await monitorRowStatement(db, id).first<Record<string, unknown>>();
  if (!row) throw notFound("Monitor", id);
  return monitorRow(row);
}

/** The names and numbers of monitors by id (for what names its monitor: a monitor job). */
export async function monitorNames(db: Database, ids: readonly string[]): Promise<Map<string, { monitorId: string; name: string }>> {
  const { results } = await db
    .prepare("SELECT id, monitor_id, name FROM monitors WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify([...new Set(ids)]))
    .all<{ id: string; monitor_id: string; name: string }>();
  return new Map(results.map((m) => [m.id, { monitorId: m.monitor_id, name: m.name }]));
}

async function checkMonitor(
  db: Database,
  input: MonitorInput,
  current: MonitorRow | null,
): Promise<{ model: ModelRow; rule: ScheduleRule | null }> {
  if (input.staticParameters !== undefined) {
    throw invalid("body.staticParameters", "readOnly", "Static parameters come from the model and can never be overridden by a monitor.");
  }
  const model = await getModelRow(db, input.modelId, "body.modelId");
  if (model.status === "Deprecated" && current?.modelRef !== model.id)
    throw invalid("body.modelId", "status", `Model ${model.modelId} is Deprecated: it takes no new monitors.`);
  if ((input.gpuCores ?? 0) > 0 !== (input.gpuSku !== null) && (input.gpuCores !== null || input.gpuSku !== null)) {
    throw invalid("body.gpuSku", "dependency", "gpuSku and gpuCores (at least 1) are overridden together.");
  }
  let rule: ScheduleRule | null = null;
  if (input.triggerSchedule) {
    rule = { cron: input.triggerSchedule, timeZone: input.timeZone };
    const problem = scheduleRuleProblem(rule);
    if (problem) throw invalid(problem.part === "timeZone" ? "body.timeZone" : "body.triggerSchedule", problem.part, problem.message);
  } else if (input.timeZone) {
    const problem = scheduleRuleProblem({ cron: "0 0 * * *", timeZone: input.timeZone });
    if (problem) throw invalid("body.timeZone", "timeZone", problem.message);
  }
  if (current) checkTransition(current.status, input.status, "body.status");
  await checkControllers(db, input.controllers);
  return { model, rule };
}

/** As stored and answered: GreaterThan becomes GreaterThen; the optional fields (issue 25) only when given. */
const normaliseControllers = (controllers: MonitorInput["controllers"]) =>
  controllers.map((c) => ({
    ...c,
    conditions: c.conditions.map((x) => ({ ...x, operator: x.operator === "GreaterThan" ? "GreaterThen" : x.operator })),
  }));

/** The columns a monitor's create and update both write. */
function monitorValues(input: MonitorInput, owner: { id: string; name: string | null }) {
  return {
    name: input.name,
    modelRef: input.modelId,
    status: input.status,
    triggerSchedule: input.triggerSchedule,
    timeZone: input.timeZone,
    triggerEvent: input.triggerEvent ? JSON.stringify(input.triggerEvent) : null,
    instructions: input.instructions,
    cpuCores: input.cpuCores,
    memoryGb: input.memory,
    gpuCores: input.gpuCores,
    gpuSku: input.gpuSku,
    configurableParameters: input.configurableParameters ? JSON.stringify(input.configurableParameters) : null,
    controllers: JSON.stringify(normaliseControllers(input.controllers)),
    maxShelveMinutes: input.maxShelveMinutes,
    ownerId: owner.id,
    ownerName: owner.name,
  };
}

export async function createMonitor(ctx: WriteContext, principal: Principal, input: MonitorInput): Promise<MonitorRow> {
  const { rule } = await checkMonitor(ctx.db, input, null);
  const owner = ownerOrCaller(input.objectOwner, principal);
  const id = ctx.uuid();
  const monitorId = `MON-${await nextNumber(ctx.db, "monitor")}`;
  await ctx.db.batch([
    monitorTable.insert(ctx.db, {
      id,
      monitorId,
      ...monitorValues(input, owner),
      etag: newEtagToken(),
      createdAt: ctx.now,
      updatedAt: ctx.now,
      createdBy: ctx.actorId,
    }),
    // On creation the monitor copies its model's populations and items.
    ...copyPopulationsStatements(ctx.db, { kind: "model", id: input.modelId }, { kind: "monitor", id }, ctx.now),
    scheduleStatement(ctx.db, MONITOR_SCHEDULE_KIND, id, rule, new Date(ctx.now)),
    ...outboxStatements(ctx.db, ctx, {
      entityKind: "monitor",
      entityId: id,
      action: "created",
      payload: { id, monitorId, name: input.name },
    }),
  ]);
  return getMonitorRow(ctx.db, id);
}

export async function updateMonitor(ctx: WriteContext, input: MonitorInput & { id: string }): Promise<MonitorRow> {
  return retryWrite(ctx, async () => {
    const current = await getMonitorRow(ctx.db, input.id);
    const version = assertVersion(ctx, current.etag);
    const { rule } = await checkMonitor(ctx.db, input, current);
    const owner = input.objectOwner
      ? { id: input.objectOwner.id, name: input.objectOwner.name ?? null }
      : { id: current.ownerId, name: current.ownerName };
    const etag = newEtagToken();
    await commitVersioned(ctx, [
      monitorTable.update(
        ctx.db,
        { ...monitorValues(await keepInherited(ctx.db, input, current), owner), etag, updatedAt: ctx.now },
        { id: input.id, etag: version },
      ),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        {
          entityKind: "monitor",
          entityId: input.id,
          action: "updated",
          payload: { id: input.id, monitorId: current.monitorId, name: input.name },
        },
        { table: monitorTable.name, etag },
      ),
      scheduleStatement(ctx.db, MONITOR_SCHEDULE_KIND, input.id, rule, new Date(ctx.now)),
    ]);
    return getMonitorRow(ctx.db, input.id);
  });
}

/**
 * A monitor sent back as it was read shows the model's values where it inherits them: a value equal
 * to the model's, on a field the monitor inherits today, keeps inheriting (rather than pinning the
 * model's current value). To pin the model's value, set it while it differs, or send null to inherit.
 */
async function keepInherited(
  db: Database,
  input: MonitorInput & { id: string },
  current: MonitorRow,
): Promise<MonitorInput & { id: string }> {
  if (input.modelId !== current.modelRef) return input;
  const model = await getModelRow(db, current.modelRef);
  const kept = { ...input };
  if (current.cpuCores === null && input.cpuCores === model.cpuCores) kept.cpuCores = null;
  if (current.memoryGb === null && input.memory === model.memoryGb) kept.memory = null;
  if (current.gpuCores === null && current.gpuSku === null && input.gpuCores === model.gpuCores && input.gpuSku === model.gpuSku) {
    kept.gpuCores = null;
    kept.gpuSku = null;
  }
  if (
    current.configurableParameters === null &&
    input.configurableParameters !== null &&
    JSON.stringify(input.configurableParameters) === model.configurableParameters
  ) {
    kept.configurableParameters = null;
  }
  return kept;
}

/**
 * A new version of a monitor whose representation changed elsewhere (one of its populations),
 * guarded on the version read: it changes no row when the monitor moved on meanwhile.
 */
export function newMonitorVersionStatement(db: Database, id: string, version: string, etag: string, now: string): D1PreparedStatement {
  return monitorTable.update(db, { etag, updatedAt: now }, { id, etag: version });
}

export async function deleteMonitor(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getMonitorRow(ctx.db, id);
    const version = assertVersion(ctx, current.etag);
    await commitVersioned(ctx, [
      monitorTable.delete(ctx.db, { id, etag: version }),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: "monitor", entityId: id, action: "deleted", payload: null }, "previousChanged"),
      deleteOwnerPopulationsStatement(ctx.db, "monitor", id),
      scheduleStatement(ctx.db, MONITOR_SCHEDULE_KIND, id, null, new Date(ctx.now)),
    ]);
  });
}

/** A copy with a new MON number, status Draft, every population and item (criticality and last job cleared), no schedule until saved. */
export async function duplicateMonitor(ctx: WriteContext, principal: Principal, id: string): Promise<MonitorRow> {
  const source = await getMonitorRow(ctx.db, id);
  const copyId = ctx.uuid();
  const monitorId = `MON-${await nextNumber(ctx.db, "monitor")}`;
  const name = `${source.name} (copy)`;
  try {
    await ctx.db.batch([
      // Not when the source was deleted since it was read.
      assertStatement(ctx.db, "EXISTS (SELECT 1 FROM monitors WHERE id = ?1)", id),
      monitorTable.insert(ctx.db, {
        ...source,
        id: copyId,
        monitorId,
        name,
        status: "Draft",
        ownerId: principal.id,
        ownerName: principal.name ?? null,
        etag: newEtagToken(),
        createdAt: ctx.now,
        updatedAt: ctx.now,
        createdBy: principal.id,
      }),
      // Created as POST /Monitors creates one.
      ...outboxStatements(ctx.db, ctx, {
        entityKind: "monitor",
        entityId: copyId,
        action: "created",
        payload: { id: copyId, monitorId, name },
      }),
      ...copyPopulationsStatements(ctx.db, { kind: "monitor", id }, { kind: "monitor", id: copyId }, ctx.now),
    ]);
  } catch (error) {
    if (isAssertionFailure(error)) throw notFound("Monitor", id);
    throw error;
  }
  return getMonitorRow(ctx.db, copyId);
}
