/**
 * Monitor jobs: one run of a monitor's model, triggered by its schedule, by an event, or on demand.
 * ACR models run as a data processing job whose end is copied back (Success becomes Succeeded);
 * External models are told about the run by their own system, which reports the status with
 * `PUT /MonitorJobs/{id}/{status}` and the monitor's status token.
 *
 * Criticality: a model reports it as a job output `{ "criticality": [{ "assetId": "...", "criticality": 0..100 }] }`
 * (or, for External models, in the body of the status PUT). Each value updates the monitor's
 * population items of that asset, their lastMonitorJobId and the item's history.
 *
 * Variables: beside it, `{ "variables": [{ "assetId", "name", "value" }] }`; when the job succeeds the
 * monitor's controllers are evaluated on them (src/monitors/alarms.ts). What the model reported is kept
 * on the job (`reports`) and the evaluation marks the job (`evaluated_at`), so a job end delivered
 * again, or the minute cron after a crash, evaluates a Succeeded job that was not evaluated yet.
 */
import type { Database } from "../db/statements";
import type { Bindings } from "../env";
import type { JobEnd, JobEndHook } from "../dataprocessing/contract";
import { runnerOf, START_CONCURRENCY, startAdHocJob } from "../dataprocessing/execution";
import { requireHost } from "../dataprocessing/host-errors";
import { forEachLimited } from "../pkg/concurrency";
import { scopedTokenFor } from "../dataprocessing/run-options";
import { isUniqueViolation } from "../pkg/db";
import { ApiError, notFound } from "../pkg/errors";
import { errorFields, type Logger } from "../pkg/logger";
import type { DueRun, ScheduleKind } from "../pkg/schedule";
import { effectiveOf, findDefinitionByVersion, getModelRow, getMonitorRow, MONITOR_SCHEDULE_KIND, type MonitorRow } from "./store";
import { MONITOR_JOB_VARIABLES, type MonitorJobStatus } from "./schema";
import { evaluateControllers, variableReports, type VariableReport } from "./alarms";
import { guardedOutboxStatement, OUTBOX_RETENTION_MS, serviceEventContext } from "../events/outbox";

/** How long a monitor job may stay Started or InProgress. */
export const MONITOR_JOB_DEADLINE_MINUTES = 120;
const ACTIVE = ["Started", "InProgress"];

interface MonitorJobRow {
  id: string;
  monitor_ref: string;
  job_id: string | null;
  status: MonitorJobStatus;
  error_message: string | null;
  output: string | null;
  definition_name: string;
  definition_version: string;
  location: string;
  parameters: string;
  trigger_kind: string;
  run_key: string | null;
  deadline_at: string;
  created_at: string;
  completed_at: string | null;
  trigger_depth: number;
  reports: string | null;
  evaluated_at: string | null;
}

