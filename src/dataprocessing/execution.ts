/**
 * Starting runs: a config now (with its own nextConfigId chain), a one-time chain of configs, a
 * config's weekly occurrence (the `job-config` schedule kind), and an ad-hoc run for a monitor job.
 * Each creates its jobs at once in D1, then hands the chain to its JobRunner.
 */
import { configOf } from "../config";
import type { Bindings } from "../env";
import { forEachLimited } from "../pkg/concurrency";
import type { WriteContext } from "../pkg/db";
import { invalid } from "../pkg/errors";
import { errorFields, type Logger } from "../pkg/logger";
import type { DueRun, ScheduleKind } from "../pkg/schedule";
import { platform } from "../platform/services";
import { configChain, normaliseRunOptions, toRunnable, getConfigRow } from "./configs";
import { JOB_CONFIG_SCHEDULE_KIND, type AdHocRunRequest } from "./contract";
import { requireHost } from "./host-errors";
import { createChain, plannedFromConfig, type PlannedJob } from "./jobs";
import type { RunOptions } from "./run-options";

/** Where containers post their outputs: PUBLIC_API_URL, else the origin of the request that started the run. */
export function apiUrlOf(env: Bindings, requestUrl?: string): string {
  const configured = configOf(env).PUBLIC_API_URL;
  if (configured) return configured;
  return requestUrl ? new URL(requestUrl).origin : "";
}

export function runnerOf(env: Bindings, chainId: string) {
  return env.JOBS.get(env.JOBS.idFromName(chainId));
}

/** Hands a chain to its runner: the first job starts now (or on the runner's next alarm if this call is lost). */
export async function kickChain(env: Bindings, chainId: string): Promise<void> {
  await runnerOf(env, chainId).kick(chainId);
}

/** POST /Jobs/Execution/{id}: the config's chain; the body's options merged over the first config's (rule 2). */
export async function executeConfig(
  ctx: WriteContext,
  env: Bindings,
  configId: string,
  bodyOptions: RunOptions | string | undefined,
  apiUrl: string,
  owner: { id: string; name: string | null },
) {
  requireHost(env);
  const extra = normaliseRunOptions(bodyOptions, "body.runOptions");
  const chain = await configChain(env, configId);
  const jobs = chain.map((config, i) =>
    plannedFromConfig(config, i === 0 ? { ...config.runOptions, ...extra } : config.runOptions, apiUrl),
  );
  return createChain(ctx, env, { jobs, owner });
}

/**
 * POST /Jobs/ChainExecution. Rule 3 says the body's options go to the first job only, while the
 * spec's body carries options per config: both shapes are accepted, and the per-config shape may name
 * only the first config (naming another is a 400 that says so), so no option is silently dropped.
 */
export async function executeChain(
  ctx: WriteContext,
  env: Bindings,
  body: { jobConfigIds: string[]; runOptions?: RunOptions | Record<string, RunOptions> | (RunOptions | null)[] },
  apiUrl: string,
  owner: { id: string; name: string | null },
) {
  requireHost(env);
  const [firstId] = body.jobConfigIds;
  let extra: RunOptions = {};
  const given = body.runOptions ?? {};
  const perConfig = Object.values(given).some((v) => typeof v === "object" && v !== null);
  if (Array.isArray(given)) {
    // The spec's "run options for each job config", in the order of jobConfigIds.
    if (given.length > body.jobConfigIds.length) {
      throw invalid(
        "body.runOptions",
        "maxItems",
        `There are ${given.length} run option entries for ${body.jobConfigIds.length} job configs.`,
      );
    }
    for (const [i, entry] of given.entries()) {
      if (i > 0 && entry !== null && Object.keys(entry).length > 0) {
        throw invalid(
          `body.runOptions.${i}`,
          "firstJobOnly",
          `Run options of a chain execution go to the first job only (rule 3); entry ${i} (config ` +
            `${body.jobConfigIds[i]}) must be empty. Later jobs take their configs' own options.`,
        );
      }
    }
    extra = normaliseRunOptions(given[0] ?? {}, "body.runOptions.0");
  } else if (perConfig) {
    for (const [key, value] of Object.entries(given)) {
      if (typeof value !== "object" || value === null)
        throw invalid(
          `body.runOptions.${key}`,
          "type",
          "Run options are either one object of strings or an object per config id, not a mix.",
        );
      if (key !== firstId) {
        throw invalid(
          `body.runOptions.${key}`,
          "firstJobOnly",
          `Run options of a chain execution go to the first job only (rule 3); config ${key} is not the first ` +
            `(${firstId}). Later jobs take their configs' own options.`,
        );
      }
      extra = normaliseRunOptions(value as RunOptions, `body.runOptions.${key}`);
    }
  } else extra = normaliseRunOptions(given as RunOptions, "body.runOptions");
  const jobs: PlannedJob[] = [];
  for (const [i, id] of body.jobConfigIds.entries()) {
    const config = await toRunnable(env, await getConfigRow(env.DB, id));
    jobs.push(plannedFromConfig(config, i === 0 ? { ...config.runOptions, ...extra } : config.runOptions, apiUrl));
  }
  return createChain(ctx, env, { jobs, owner });
}

