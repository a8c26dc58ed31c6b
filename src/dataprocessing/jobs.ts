/**
 * Jobs in D1: creation of a chain (one job per config, created at once), reads, the list, and the
 * status writes the runner makes. A status write only ever moves a job out of Started/InProgress, so
 * an ended job is never resurrected by a late poll.
 */
import { tableStatements, type Database } from "../db/statements";
import { jobs } from "../db/schema";
import type { Bindings } from "../env";
import { outboxForRowsStatements, outboxStatements, serviceEventContext, type EventContext } from "../events/outbox";
import { isUniqueViolation, newEtagToken, parseJson, type WriteContext } from "../pkg/db";
import { notFound } from "../pkg/errors";
import type { RunnableConfig } from "./contract";
import { sealRunOptions, type RunOptions } from "./run-options";
import type { Job, JobStatus } from "./schema";

/** What a job runs, stored with it (the environment is sealed apart). */
export interface JobSpec {
  image: string;
  command: string | null;
  cpuCores: number;
  memoryGb: number;
  gpuCores: number | null;
  gpuSku: string | null;
  timeoutSeconds: number;
  outputTypeId: string | null;
  /** The API's base URL the container posts outputs to. */
  apiUrl: string;
}

export interface JobRow {
  id: string;
  configuration_id: string | null;
  chain_id: string;
  chain_position: number;
  status: JobStatus;
  error_message: string | null;
  output: string | null;
  output_truncated: number;
  spec: string;
  run_options_enc: string;
  run_key: string | null;
  end_hook_kind: string | null;
  end_hook_ref: string | null;
  output_rejections: string | null;
  started_at: string | null;
  ended_at: string | null;
  deadline_at: string | null;
  host_unreachable_since: string | null;
  cancelled_by_id: string | null;
  cancelled_by_name: string | null;
  cancelled_at: string | null;
  object_owner_id: string;
  object_owner_name: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

const jobTable = tableStatements(jobs);

/** The outbox entity kind of jobs. */
const JOB_KIND = "job";

/** Who changed a job's status: the person who cancelled it, else the service running it. */
const jobChangeContext = (now: string, cancelledById: string | null, cancelledByName: string | null): EventContext =>
  cancelledById === null
    ? serviceEventContext("job runner", now)
    : { ...serviceEventContext("job runner", now), actorId: cancelledById, actorName: cancelledByName, actorType: "user", cause: null };

export const ACTIVE_STATUSES: readonly JobStatus[] = ["Started", "InProgress"];
export const groupName = (jobId: string) => `containergroup-${jobId}`;

export function toJob(row: JobRow): Job {
  const spec = JSON.parse(row.spec) as JobSpec;
  return {
    id: row.id,
    jobId: row.id,
    configurationId: row.configuration_id,
    chainId: row.chain_id,
    chainPosition: row.chain_position,
    status: row.status,
    errorMessage: row.error_message,
    output: row.output,
    outputTruncated: row.output_truncated === 1,
    containerGroup: groupName(row.id),
    image: spec.image,
    outputRejections: parseJson(row.output_rejections) ?? [],
    startedAt: row.started_at,
    endedAt: row.ended_at,
    deadlineAt: row.deadline_at,
    cancelledBy: row.cancelled_at ? { id: row.cancelled_by_id, name: row.cancelled_by_name } : null,
    cancelledAt: row.cancelled_at,
    objectOwner: { id: row.object_owner_id, name: row.object_owner_name },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findJob(db: Database, id: string): Promise<JobRow | null> {
  return db.prepare("SELECT * FROM jobs WHERE id = ?1").bind(id).first<JobRow>();
}

/** A job's status, or null when there is no such job (one indexed read: a job token is checked on every request). */
export async function findJobStatus(db: Database, id: string): Promise<string | null> {
  return (await db.prepare("SELECT status FROM jobs WHERE id = ?1").bind(id).first<{ status: string }>())?.status ?? null;
}

export async function getJob(db: Database, id: string): Promise<JobRow> {
  const row = await findJob(db, id);
  if (!row) throw notFound("Job", id);
  return row;
}

export async function chainJobs(db: Database, chainId: string): Promise<JobRow[]> {
  const { results } = await db.prepare("SELECT * FROM jobs WHERE chain_id = ?1 ORDER BY chain_position").bind(chainId).all<JobRow>();
  return results;
}

/** One job to create: what it runs and its options (already merged). */
export interface PlannedJob {
  configurationId: string | null;
  spec: JobSpec;
  runOptions: RunOptions;
}

export function plannedFromConfig(config: RunnableConfig, runOptions: RunOptions, apiUrl: string): PlannedJob {
  return {
    configurationId: config.id,
    runOptions,
    spec: {
      image: config.image,
      command: config.runCommand,
      cpuCores: config.cpuCores,
      memoryGb: config.memoryGb,
      gpuCores: config.gpuCores,
      gpuSku: config.gpuSku,
      timeoutSeconds: config.timeoutSeconds,
      outputTypeId: config.outputTypeId,
      apiUrl,
    },
  };
}

export interface NewChain {
  jobs: PlannedJob[];
  owner: { id: string; name: string | null };
  /** The schedule occurrence that creates the chain; a second creation with the same key returns the first chain. */
  runKey?: string | null;
  endHook?: { kind: string; ref: string } | null;
}

/**
 * Creates every job of a chain in one batch, all Started (created, not run yet). Returns the chain
 * id and job ids; when `runKey` was used before, returns that chain instead and `created: false`.
 */
export async function createChain(
  ctx: WriteContext,
  env: Bindings,
  chain: NewChain,
): Promise<{ chainId: string; jobIds: string[]; created: boolean }> {
  const chainId = ctx.uuid();
  const jobIds = chain.jobs.map(() => ctx.uuid());
  const statements: D1PreparedStatement[] = [];
  for (const [position, job] of chain.jobs.entries()) {
    const id = jobIds[position]!;
    const sealed = await sealRunOptions(env, job.runOptions);
    statements.push(
      jobTable.insert(ctx.db, {
        id,
        configurationId: job.configurationId,
        chainId,
        chainPosition: position,
        status: "Started",
        spec: JSON.stringify(job.spec),
        runOptionsEnc: sealed,
        runKey: position === 0 ? (chain.runKey ?? null) : null,
        endHookKind: chain.endHook?.kind ?? null,
        endHookRef: chain.endHook?.ref ?? null,
        objectOwnerId: chain.owner.id,
        objectOwnerName: chain.owner.name,
        etag: newEtagToken(),
        createdAt: ctx.now,
        updatedAt: ctx.now,
        createdBy: ctx.actorId,
      }),
      // The event names the job, never its options.
      ...outboxStatements(ctx.db, ctx, {
        entityKind: JOB_KIND,
        entityId: id,
        action: "created",
        payload: { id, chainId, configurationId: job.configurationId, status: "Started" },
      }),
    );
  }
  try {
    await ctx.db.batch(statements);
  } catch (error) {
    if (chain.runKey && isUniqueViolation(error)) {
      const first = await ctx.db.prepare("SELECT chain_id FROM jobs WHERE run_key = ?1").bind(chain.runKey).first<{ chain_id: string }>();
      if (first) {
        const existing = await chainJobs(ctx.db, first.chain_id);
        return { chainId: first.chain_id, jobIds: existing.map((j) => j.id), created: false };
      }
    }
    throw error;
  }
  return { chainId, jobIds, created: true };
}

/** Largest output tail kept on a job. */
export const OUTPUT_TAIL_BYTES = 64 * 1024;

/**
 * A job's representation in its `updated` event, read from its row in SQL (so the event can sit in the
 * same batch as the change): never its spec or run options. Subscribers match on `status`
 * (docs/decisions.md, "Webhooks": a job that failed is `job.updated` with status Failed).
 */
const JOB_EVENT_PAYLOAD =
  "json_object('id', id, 'chainId', chain_id, 'configurationId', configuration_id, 'status', status, " +
  "'errorMessage', error_message, 'startedAt', started_at, 'endedAt', ended_at, 'cancelledAt', cancelled_at)";

/**
 * Moves an active job to a new state; no effect on a job that has already ended. Returns whether it
 * applied. A change of status writes the job's `updated` event in the same batch, only when it applied.
 */
export async function updateActiveJob(
  db: Database,
  id: string,
  now: string,
  changes: Partial<{
    status: JobStatus;
    error_message: string | null;
    output: string | null;
    output_truncated: number;
    started_at: string;
    ended_at: string;
    deadline_at: string;
    host_unreachable_since: string | null;
    cancelled_by_id: string | null;
    cancelled_by_name: string | null;
    cancelled_at: string;
  }>,
): Promise<boolean> {
  const entries = Object.entries(changes);
  const sets = entries.map(([column], i) => `${column} = ?${i + 3}`);
  const update = db
    .prepare(
      `UPDATE jobs SET ${[...sets, "etag = ?2", `updated_at = ?${entries.length + 3}`].join(", ")} WHERE id = ?1 AND ` +
        `status IN ('Started', 'InProgress')`,
    )
    .bind(id, newEtagToken(), ...entries.map(([, value]) => value), now);
  if (changes.status === undefined) return (await update.run()).meta.changes === 1;
  const [result] = await db.batch([
    update,
    ...outboxForRowsStatements(
      db,
      jobChangeContext(now, changes.cancelled_by_id ?? null, changes.cancelled_by_name ?? null),
      { entityKind: JOB_KIND, action: "updated" },
      { sql: `SELECT id AS entity_id, ${JOB_EVENT_PAYLOAD} AS payload FROM jobs WHERE id = ?1 AND changes() > 0`, bindings: [id] },
    ),
  ]);
  return result?.meta.changes === 1;
}

/** Who cancelled a job, and when (the job stays Failed, as the spec's statuses have no Cancelled). */
export interface Cancellation {
  by: { id: string; name: string | null };
  at: string;
}

/**
 * Fails every job of the chain after `position` that has not ended, naming the job that failed; when
 * that job was cancelled, the later ones are cancelled by the same person (a cancellation stops the chain).
 */
export async function failLaterJobs(
  db: Database,
  chainId: string,
  position: number,
  failedJobId: string,
  reason: string,
  now: string,
  cancellation: Cancellation | null = null,
): Promise<void> {
  const message = `Not run: job ${failedJobId} earlier in the chain failed (${reason}).`;
  await db.batch([
    db
      .prepare(
        `UPDATE jobs SET status = 'Failed', error_message = ?1, ended_at = ?2, updated_at = ?2, etag = lower(hex(randomblob(10))),
           cancelled_by_id = ?5, cancelled_by_name = ?6, cancelled_at = ?7
         WHERE chain_id = ?3 AND chain_position > ?4 AND status IN ('Started', 'InProgress')`,
      )
      .bind(message, now, chainId, position, cancellation?.by.id ?? null, cancellation?.by.name ?? null, cancellation?.at ?? null),
    // Each job failed just now gets its `updated` event (the rows the statement above changed).
    ...outboxForRowsStatements(
      db,
      jobChangeContext(now, cancellation?.by.id ?? null, cancellation?.by.name ?? null),
      { entityKind: JOB_KIND, action: "updated" },
      {
        sql:
          `SELECT id AS entity_id, ${JOB_EVENT_PAYLOAD} AS payload FROM jobs WHERE changes() > 0 AND chain_id = ?1 AND ` +
          "chain_position > ?2 AND status = 'Failed' AND ended_at = ?3 AND error_message = ?4",
        bindings: [chainId, position, now, message],
      },
    ),
  ]);
}

/** Rule 6's record: an output the job posted that its type refused (the newest 20 are kept). */
export async function recordOutputRejection(
  db: Database,
  job: JobRow,
  rejection: { at: string; jobOutputTypeId: string | null; errors: string[] },
): Promise<void> {
  const list = [...(parseJson<unknown[]>(job.output_rejections) ?? []), rejection].slice(-20);
  await db.prepare("UPDATE jobs SET output_rejections = ?1 WHERE id = ?2").bind(JSON.stringify(list), job.id).run();
}