/** Monitor jobs as answered, with their monitors' numbers and names in one query whatever their number. */
export async function toMonitorJobs(db: Database, rows: readonly MonitorJobRow[]) {
  if (rows.length === 0) return [];
  const ids = JSON.stringify([...new Set(rows.map((r) => r.monitor_ref))]);
  const { results } = await db
    .prepare("SELECT id, monitor_id, name FROM monitors WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(ids)
    .all<{ id: string; monitor_id: string; name: string }>();
  const monitors = new Map(results.map((m) => [m.id, m]));
  return rows.map((r) => monitorJobOf(r, monitors.get(r.monitor_ref)));
}

export async function toMonitorJob(db: Database, r: MonitorJobRow) {
  return (await toMonitorJobs(db, [r]))[0]!;
}

function monitorJobOf(r: MonitorJobRow, monitor: { monitor_id: string; name: string } | undefined) {
  return {
    id: r.id,
    monitor: { id: r.monitor_ref, monitorId: monitor?.monitor_id ?? "", name: monitor?.name ?? "" },
    jobId: r.job_id,
    modelDefinitionName: r.definition_name,
    modelDefinitionVersion: r.definition_version,
    status: r.status,
    parameters: JSON.parse(r.parameters) as Record<string, string>,
    errorMessage: r.error_message,
    output: r.output,
    trigger: r.trigger_kind,
    createdDate: r.created_at,
    completedDate: r.completed_at,
  };
}

export async function getMonitorJobRow(db: Database, id: string): Promise<MonitorJobRow> {
  const row = await db.prepare("SELECT * FROM monitor_jobs WHERE id = ?1").bind(id).first<MonitorJobRow>();
  if (!row) throw notFound("Monitor job", id);
  return row;
}

export async function listMonitorJobs(db: Database, monitorIds: string[]) {
  const { results } = monitorIds.length
    ? await db
        .prepare(
          `SELECT * FROM monitor_jobs WHERE monitor_ref IN (${monitorIds.map((_, i) => `?${i + 1}`).join(", ")}) ORDER BY ` +
            `created_at DESC LIMIT 500`,
        )
        .bind(...monitorIds)
        .all<MonitorJobRow>()
    : await db.prepare("SELECT * FROM monitor_jobs ORDER BY created_at DESC LIMIT 500").all<MonitorJobRow>();
  return toMonitorJobs(db, results);
}

/** Up to this many asset ids travel in the `populationAssetIds` variable (37 bytes each: 37 KB, far below what an environment holds). */
export const POPULATION_IDS_IN_ENVIRONMENT = 1000;

/** Every distinct asset of the monitor's population items, a page at a time, by asset id. */
const POPULATION_ASSETS = `SELECT DISTINCT i.asset_id FROM population_items i JOIN populations p ON p.id = i.population_id
  WHERE p.owner_kind = 'monitor' AND p.owner_id = ?1`;

export async function populationAssetCount(db: Database, monitorRef: string): Promise<number> {
  const row = await db.prepare(`SELECT count(*) AS n FROM (${POPULATION_ASSETS})`).bind(monitorRef).first<{ n: number }>();
  return row?.n ?? 0;
}

export async function populationAssetPage(db: Database, monitorRef: string, skip: number, take: number): Promise<string[]> {
  const { results } = await db
    .prepare(`${POPULATION_ASSETS} ORDER BY i.asset_id LIMIT ?2 OFFSET ?3`)
    .bind(monitorRef, take, skip)
    .all<{ asset_id: string }>();
  return results.map((r) => r.asset_id);
}

/**
 * The variables that tell a model which assets to score, every one of them: `populationAssetCount`;
 * `populationAssetIdsPath`, the API path (after INTEGRITY_EDGE_API_URL) that pages the ids with the
 * job's own token; and, when there are at most POPULATION_IDS_IN_ENVIRONMENT, `populationAssetIds`
 * (comma-separated, all of them). Past that it is left out rather than cut short, so a model never
 * scores part of its population believing it has all of it.
 */
async function populationParameters(db: Database, monitorRef: string, monitorJobId: string): Promise<Record<string, string>> {
  const count = await populationAssetCount(db, monitorRef);
  const parameters: Record<string, string> = {
    [MONITOR_JOB_VARIABLES.populationAssetCount]: String(count),
    [MONITOR_JOB_VARIABLES.populationAssetIdsPath]: `/MonitorJobs/${monitorJobId}/PopulationAssetIds`,
  };
  if (count <= POPULATION_IDS_IN_ENVIRONMENT)
    parameters[MONITOR_JOB_VARIABLES.populationAssetIds] = (
      await populationAssetPage(db, monitorRef, 0, POPULATION_IDS_IN_ENVIRONMENT)
    ).join(",");
  return parameters;
}

/**
 * Starts a monitor job. With a run key (a schedule occurrence, an event), a second trigger with the
 * same key returns the first job and starts nothing.
 */
export async function executeMonitor(
  env: Bindings,
  monitorRef: string,
  trigger: string,
  runKey: string | null,
  now = new Date(),
  triggerDepth = 0,
): Promise<{ row: MonitorJobRow; created: boolean }> {
  const monitor = await getMonitorRow(env.DB, monitorRef);
  const model = await getModelRow(env.DB, monitor.model_ref);
  const definition = await findDefinitionByVersion(env.DB, model.definition_name, model.definition_version);
  if (!definition)
    throw new ApiError(
      "Conflict",
      `Model ${model.model_id}'s definition ${model.definition_name} ${model.definition_version} no longer exists.`,
    );
  // An ACR model runs on the container host: none configured is a 501 before a monitor job exists.
  if (definition.location === "ACR") requireHost(env);
  const effective = effectiveOf(monitor, model);
  const id = crypto.randomUUID();
  const parameters = {
    ...effective.staticParameters,
    ...effective.configurableParameters,
    [MONITOR_JOB_VARIABLES.monitorId]: monitor.monitor_id,
    ...(await populationParameters(env.DB, monitor.id, id)),
  };
  const nowIso = now.toISOString();
  const deadline = new Date(now.getTime() + MONITOR_JOB_DEADLINE_MINUTES * 60_000).toISOString();
  try {
    await env.DB.prepare(
      `INSERT INTO monitor_jobs (id, monitor_ref, status, definition_name, definition_version, location, parameters,
      trigger_kind, run_key, deadline_at, created_at, updated_at, trigger_depth)
       VALUES (?1, ?2, 'Started', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)`,
    )
      .bind(
        id,
        monitor.id,
        model.definition_name,
        model.definition_version,
        definition.location,
        JSON.stringify(parameters),
        trigger,
        runKey,
        deadline,
        nowIso,
        triggerDepth,
      )
      .run();
  } catch (error) {
    if (runKey && isUniqueViolation(error)) {
      const first = await env.DB.prepare("SELECT * FROM monitor_jobs WHERE run_key = ?1").bind(runKey).first<MonitorJobRow>();
      if (first) return { row: first, created: false };
    }
    throw error;
  }
  if (definition.location === "ACR") {
    const { jobId } = await startAdHocJob(env, {
      image: `${definition.name}:${definition.version}`,
      runCommand: null,
      cpuCores: effective.cpuCores,
      memoryGb: effective.memory,
      gpuCores: effective.gpuCores,
      gpuSku: effective.gpuSku,
      environment: parameters,
      timeoutSeconds: (MONITOR_JOB_DEADLINE_MINUTES - 5) * 60,
      objectOwnerId: monitor.owner_id,
      endHook: { kind: MONITOR_JOB_HOOK, ref: id },
    });
    await env.DB.prepare("UPDATE monitor_jobs SET job_id = ?1, status = 'InProgress', updated_at = ?2 WHERE id = ?3 AND status = 'Started'")
      .bind(jobId, nowIso, id)
      .run();
  }
  return { row: await getMonitorJobRow(env.DB, id), created: true };
}

/**
 * The bearer token an External model's system uses to report one run's status: that monitor job's
 * alone, valid while it is Started or InProgress (src/pkg/auth.ts), so a token of an ended run no
 * longer works. Recomputed from the run's id: nothing secret is stored.
 */
export const monitorJobStatusToken = (env: Bindings, monitorJobId: string) => scopedTokenFor(env, "monitorjob", monitorJobId);

export interface CriticalityReport {
  assetId: string;
  criticality: number;
}

/** Reads `{ criticality: [{ assetId, criticality }] }` reports; returns them and the problems with the entries that were refused. */
export function criticalityReports(outputs: unknown[]): { reports: CriticalityReport[]; problems: string[] } {
  const reports: CriticalityReport[] = [];
  const problems: string[] = [];
  for (const output of outputs) {
    const list = (output as { criticality?: unknown } | null)?.criticality;
    if (!Array.isArray(list)) continue;
    for (const [i, entry] of list.entries()) {
      const { assetId, criticality } = (entry ?? {}) as { assetId?: unknown; criticality?: unknown };
      if (
        typeof assetId !== "string" ||
        typeof criticality !== "number" ||
        !Number.isFinite(criticality) ||
        criticality < 0 ||
        criticality > 100
      ) {
        problems.push(`criticality[${i}] is not { assetId: string, criticality: 0 to 100 }`);
      } else reports.push({ assetId, criticality });
    }
  }
  return { reports, problems };
}

/** Applies reported criticality to the monitor's items of each asset, with history (once per job and item). */
export async function applyCriticality(
  db: Database,
  monitorRef: string,
  monitorJobId: string,
  reports: CriticalityReport[],
  nowIso: string,
): Promise<number> {
  if (reports.length === 0) return 0;
  const statements = reports.flatMap((r) => [
    db
      .prepare(
        `INSERT OR IGNORE INTO criticality_history (id, item_id, monitor_job_id, criticality, recorded_at)
         SELECT lower(hex(randomblob(16))), i.id, ?1, ?2, ?3 FROM population_items i JOIN populations p ON p.id = i.population_id
         WHERE p.owner_kind = 'monitor' AND p.owner_id = ?4 AND i.asset_id = ?5`,
      )
      .bind(monitorJobId, r.criticality, nowIso, monitorRef, r.assetId),
    db
      .prepare(
        `UPDATE population_items SET criticality = ?1, last_monitor_job_id = ?2
         WHERE asset_id = ?3 AND population_id IN (SELECT id FROM populations WHERE owner_kind = 'monitor' AND owner_id = ?4)`,
      )
      .bind(r.criticality, monitorJobId, r.assetId, monitorRef),
  ]);
  const results = await db.batch(statements);
  return results.filter((_, i) => i % 2 === 1).reduce((n, r) => n + (r.meta.changes ?? 0), 0);
}

/**
 * The statuses a monitor job may be in when it moves to `status`: a job only moves forward (Started,
 * then InProgress, then one end: Succeeded, Failed or Unknown), and a repeat of its current active
 * status is harmless. An ended job never changes again; InProgress never goes back to Started.
 */
export function statusesBefore(status: MonitorJobStatus): readonly MonitorJobStatus[] {
  return status === "Started" ? ["Started"] : ["Started", "InProgress"];
}

/** At most this many asset ids are named in a job's error message; the rest are counted. */
const NAMED_ASSETS = 20;

/** What a model reported for one job: criticality and variables per asset. */
export interface ModelReports {
  criticality: CriticalityReport[];
  variables: VariableReport[];
}

/** Reads both kinds of report from job outputs (or a status PUT's body); the problems name the refused entries. */
export function modelReports(outputs: unknown[]): { reports: ModelReports; problems: string[] } {
  const criticality = criticalityReports(outputs);
  const variables = variableReports(outputs);
  const problems = [
    ...(criticality.problems.length ? [`Criticality ignored: ${criticality.problems.join("; ")}.`] : []),
    ...(variables.problems.length ? [`Variables ignored: ${variables.problems.join("; ")}.`] : []),
  ];
  return { reports: { criticality: criticality.reports, variables: variables.reports }, problems };
}

/** The reported assets that no population item of the monitor references (in report order, once each). */
async function assetsOutsidePopulations(db: Database, monitorRef: string, reports: readonly { assetId: string }[]): Promise<string[]> {
  const asked = [...new Set(reports.map((r) => r.assetId))];
  if (asked.length === 0) return [];
  const { results } = await db
    .prepare(
      `SELECT DISTINCT i.asset_id FROM population_items i JOIN populations p ON p.id = i.population_id
       WHERE p.owner_kind = 'monitor' AND p.owner_id = ?1 AND i.asset_id IN (SELECT value FROM json_each(?2))`,
    )
    .bind(monitorRef, JSON.stringify(asked))
    .all<{ asset_id: string }>();
  const known = new Set(results.map((r) => r.asset_id));
  return asked.filter((id) => !known.has(id));
}

/** "Criticality ignored for 3 assets outside the monitor's populations: a, b, c." (the first 20 named, the rest counted). */
export function outsideMessage(assetIds: string[], what = "Criticality"): string | null {
  if (assetIds.length === 0) return null;
  const named = assetIds.slice(0, NAMED_ASSETS).join(", ");
  const more = assetIds.length > NAMED_ASSETS ? ` and ${assetIds.length - NAMED_ASSETS} more` : "";
  return (
    `${what} ignored for ${assetIds.length} asset${assetIds.length === 1 ? "" : "s"} outside the monitor's ` +
    `populations: ${named}${more}.`
  );
}

/** Who the loop's writes are by: no person (actor null), in the request that reported the end when there is one. */
export interface FinishContext {
  requestId: string | null;
}

/**
 * Moves a monitor job forward (see {@link statusesBefore}); false when it may not (it ended, or the
 * move would go backwards). A Succeeded job keeps what the model reported, its criticality is applied
 * and its controllers evaluated; reported assets that no item of the monitor references are named in
 * its error message, never dropped in silence. A Succeeded job that was not evaluated yet (a crash
 * after the status was written) is evaluated when its end comes again, whether or not it moves.
 */
export async function finishMonitorJob(
  env: Bindings,
  row: MonitorJobRow,
  status: MonitorJobStatus,
  error: string | null,
  output: string | null,
  reports: ModelReports,
  nowIso: string,
  context: FinishContext = { requestId: null },
): Promise<boolean> {
  const db = env.DB;
  const ended = status === "Succeeded" || status === "Failed" || status === "Unknown";
  // One query for both kinds of report: the assets that no item of the monitor references.
  const unknown =
    status === "Succeeded"
      ? new Set(await assetsOutsidePopulations(db, row.monitor_ref, [...reports.criticality, ...reports.variables]))
      : new Set<string>();
  const outsideOf = (list: readonly { assetId: string }[]) => [...new Set(list.map((r) => r.assetId))].filter((id) => unknown.has(id));
  const outside =
    unknown.size > 0 ? [outsideMessage(outsideOf(reports.criticality)), outsideMessage(outsideOf(reports.variables), "Variables")] : [];
  const message = [error, ...outside].filter(Boolean).join(" ") || null;
  const from = statusesBefore(status);
  // A monitor without controllers and without active alarms has nothing to evaluate: the job is
  // marked evaluated by its status update itself, so monitors that only score cost no more than before.
  // The status change and its event (`monitorJob` updated, with the status: how subscribers hear a
  // monitor job end) in one batch; the event only when the change applied.
  const [change] = await db.batch([
    db
      .prepare(
        `UPDATE monitor_jobs SET status = ?1, error_message = ?2, output = coalesce(?3, output), completed_at = ?4, updated_at
        = ?5, reports = coalesce(?8, reports),
           evaluated_at = CASE WHEN ?1 = 'Succeeded'
                                AND (SELECT controllers FROM monitors WHERE id = monitor_jobs.monitor_ref) = '[]'
                                AND NOT EXISTS (SELECT 1 FROM monitor_alarms WHERE monitor_ref = monitor_jobs.monitor_ref AND
                                active_key IS NOT NULL)
                               THEN ?5 ELSE evaluated_at END
         WHERE id = ?6 AND status IN (SELECT value FROM json_each(?7))
         RETURNING evaluated_at`,
      )
      .bind(
        status,
        message,
        output,
        ended ? nowIso : null,
        nowIso,
        row.id,
        JSON.stringify(from),
        status === "Succeeded" ? JSON.stringify(reports) : null,
      ),
    guardedOutboxStatement(
      db,
      { ...serviceEventContext(nowIso), requestId: context.requestId },
      {
        entityKind: "monitorJob",
        entityId: row.id,
        action: "updated",
        payload: { id: row.id, monitorId: row.monitor_ref, status, errorMessage: message, ended },
      },
      "previousChanged",
    ),
  ]);
  const updated = (change?.results[0] as { evaluated_at: string | null } | undefined) ?? null;
  const applied = updated !== null;
  if (applied && status === "Succeeded") await applyCriticality(db, row.monitor_ref, row.id, reports.criticality, nowIso);
  // Evaluated now when it just succeeded and has something to evaluate; when the end comes again, only if a crash left it unevaluated.
  const pending = applied ? status === "Succeeded" && updated.evaluated_at === null : status === "Succeeded" || row.status === "Succeeded";
  if (pending) await evaluateIfPending(env, row.id, context);
  return applied;
}

/**
 * Evaluates the controllers of a Succeeded monitor job that was not evaluated yet, on the variables
 * it kept, and marks it evaluated (adding what the evaluation had to say to its error message).
 */
export async function evaluateIfPending(
  env: Bindings,
  monitorJobId: string,
  context: FinishContext = { requestId: null },
): Promise<boolean> {
  const row = await env.DB.prepare("SELECT * FROM monitor_jobs WHERE id = ?1").bind(monitorJobId).first<MonitorJobRow>();
  if (!row || row.status !== "Succeeded" || row.evaluated_at !== null) return false;
  const reports = row.reports ? (JSON.parse(row.reports) as ModelReports) : { criticality: [], variables: [] };
  const events = { ...serviceEventContext(), requestId: context.requestId };
  const result = await evaluateControllers(env, row, reports.variables ?? [], events);
  const note = result.notes.join(" ") || null;
  await env.DB.prepare(
    `UPDATE monitor_jobs SET evaluated_at = ?1, error_message = CASE WHEN ?2 IS NULL THEN error_message ELSE
    trim(coalesce(error_message, '') || ' ' || ?2) END
     WHERE id = ?3 AND evaluated_at IS NULL`,
  )
    .bind(events.now, note, row.id)
    .run();
  return true;
}

/** Succeeded jobs left unevaluated (a crash between the status and the evaluation) for this long are evaluated by the cron. */
const EVALUATION_GRACE_MS = 60_000;

/** The minute cron's repair: evaluates Succeeded monitor jobs that ended a minute ago or more and were not evaluated. */
export async function evaluatePendingMonitorJobs(env: Bindings, now: Date): Promise<number> {
  const { results } = await env.DB.prepare(
    "SELECT id FROM monitor_jobs WHERE status = 'Succeeded' AND evaluated_at IS NULL AND completed_at < ?1 ORDER BY completed_at LIMIT 20",
  )
    .bind(new Date(now.getTime() - EVALUATION_GRACE_MS).toISOString())
    .all<{ id: string }>();
  let evaluated = 0;
  for (const { id } of results) if (await evaluateIfPending(env, id)) evaluated++;
  return evaluated;
}

export const MONITOR_JOB_HOOK = "monitor-job";

/** ACR models: the data processing job's end copied into the monitor job (Success becomes Succeeded). */
export const monitorJobEndHook: JobEndHook = {
  kind: MONITOR_JOB_HOOK,
  async onEnd(env: Bindings, ref: string, end: JobEnd) {
    const row = await env.DB.prepare("SELECT * FROM monitor_jobs WHERE id = ?1").bind(ref).first<MonitorJobRow>();
    if (!row) return;
    const { reports, problems } = modelReports(end.outputs.map((o) => o.output));
    const status: MonitorJobStatus = end.status === "Success" ? "Succeeded" : end.status === "Failed" ? "Failed" : "Unknown";
    const error = [end.errorMessage, ...problems].filter(Boolean).join(" ") || null;
    await finishMonitorJob(env, row, status, error, end.output, reports, new Date().toISOString());
  },
};

/**
 * Cancels a run that has not ended: it fails with "Cancelled by {name} at {time}." and its status token
 * stops working with it. An ACR model's data processing job is cancelled with it (its container
 * removed; its end, through the end hook, fails the run with the same message). False when the run
 * had already ended.
 */
export async function cancelMonitorJob(
  env: Bindings,
  row: MonitorJobRow,
  by: { id: string; name: string | null },
  now: Date,
  context: FinishContext,
): Promise<boolean> {
  if (!ACTIVE.includes(row.status)) return false;
  if (row.job_id) {
    const job = await env.DB.prepare("SELECT chain_id FROM jobs WHERE id = ?1").bind(row.job_id).first<{ chain_id: string }>();
    if (job) await runnerOf(env, job.chain_id).cancel(job.chain_id, row.job_id, by);
  }
  // An External model's run (or an ACR run whose job had ended or never started): ended here.
  const at = now.toISOString();
  const fresh = await getMonitorJobRow(env.DB, row.id);
  const empty = { criticality: [], variables: [] };
  await finishMonitorJob(env, fresh, "Failed", `Cancelled by ${by.name || by.id} at ${at}.`, null, empty, at, context);
  return true;
}

/** A monitor job never stays Started or InProgress past its deadline. Run by the minute cron. */
export async function expireMonitorJobs(env: Bindings, now: Date): Promise<number> {
  // The same minute, the repair of evaluations a crash left undone, and the causes of events the
  // queue has long delivered (kept as long as the outbox keeps its rows).
  await evaluatePendingMonitorJobs(env, now);
  await env.DB.prepare("DELETE FROM monitor_event_causes WHERE created_at < ?1")
    .bind(new Date(now.getTime() - OUTBOX_RETENTION_MS).toISOString())
    .run();
  const result = await env.DB.prepare(
    `UPDATE monitor_jobs SET status = 'Failed', error_message = 'No result before the deadline (' || deadline_at || ').',
    completed_at = ?1, updated_at = ?1
     WHERE status IN ('Started', 'InProgress') AND deadline_at < ?1`,
  )
    .bind(now.toISOString())
    .run();
  return result.meta.changes ?? 0;
}

/** Monitors' trigger schedules: one monitor job per due occurrence (its run key unique). */
export const monitorScheduleKind: ScheduleKind = {
  kind: MONITOR_SCHEDULE_KIND,
  async start(env: Bindings, runs: readonly DueRun[], log: Logger) {
    const failed: string[] = [];
    const startOne = async (run: DueRun) => {
      try {
        const monitor = await env.DB.prepare("SELECT status FROM monitors WHERE id = ?1")
          .bind(run.ownerId)
          .first<Pick<MonitorRow, "status">>();
        // Only Active monitors run on their schedule; a Draft or Deprecated one keeps its schedule for later.
        if (monitor?.status === "Active") await executeMonitor(env, run.ownerId, "schedule", run.runKey);
      } catch (error) {
        log.error("monitor job not started", { monitorId: run.ownerId, runKey: run.runKey, ...errorFields(error) });
        failed.push(run.runKey);
      }
    };
    // A few at a time, as the job-config kind does: each start is a handful of D1 round trips and a Durable Object call.
    await forEachLimited(runs, START_CONCURRENCY, startOne);
    return failed;
  },
};

export { ACTIVE as ACTIVE_MONITOR_JOB_STATUSES };
