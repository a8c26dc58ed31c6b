/**
 * The job state machine, run by the JobRunner Durable Object of a chain (durable-objects/job-runner.ts),
 * which serialises every step of one chain: on creation, on its minute alarm, on a cron refresh and on
 * a cancellation.
 *
 *   Started --(container group started)--> InProgress --(exit 0)--> Success --> next job of the chain starts
 *      |                                       |--(exit != 0, lost container, time limit, host silent past deadline)--> Failed
 *      |--(cannot start before the deadline)--> Failed                                     --> later jobs of the chain Failed
 *   Started/InProgress --(Cancellation)--> Failed, cancelledBy/cancelledAt set              --> later jobs of the chain Failed
 * (and cancelled)
 *
 * Every host call is idempotent by group name, so a step interrupted anywhere (a Worker restart
 * mid-start) is simply run again by the next alarm; a job never waits past its deadline.
 */
import type { Bindings } from "../env";
import { errorFields, type Logger } from "../pkg/logger";
import type { JobEnd } from "./contract";
import { jobEndHooks } from "./end-hooks";
import { hostFor, HostUnavailableError, JOB_ENV, type GroupState } from "./host";
import {
  chainJobs,
  failLaterJobs,
  groupName,
  OUTPUT_TAIL_BYTES,
  updateActiveJob,
  type Cancellation,
  type JobRow,
  type JobSpec,
} from "./jobs";
import { jobTokenFor, openRunOptions } from "./run-options";

/** Time a run may exceed its own time limit (container start, the host's last report) before it fails. */
export const DEADLINE_GRACE_SECONDS = 120;

export interface StepResult {
  /** True while a job of the chain is still to run or running: poll again in a minute. */
  active: boolean;
}

function deadlineOf(spec: JobSpec, startedAt: Date): string {
  return new Date(startedAt.getTime() + (spec.timeoutSeconds + DEADLINE_GRACE_SECONDS) * 1000).toISOString();
}

async function environmentOf(env: Bindings, job: JobRow, spec: JobSpec): Promise<Record<string, string>> {
  const options = await openRunOptions(env, job.run_options_enc);
  const own: Record<string, string> = {
    [JOB_ENV.jobId]: job.id,
    [JOB_ENV.apiUrl]: spec.apiUrl,
    [JOB_ENV.token]: await jobTokenFor(env, job.id),
  };
  if (spec.outputTypeId) own[JOB_ENV.outputTypeId] = spec.outputTypeId;
  return { ...options, ...own };
}

function failureOf(state: GroupState): string {
  if (state.error) return state.error;
  return state.exitCode !== null ? `The container exited with code ${state.exitCode}.` : "The container failed.";
}

/** Advances the chain as far as it can go now. */
export async function advanceChain(env: Bindings, chainId: string, now: Date, log: Logger): Promise<StepResult> {
  const host = hostFor(env);
  const nowIso = now.toISOString();
  const jobs = await chainJobs(env.DB, chainId);
  for (const job of jobs) {
    if (job.status === "Success") continue;
    if (job.status === "Failed" || job.status === "Unknown") {
      // A failed job fails the rest (normally done already; repeated in case a step was interrupted).
      await failLaterJobs(env.DB, chainId, job.chain_position, job.id, job.error_message ?? "failed", nowIso, cancellationOf(job));
      await notifyEnd(env, job, log);
      return { active: false };
    }
    const spec = JSON.parse(job.spec) as JobSpec;
    const name = groupName(job.id);
    try {
      if (job.status === "Started") {
        const startedAt = job.started_at ?? nowIso;
        const deadline = job.deadline_at ?? deadlineOf(spec, new Date(startedAt));
        if (!job.started_at) await updateActiveJob(env.DB, job.id, nowIso, { started_at: startedAt, deadline_at: deadline });
        // Past its deadline it fails, unless the host still holds it back (it waits, it is not late: a step was missed).
        if (nowIso > deadline && !(await host.inspectGroup(name, 0))?.waiting)
          return await endJob(env, job, "Failed", `The job could not be started before its deadline (${deadline}).`, null, nowIso, log);
        await host.startGroup({
          name,
          image: spec.image,
          command: spec.command,
          environment: await environmentOf(env, job, spec),
          cpuCores: spec.cpuCores,
          memoryGb: spec.memoryGb,
          gpuCores: spec.gpuCores,
          gpuSku: spec.gpuSku,
          timeoutSeconds: spec.timeoutSeconds,
          owner: job.object_owner_id,
        });
        job.deadline_at = deadline;
      }
      const state = await host.inspectGroup(name, OUTPUT_TAIL_BYTES);
      if (state === null) {
        return await endJob(env, job, "Failed", `The container host no longer knows ${name}: the container was lost.`, null, nowIso, log);
      }
      const output = { output: state.output, output_truncated: state.outputTruncated ? 1 : 0 };
      if (job.status === "Started") {
        // The host holds the group back (its limit of jobs running at once): the job stays Started, its
        // output says why, and its time limit counts from when it runs, so its deadline moves with the wait.
        if (state.phase === "pending" && state.waiting) {
          await updateActiveJob(env.DB, job.id, nowIso, { ...output, deadline_at: deadlineOf(spec, now), host_unreachable_since: null });
          return { active: true };
        }
        // (After a wait, the deadline set by the last step that saw it waiting: at most a step early, within the grace.)
        await updateActiveJob(env.DB, job.id, nowIso, { status: "InProgress", host_unreachable_since: null });
        job.status = "InProgress";
      }
      if (state.phase === "succeeded") {
        await endJob(env, job, "Success", null, output, nowIso, log);
        continue; // the next job of the chain starts in this same step
      }
      if (state.phase === "failed") return await endJob(env, job, "Failed", failureOf(state), output, nowIso, log);
      if (job.deadline_at && nowIso > job.deadline_at) {
        return await endJob(
          env,
          job,
          "Failed",
          `The job ran past its time limit of ${spec.timeoutSeconds} s and was stopped.`,
          output,
          nowIso,
          log,
        );
      }
      await updateActiveJob(env.DB, job.id, nowIso, { ...output, host_unreachable_since: null });
      return { active: true };
    } catch (error) {
      if (!(error instanceof HostUnavailableError)) throw error;
      const since = job.host_unreachable_since ?? nowIso;
      const deadline = job.deadline_at ?? deadlineOf(spec, new Date(job.started_at ?? nowIso));
      if (nowIso > deadline) {
        return await endJob(
          env,
          job,
          "Failed",
          `The container host has not answered since ${since} and the job's deadline (${deadline}) passed.`,
          null,
          nowIso,
          log,
        );
      }
      if (!job.host_unreachable_since) await updateActiveJob(env.DB, job.id, nowIso, { host_unreachable_since: since });
      log.warn("container host not answering", { jobId: job.id, ...errorFields(error) });
      return { active: true };
    }
  }
  return { active: false };
}

