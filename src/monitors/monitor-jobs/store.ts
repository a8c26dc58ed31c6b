/**
 * Monitor jobs in D1: the owner of monitor_jobs. One row per run of a monitor's model; its status
 * only moves forward (Started, InProgress, then one end), which the status update's guard keeps.
 * What the model reported is kept on the row (`reports`) and `evaluated_at` says whether its
 * controllers were evaluated, so a job end delivered again, or the cron after a crash, evaluates a
 * Succeeded job once. The run's life (start, end, cancel, deadline) is ./run.ts.
 */
import { tableStatements, type Database, type Insert, type Row } from "../../db/statements";
import { monitorJobs } from "../../db/schema";
import { notFound } from "../../pkg/errors";
import { monitorNames } from "../monitors/store";
import { storedEnum } from "../stored";
import { MONITOR_JOB_STATUSES, type MonitorJobStatus } from "./schema";

const jobTable = tableStatements(monitorJobs);

export type MonitorJobRow = Row<typeof monitorJobs>;
/** A monitor job's row as read with every column, typed by the schema. */
export const monitorJobRow = (raw: Record<string, unknown>): MonitorJobRow => jobTable.row(raw);
const SELECT_JOB = `SELECT ${jobTable.columns} FROM monitor_jobs`;

/** The statuses of a job that has not ended. */
export const ACTIVE_MONITOR_JOB_STATUSES: readonly MonitorJobStatus[] = ["Started", "InProgress"];

export const statusOf = (row: MonitorJobRow): MonitorJobStatus => storedEnum(MONITOR_JOB_STATUSES, row.status, "monitor_jobs.status");

/** Monitor jobs as answered, with their monitors' numbers and names in one query whatever their number. */
async function toMonitorJobs(db: Database, rows: readonly MonitorJobRow[]) {
  if (rows.length === 0) return [];
  const monitors = await monitorNames(
    db,
    rows.map((r) => r.monitorRef),
  );
  return rows.map((r) => monitorJobOf(r, monitors.get(r.monitorRef)));
}

export async function toMonitorJob(db: Database, r: MonitorJobRow) {
  return (await toMonitorJobs(db, [r]))[0]!;
}

function monitorJobOf(r: MonitorJobRow, monitor: { monitorId: string; name: string } | undefined) {
  return {
    id: r.id,
    monitor: { id: r.monitorRef, monitorId: monitor?.monitorId ?? "", name: monitor?.name ?? "" },
    jobId: r.jobId,
    modelDefinitionName: r.definitionName,
    modelDefinitionVersion: r.definitionVersion,
    status: statusOf(r),
    parameters: JSON.parse(r.parameters) as Record<string, string>,
    errorMessage: r.errorMessage,
    output: r.output,
    trigger: r.trigger,
    createdDate: r.createdAt,
    completedDate: r.completedAt,
  };
}

export async function findMonitorJobRow(db: Database, id: string): Promise<MonitorJobRow | null> {
  const row = await db.prepare(`${SELECT_JOB} WHERE id = ?1`).bind(id).first<Record<string, unknown>>();
  return row ? monitorJobRow(row) : null;
}

export async function getMonitorJobRow(db: Database, id: string): Promise<MonitorJobRow> {
  const row = await findMonitorJobRow(db, id);
  if (!row) throw notFound("Monitor job", id);
  return row;
}

/** The job a trigger with this run key started (a schedule occurrence, an event), if any. */
export async function findMonitorJobByRunKey(db: Database, runKey: string): Promise<MonitorJobRow | null> {
  const row = await db.prepare(`${SELECT_JOB} WHERE run_key = ?1`).bind(runKey).first<Record<string, unknown>>();
  return row ? monitorJobRow(row) : null;
}

/**
 * The newest 500 monitor jobs, of the given monitors or of all. The monitors are bound one parameter
 * each (the original client names a few): `monitor_ref IN (?1, ...)` lets SQLite read the monitor
 * index in order, where a JSON list would make it sort (test/query/list-plans.test.ts).
 */
export async function listMonitorJobs(db: Database, monitorIds: string[]) {
  const { results } = monitorIds.length
    ? await db
        .prepare(
          `${SELECT_JOB} WHERE monitor_ref IN (${monitorIds.map((_, i) => `?${i + 1}`).join(", ")}) ORDER BY created_at DESC LIMIT 500`,
        )
        .bind(...monitorIds)
        .all<Record<string, unknown>>()
    : await db.prepare(`${SELECT_JOB} ORDER BY created_at DESC LIMIT 500`).all<Record<string, unknown>>();
  return toMonitorJobs(db, results.map(monitorJobRow));
}

