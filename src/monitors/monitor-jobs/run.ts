/**
 * A monitor job's life: one run of a monitor's model, triggered by its schedule, by an event, or on
 * demand. ACR models run as a data processing job whose end is copied back (Success becomes
 * Succeeded); External models are told about the run by their own system, which reports the status
 * with `PUT /MonitorJobs/{id}/{status}` and the run's status token.
 *
 * When a job succeeds, what its model reported is applied: criticality on the monitor's items of
 * each asset (with their history), and the monitor's controllers are evaluated on the variables
 * (../alarms/evaluation.ts). The job keeps the reports and its evaluation mark, so a job end
 * delivered again, or the minute cron after a crash, evaluates a Succeeded job that was not yet.
 */
import type { Bindings } from "../../env";
import type { JobEnd, JobEndHook } from "../../dataprocessing/contract";
import { runnerOf, START_CONCURRENCY, startAdHocJob } from "../../dataprocessing/execution";
import { requireHost } from "../../dataprocessing/host-errors";
import { signScopedToken } from "../../pkg/keys";
import { guardedOutboxStatements, OUTBOX_RETENTION_MS, serviceEventContext } from "../../events/outbox";
import { forEachLimited } from "../../pkg/concurrency";
import { isUniqueViolation } from "../../pkg/db";
import { ApiError } from "../../pkg/errors";
import { errorFields, type Logger } from "../../pkg/logger";
import type { DueRun, ScheduleKind } from "../../pkg/schedule";
import { platform } from "../../platform/services";
import { evaluateControllers } from "../alarms/evaluation";
import { pruneEventCausesStatement } from "../alarms/causes";
import { findDefinitionByVersion } from "../model-definitions/store";
import { getModelRow } from "../models/store";
import { effectiveOf, getMonitorRow, MONITOR_SCHEDULE_KIND } from "../monitors/store";
import { assetsOutsideMonitor, monitorAssetCount, monitorAssetPage, reportedCriticalityStatements } from "../populations/store";
import { modelReports, outsideMessage, type ModelReports } from "./reports";
import { MONITOR_JOB_VARIABLES, type MonitorJobStatus } from "./schema";
import {
  ACTIVE_MONITOR_JOB_STATUSES,
  expireStatement,
  findMonitorJobByRunKey,
  findMonitorJobRow,
  getMonitorJobRow,
  insertMonitorJobStatement,
  markEvaluatedStatement,
  markRunningStatement,
  moveStatusStatement,
  statusOf,
  unevaluatedJobIds,
  type MonitorJobRow,
} from "./store";

/** How long a monitor job may stay Started or InProgress. */
const MONITOR_JOB_DEADLINE_MINUTES = 120;

/** Up to this many asset ids travel in the `populationAssetIds` variable (37 bytes each: 37 KB, far below what an environment holds). */
export const POPULATION_IDS_IN_ENVIRONMENT = 1000;

/**
 * The variables that tell a model which assets to score, every one of them: `populationAssetCount`;
 * `populationAssetIdsPath`, the API path (after INTEGRITY_EDGE_API_URL) that pages the ids with the
 * job's own token; and, when there are at most POPULATION_IDS_IN_ENVIRONMENT, `populationAssetIds`
 * (comma-separated, all of them). Past that it is left out rather than cut short, so a model never
 * scores part of its population believing it has all of it.
 */