/** A monitor job's run of a model image: one job, no config, its end reported to `endHook`. */
export async function startAdHocJob(env: Bindings, request: AdHocRunRequest, now = platform().clock.now()): Promise<{ jobId: string }> {
  const ctx: WriteContext = {
    db: env.DB,
    now: now.toISOString(),
    actorId: request.objectOwnerId,
    actorName: null,
    actorType: "service",
    cause: "monitoring loop: a model's run",
    requestId: null as unknown as string,
    uuid: () => platform().ids.uuid(),
    expectedEtag: undefined,
  };
  const job: PlannedJob = {
    configurationId: null,
    runOptions: request.environment,
    spec: {
      image: request.image,
      command: request.runCommand,
      cpuCores: request.cpuCores,
      memoryGb: request.memoryGb,
      gpuCores: request.gpuCores,
      gpuSku: request.gpuSku,
      timeoutSeconds: request.timeoutSeconds,
      outputTypeId: null,
      apiUrl: apiUrlOf(env),
    },
  };
  const created = await createChain(ctx, env, { jobs: [job], owner: { id: request.objectOwnerId, name: null }, endHook: request.endHook });
  await kickChain(env, created.chainId);
  return { jobId: created.jobIds[0]! };
}

/** Due runs a tick starts at once (also the monitors' kind). */
export const START_CONCURRENCY = 16;

/**
 * The weekly schedules of configs: each due occurrence runs the config's whole chain; its run key is
 * stored (unique) on the chain's first job, so an occurrence dispatched twice creates one chain.
 */
export const jobConfigScheduleKind: ScheduleKind = {
  kind: JOB_CONFIG_SCHEDULE_KIND,
  async start(env: Bindings, runs: readonly DueRun[], log: Logger) {
    const failed: string[] = [];
    const startOne = async (run: DueRun) => {
      try {
        const chain = await configChain(env, run.ownerId);
        const owner = { id: chain[0]!.objectOwnerId, name: null };
        const ctx: WriteContext = {
          db: env.DB,
          now: platform().clock.now().toISOString(),
          actorId: null,
          actorName: "integrity-edge",
          actorType: "service",
          cause: "schedule: a job configuration's weekly run",
          requestId: run.runKey,
          uuid: () => platform().ids.uuid(),
          expectedEtag: undefined,
        };
        const jobs = chain.map((config) => plannedFromConfig(config, config.runOptions, apiUrlOf(env)));
        const created = await createChain(ctx, env, { jobs, owner, runKey: run.runKey });
        await kickChain(env, created.chainId);
      } catch (error) {
        log.error("scheduled job run not started", { configId: run.ownerId, runKey: run.runKey, ...errorFields(error) });
        failed.push(run.runKey);
      }
    };
    // A few at a time: each run is a handful of D1 round trips and one Durable Object call.
    await forEachLimited(runs, START_CONCURRENCY, startOne);
    return failed;
  },
};

/** The minute cron's refresh: every chain with an active job gets a step (output refreshed, ends noticed, lost runners revived). */
export async function refreshActiveJobs(env: Bindings, log: Logger, limit = 1000): Promise<number> {
  const { results } = await env.DB.prepare("SELECT DISTINCT chain_id FROM jobs WHERE status IN ('Started', 'InProgress') LIMIT ?1")
    .bind(limit)
    .all<{ chain_id: string }>();
  const outcomes = await Promise.allSettled(results.map((r) => kickChain(env, r.chain_id)));
  for (const outcome of outcomes) if (outcome.status === "rejected") log.warn("job refresh failed", errorFields(outcome.reason));
  return results.length;
}