/** The newest job of the monitor created after `createdAt` whose controllers were evaluated (for the evaluation's batch). */
export function newerEvaluatedJobStatement(db: Database, monitorRef: string, createdAt: string): D1PreparedStatement {
  return db
    .prepare(`${SELECT_JOB} WHERE monitor_ref = ?1 AND evaluated_at IS NOT NULL AND created_at > ?2 ORDER BY created_at DESC LIMIT 1`)
    .bind(monitorRef, createdAt);
}

/** Succeeded jobs that ended before `before` and were not evaluated (a crash between the status and the evaluation), oldest first. */
export async function unevaluatedJobIds(db: Database, before: string, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare(
      "SELECT id FROM monitor_jobs WHERE status = 'Succeeded' AND evaluated_at IS NULL AND completed_at < ?1 " +
        "ORDER BY completed_at LIMIT ?2",
    )
    .bind(before, limit)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

// --- Statements ------------------------------------------------------------------------------------

/** A new monitor job (Started; its run key unique, so a second trigger with the same key fails it). */
export function insertMonitorJobStatement(
  db: Database,
  job: Omit<Insert<typeof monitorJobs>, "status" | "updatedAt">,
): D1PreparedStatement {
  return jobTable.insert(db, { ...job, status: "Started", updatedAt: job.createdAt });
}

/** An ACR model's job started: the data processing job, and InProgress (only from Started). */
export function markRunningStatement(db: Database, id: string, jobId: string, now: string): D1PreparedStatement {
  return jobTable.update(db, { jobId, status: "InProgress", updatedAt: now }, { id, status: "Started" });
}

/** What a status change writes (see {@link moveStatusStatement}). */
interface StatusChange {
  id: string;
  status: MonitorJobStatus;
  /** The statuses the job may be in for the change to apply. */
  from: readonly MonitorJobStatus[];
  errorMessage: string | null;
  /** Kept when null. */
  output: string | null;
  completedAt: string | null;
  /** What the model reported (JSON), kept when null. */
  reports: string | null;
  now: string;
}

/**
 * Moves a job to `status` when it is in one of `from` (hand-written: values named in one JSON
 * parameter, some kept in SQL). RETURNING `evaluated_at`: no row when the move did not apply. A
 * Succeeded job of a monitor with no controllers and no active alarms has nothing to evaluate, so it
 * is marked evaluated by the same statement (monitors that only score cost no more than before).
 */
export function moveStatusStatement(db: Database, change: StatusChange): D1PreparedStatement {
  const v = (key: keyof StatusChange) => `json_extract(?1, '$.${key}')`;
  return db
    .prepare(
      `UPDATE monitor_jobs SET status = ${v("status")}, error_message = ${v("errorMessage")}, output = coalesce(${v("output")}, output),
         completed_at = ${v("completedAt")}, updated_at = ${v("now")}, reports = coalesce(${v("reports")}, reports),
         evaluated_at = CASE WHEN ${v("status")} = 'Succeeded'
                              AND (SELECT controllers FROM monitors WHERE id = monitor_jobs.monitor_ref) = '[]'
                              AND NOT EXISTS (SELECT 1 FROM monitor_alarms WHERE monitor_ref = monitor_jobs.monitor_ref AND
                              active_key IS NOT NULL)
                             THEN ${v("now")} ELSE evaluated_at END
       WHERE id = ${v("id")} AND status IN (SELECT value FROM json_each(?1, '$.from'))
       RETURNING evaluated_at`,
    )
    .bind(JSON.stringify(change));
}

/** Marks a Succeeded job evaluated, adding what the evaluation had to say to its error message (once: only if not evaluated yet). */
export function markEvaluatedStatement(db: Database, id: string, note: string | null, now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE monitor_jobs SET evaluated_at = ?1, error_message = CASE WHEN ?2 IS NULL THEN error_message ELSE
       trim(coalesce(error_message, '') || ' ' || ?2) END
       WHERE id = ?3 AND evaluated_at IS NULL`,
    )
    .bind(now, note, id);
}

/** Fails every job still Started or InProgress past its deadline. */
export function expireStatement(db: Database, now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE monitor_jobs SET status = 'Failed', error_message = 'No result before the deadline (' || deadline_at || ').',
       completed_at = ?1, updated_at = ?1
       WHERE status IN ('Started', 'InProgress') AND deadline_at < ?1`,
    )
    .bind(now);
}