async function populationParameters(env: Bindings, monitorRef: string, monitorJobId: string): Promise<Record<string, string>> {
  const count = await monitorAssetCount(env.DB, monitorRef);
  const parameters: Record<string, string> = {
    [MONITOR_JOB_VARIABLES.populationAssetCount]: String(count),
    [MONITOR_JOB_VARIABLES.populationAssetIdsPath]: `/MonitorJobs/${monitorJobId}/PopulationAssetIds`,
  };
  if (count <= POPULATION_IDS_IN_ENVIRONMENT)
    parameters[MONITOR_JOB_VARIABLES.populationAssetIds] = (
      await monitorAssetPage(env.DB, monitorRef, 0, POPULATION_IDS_IN_ENVIRONMENT)
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
  now = platform().clock.now(),
  triggerDepth = 0,
): Promise<{ row: MonitorJobRow; created: boolean }> {
  const monitor = await getMonitorRow(env.DB, monitorRef);
  const model = await getModelRow(env.DB, monitor.modelRef);
  const definition = await findDefinitionByVersion(env.DB, model.definitionName, model.definitionVersion);
  if (!definition)
    throw new ApiError(
      "Conflict",
      `Model ${model.modelId}'s definition ${model.definitionName} ${model.definitionVersion} no longer exists.`,
    );
  // An ACR model runs on the container host: none configured is a 501 before a monitor job exists.
  if (definition.location === "ACR") requireHost(env);
  const effective = effectiveOf(monitor, model);
  const id = platform().ids.uuid();
  const parameters = {
    ...effective.staticParameters,
    ...effective.configurableParameters,
    [MONITOR_JOB_VARIABLES.monitorId]: monitor.monitorId,
    ...(await populationParameters(env, monitor.id, id)),
  };
  const nowIso = now.toISOString();
  try {
    await insertMonitorJobStatement(env.DB, {
      id,
      monitorRef: monitor.id,
      definitionName: model.definitionName,
      definitionVersion: model.definitionVersion,
      location: definition.location,
      parameters: JSON.stringify(parameters),
      trigger,
      runKey,
      deadlineAt: new Date(now.getTime() + MONITOR_JOB_DEADLINE_MINUTES * 60_000).toISOString(),
      createdAt: nowIso,
      triggerDepth,
    }).run();
  } catch (error) {
    if (runKey && isUniqueViolation(error)) {
      const first = await findMonitorJobByRunKey(env.DB, runKey);
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
      objectOwnerId: monitor.ownerId,
      endHook: { kind: MONITOR_JOB_HOOK, ref: id },
    });
    await markRunningStatement(env.DB, id, jobId, nowIso).run();
  }
  return { row: await getMonitorJobRow(env.DB, id), created: true };
}

/**
 * The bearer token an External model's system uses to report one run's status: that monitor job's
 * alone, valid while it is Started or InProgress (src/pkg/auth.ts), so a token of an ended run no
 * longer works. Recomputed from the run's id: nothing secret is stored.
 */
export const monitorJobStatusToken = (env: Bindings, monitorJobId: string) => signScopedToken(env, "monitorjob", monitorJobId);

/**
 * The statuses a monitor job may be in when it moves to `status`: a job only moves forward (Started,
 * then InProgress, then one end: Succeeded, Failed or Unknown), and a repeat of its current active
 * status is harmless. An ended job never changes again; InProgress never goes back to Started.
 */
function statusesBefore(status: MonitorJobStatus): readonly MonitorJobStatus[] {
  return status === "Started" ? ["Started"] : ["Started", "InProgress"];
}