function cancellationOf(job: JobRow): Cancellation | null {
  return job.cancelled_at ? { by: { id: job.cancelled_by_id ?? "", name: job.cancelled_by_name }, at: job.cancelled_at } : null;
}

/** Ends a job (guarded: a job that already ended stays as it is), removes its container, fails the rest of a failed chain. */
async function endJob(
  env: Bindings,
  job: JobRow,
  status: "Success" | "Failed",
  error: string | null,
  output: { output: string; output_truncated: number } | null,
  nowIso: string,
  log: Logger,
  cancellation: Cancellation | null = null,
): Promise<StepResult> {
  const cancelled = cancellation
    ? { cancelled_by_id: cancellation.by.id, cancelled_by_name: cancellation.by.name, cancelled_at: cancellation.at }
    : {};
  const applied = await updateActiveJob(env.DB, job.id, nowIso, {
    status,
    error_message: error,
    ended_at: nowIso,
    ...(output ?? {}),
    ...cancelled,
  });
  // Remove the container whatever happened; a host that does not answer leaves it to its own time limit.
  await hostFor(env)
    .removeGroup(groupName(job.id))
    .catch((e: unknown) => log.warn("container not removed", { jobId: job.id, ...errorFields(e) }));
  if (status === "Failed") await failLaterJobs(env.DB, job.chain_id, job.chain_position, job.id, error ?? "failed", nowIso, cancellation);
  if (applied) await notifyEnd(env, { ...job, status, error_message: error, output: output?.output ?? job.output }, log);
  return { active: false };
}

async function notifyEnd(env: Bindings, job: JobRow, log: Logger): Promise<void> {
  if (!job.end_hook_kind || !job.end_hook_ref) return;
  const hook = jobEndHooks.find((h) => h.kind === job.end_hook_kind);
  if (!hook) return log.warn("no end hook of this kind", { jobId: job.id, kind: job.end_hook_kind });
  const { results } = await env.DB.prepare("SELECT job_output_type_id, output FROM job_outputs WHERE job_id = ?1 ORDER BY created_at, id")
    .bind(job.id)
    .all<{ job_output_type_id: string | null; output: string }>();
  const end: JobEnd = {
    jobId: job.id,
    status: job.status,
    errorMessage: job.error_message,
    output: job.output,
    outputs: results.map((r) => ({ jobOutputTypeId: r.job_output_type_id, output: JSON.parse(r.output) as unknown })),
  };
  await hook.onEnd(env, job.end_hook_ref, end);
}

/**
 * Cancels a job that has not ended: Failed (the spec's statuses), with `cancelledBy` and
 * `cancelledAt` set so a client tells it from a failure without reading the message; container
 * removed, the rest of its chain failed and cancelled alike.
 */
export async function cancelJob(
  env: Bindings,
  jobId: string,
  by: { id: string; name: string | null },
  now: Date,
  log: Logger,
): Promise<boolean> {
  const job = await env.DB.prepare("SELECT * FROM jobs WHERE id = ?1").bind(jobId).first<JobRow>();
  if (!job || (job.status !== "Started" && job.status !== "InProgress")) return false;
  const at = now.toISOString();
  // The output it had written stays readable (the container is removed next).
  const state =
    job.status === "InProgress"
      ? await hostFor(env)
          .inspectGroup(groupName(job.id), OUTPUT_TAIL_BYTES)
          .catch(() => null)
      : null;
  const output = state ? { output: state.output, output_truncated: state.outputTruncated ? 1 : 0 } : null;
  await endJob(env, job, "Failed", `Cancelled by ${by.name || by.id} at ${at}.`, output, at, log, { by, at });
  return true;
}