/** Who the loop's writes are by: no person (actor null), in the request that reported the end when there is one. */
interface FinishContext {
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
      ? new Set(
          await assetsOutsideMonitor(
            db,
            row.monitorRef,
            [...reports.criticality, ...reports.variables].map((r) => r.assetId),
          ),
        )
      : new Set<string>();
  const outsideOf = (list: readonly { assetId: string }[]) => [...new Set(list.map((r) => r.assetId))].filter((id) => unknown.has(id));
  const outside =
    unknown.size > 0 ? [outsideMessage(outsideOf(reports.criticality)), outsideMessage(outsideOf(reports.variables), "Variables")] : [];
  const message = [error, ...outside].filter(Boolean).join(" ") || null;
  // The status change and its event (`monitorJob` updated, with the status: how subscribers hear a
  // monitor job end) in one batch; the event only when the change applied.
  const [change] = await db.batch<Record<string, unknown>>([
    moveStatusStatement(db, {
      id: row.id,
      status,
      from: statusesBefore(status),
      errorMessage: message,
      output,
      completedAt: ended ? nowIso : null,
      reports: status === "Succeeded" ? JSON.stringify(reports) : null,
      now: nowIso,
    }),
    ...guardedOutboxStatements(
      db,
      { ...serviceEventContext("monitoring loop", nowIso), requestId: context.requestId },
      {
        entityKind: "monitorJob",
        entityId: row.id,
        action: "updated",
        payload: { id: row.id, monitorId: row.monitorRef, status, errorMessage: message, ended },
      },
      "previousChanged",
    ),
  ]);
  const moved = change?.results[0];
  const applied = moved !== undefined;
  if (applied && status === "Succeeded" && reports.criticality.length > 0)
    await db.batch(reportedCriticalityStatements(db, row.monitorRef, row.id, reports.criticality, nowIso));
  // Evaluated now when it just succeeded and has something to evaluate; when the end comes again, only if a crash left it unevaluated.
  const pending = applied
    ? status === "Succeeded" && (moved.evaluated_at ?? null) === null
    : status === "Succeeded" || statusOf(row) === "Succeeded";
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
  const row = await findMonitorJobRow(env.DB, monitorJobId);
  if (!row || statusOf(row) !== "Succeeded" || row.evaluatedAt !== null) return false;
  const reports = row.reports ? (JSON.parse(row.reports) as ModelReports) : { criticality: [], variables: [] };
  const events = { ...serviceEventContext("monitoring loop"), requestId: context.requestId };
  const result = await evaluateControllers(
    env,
    { id: row.id, monitor_ref: row.monitorRef, created_at: row.createdAt, trigger_depth: row.triggerDepth },
    reports.variables ?? [],
    events,
  );
  await markEvaluatedStatement(env.DB, row.id, result.notes.join(" ") || null, events.now).run();
  return true;
}

/** Succeeded jobs left unevaluated (a crash between the status and the evaluation) for this long are evaluated by the cron. */
const EVALUATION_GRACE_MS = 60_000;

/** The minute cron's repair: evaluates Succeeded monitor jobs that ended a minute ago or more and were not evaluated. */
async function evaluatePendingMonitorJobs(env: Bindings, now: Date): Promise<number> {
  const ids = await unevaluatedJobIds(env.DB, new Date(now.getTime() - EVALUATION_GRACE_MS).toISOString(), 20);
  let evaluated = 0;
  for (const id of ids) if (await evaluateIfPending(env, id)) evaluated++;
  return evaluated;
}

const MONITOR_JOB_HOOK = "monitor-job";

/** ACR models: the data processing job's end copied into the monitor job (Success becomes Succeeded). */
export const monitorJobEndHook: JobEndHook = {
  kind: MONITOR_JOB_HOOK,
  async onEnd(env: Bindings, ref: string, end: JobEnd) {
    const row = await findMonitorJobRow(env.DB, ref);
    if (!row) return;
    const { reports, problems } = modelReports(end.outputs.map((o) => o.output));
    const status: MonitorJobStatus = end.status === "Success" ? "Succeeded" : end.status === "Failed" ? "Failed" : "Unknown";
    const error = [end.errorMessage, ...problems].filter(Boolean).join(" ") || null;
    await finishMonitorJob(env, row, status, error, end.output, reports, platform().clock.now().toISOString());
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
  if (!ACTIVE_MONITOR_JOB_STATUSES.includes(statusOf(row))) return false;
  if (row.jobId) {
    const job = await env.DB.prepare("SELECT chain_id FROM jobs WHERE id = ?1").bind(row.jobId).first<{ chain_id: string }>();
    if (job) await runnerOf(env, job.chain_id).cancel(job.chain_id, row.jobId, by);
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
  await pruneEventCausesStatement(env.DB, new Date(now.getTime() - OUTBOX_RETENTION_MS).toISOString()).run();
  const result = await expireStatement(env.DB, now.toISOString()).run();
  return result.meta.changes ?? 0;
}

/** Monitors' trigger schedules: one monitor job per due occurrence (its run key unique). */
export const monitorScheduleKind: ScheduleKind = {
  kind: MONITOR_SCHEDULE_KIND,
  async start(env: Bindings, runs: readonly DueRun[], log: Logger) {
    const failed: string[] = [];
    const startOne = async (run: DueRun) => {
      try {
        const monitor = await env.DB.prepare("SELECT status FROM monitors WHERE id = ?1").bind(run.ownerId).first<{ status: string }>();
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
