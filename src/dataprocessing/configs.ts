/**
 * Job configurations in D1. A write validates against the container host (the image must be one it
 * lists, the resources within what one group may ask for), walks the nextConfigId chain for a missing
 * config or a cycle, seals the run options, and keeps the weekly schedule row in the same batch.
 */
import { tableStatements, type Database, type Insert } from "../db/statements";
import { jobConfigurations } from "../db/schema";
import { nameKey } from "../pkg/unicode";
import type { Bindings } from "../env";
import { outboxStatements, guardedOutboxStatements } from "../events/outbox";
import type { Principal } from "../pkg/auth";
import { assertStatement, conflict, isAssertionFailure, newEtagToken, runBatch, type WriteContext } from "../pkg/db";
import { ApiError, invalid, notFound, type FieldProblem } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import { PERMISSIONS } from "../pkg/permissions";
import { scheduleRuleProblem, scheduleStatement, type ScheduleRule } from "../pkg/schedule";
import { ownerOrCaller } from "../work/common";
import { JOB_CONFIG_SCHEDULE_KIND, type RunnableConfig } from "./contract";
import { hostFor } from "./host";
import { environmentProblems } from "./environment";
import { viaHost } from "./host-errors";
import { openRunOptions, parseDockerStyleOptions, sealRunOptions, type RunOptions } from "./run-options";
import { DAYS_OF_WEEK, type JobConfiguration, type JobConfigurationInput } from "./schema";
import { assertVersion, retryWrite } from "../pkg/resource";

/** Longest nextConfigId chain (also the most jobs one execution creates). */
export const MAX_CHAIN_LENGTH = 50;

export interface ConfigRow {
  id: string;
  name: string;
  description: string | null;
  image_name: string;
  image_tag: string;
  cpu_cores: number;
  memory_gb: number;
  gpu_cores: number | null;
  gpu_sku: string | null;
  run_options_enc: string;
  run_command: string | null;
  next_config_id: string | null;
  frequency: string | null;
  time_zone: string | null;
  output_type_id: string | null;
  timeout_minutes: number;
  object_owner_id: string;
  object_owner_name: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  next_run_at?: string | null;
}

export const CONFIG_SELECT = `c.id, c.name, c.description, c.image_name, c.image_tag, c.cpu_cores, c.memory_gb, c.gpu_cores, c.gpu_sku,
  c.run_options_enc, c.run_command, c.next_config_id, c.frequency, c.time_zone, c.output_type_id, c.timeout_minutes,
  c.object_owner_id, c.object_owner_name, c.etag, c.created_at, c.updated_at, s.next_run_at`;
export const CONFIG_JOIN = `LEFT JOIN schedules s ON s.kind = '${JOB_CONFIG_SCHEDULE_KIND}' AND s.owner_id = c.id`;

const KIND = "jobConfiguration";

/** Whether the caller may read option values back: write permission holders and the config's owner. */
export function mayReadOptionValues(principal: Principal | undefined, ownerId: string): boolean {
  return Boolean(principal && (principal.permissions.has(PERMISSIONS.dataProcessingWrite) || principal.id === ownerId));
}

export async function toConfiguration(env: Bindings, row: ConfigRow, principal: Principal | undefined): Promise<JobConfiguration> {
  const options = await openRunOptions(env, row.run_options_enc);
  const reveal = mayReadOptionValues(principal, row.object_owner_id);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    jobDefinition: `${row.image_name}:${row.image_tag}`,
    runConfigs: { cpuCores: row.cpu_cores, memory: row.memory_gb, gpuCores: row.gpu_cores, gpuSku: row.gpu_sku },
    runOptions: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, reveal ? v : null])),
    runCommand: row.run_command,
    nextConfigId: row.next_config_id,
    frequency: row.frequency ? JSON.parse(row.frequency) : null,
    timeZone: row.time_zone,
    nextRunAt: row.next_run_at ?? null,
    outputTypeId: row.output_type_id,
    timeoutMinutes: row.timeout_minutes,
    objectOwner: { id: row.object_owner_id, name: row.object_owner_name },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findConfigRow(db: Database, id: string): Promise<ConfigRow | null> {
  return db.prepare(`SELECT ${CONFIG_SELECT} FROM job_configurations c ${CONFIG_JOIN} WHERE c.id = ?1`).bind(id).first<ConfigRow>();
}

export async function getConfigRow(db: Database, id: string): Promise<ConfigRow> {
  const row = await findConfigRow(db, id);
  if (!row) throw notFound("Job configuration", id);
  return row;
}

/** The weekly frequency as a schedule rule: minute 0 of `hour` on `dayOfWeek`, from `startDate`, in the config's zone. */
export function frequencyRule(
  frequency: { dayOfWeek: string; hour: number; startDate: string } | null,
  timeZone: string | null,
): ScheduleRule | null {
  if (!frequency) return null;
  const day = DAYS_OF_WEEK.indexOf(frequency.dayOfWeek as (typeof DAYS_OF_WEEK)[number]);
  return { cron: `0 ${frequency.hour} * * ${day}`, timeZone, startAt: frequency.startDate };
}

/** Normalises run options: an object as given, or the older docker-style string parsed. */
export function normaliseRunOptions(value: RunOptions | string | undefined, field: string): RunOptions {
  if (value === undefined) return {};
  let options: RunOptions;
  if (typeof value === "string") {
    const parsed = parseDockerStyleOptions(value);
    if ("error" in parsed) throw invalid(field, "format", `${field}: ${parsed.error}.`);
    options = parsed.options;
  } else options = value;
  const problems = environmentProblems(options, field, "a run option");
  if (problems.length > 0) throw new ApiError("ValidationFailed", problems.map((p) => p.message).join(" "), { errors: problems });
  return options;
}

interface Resolved {
  imageName: string;
  imageTag: string;
  runOptions: RunOptions;
  rule: ScheduleRule | null;
}

async function validateConfig(env: Bindings, input: JobConfigurationInput, selfId: string | null): Promise<Resolved> {
  const [imageName, imageTag = "latest"] = input.jobDefinition.split(":") as [string, string?];
  const runOptions = normaliseRunOptions(input.runOptions, "body.runOptions");
  const problems: FieldProblem[] = [];
  const { images, capacity } = await viaHost(() => hostFor(env).listImages());
  if (!images.some((i) => i.name === imageName && i.tag === imageTag)) {
    problems.push({
      field: "body.jobDefinition",
      rule: "exists",
      message: `The container host offers no image ${imageName}:${imageTag} (GET /JobDefinitions).`,
    });
  }
  const rc = input.runConfigs;
  if (rc.cpuCores > capacity.maxCpuCores)
    problems.push({
      field: "body.runConfigs.cpuCores",
      rule: "maximum",
      message: `The host runs groups of at most ${capacity.maxCpuCores} CPU cores.`,
    });
  if (rc.memory > capacity.maxMemoryGb)
    problems.push({
      field: "body.runConfigs.memory",
      rule: "maximum",
      message: `The host runs groups of at most ${capacity.maxMemoryGb} GiB.`,
    });
  if ((rc.gpuCores ?? 0) > 0) {
    if (rc.gpuCores! > capacity.maxGpuCores)
      problems.push({
        field: "body.runConfigs.gpuCores",
        rule: "maximum",
        message: `The host runs groups of at most ${capacity.maxGpuCores} GPU cores.`,
      });
    if (!rc.gpuSku)
      problems.push({ field: "body.runConfigs.gpuSku", rule: "required", message: "gpuSku is required when gpuCores is set." });
    else if (!capacity.gpuSkus.includes(rc.gpuSku)) {
      problems.push({
        field: "body.runConfigs.gpuSku",
        rule: "enum",
        message: `The host offers the GPU SKUs ${capacity.gpuSkus.join(", ") || "(none)"}, not ${rc.gpuSku}.`,
      });
    }
  } else if (rc.gpuSku)
    problems.push({ field: "body.runConfigs.gpuSku", rule: "dependency", message: "gpuSku needs gpuCores of at least 1." });
  const rule = frequencyRule(input.frequency, input.timeZone);
  if (input.timeZone && !rule) {
    const problem = scheduleRuleProblem({ cron: "0 0 * * 0", timeZone: input.timeZone });
    if (problem) problems.push({ field: "body.timeZone", rule: "timeZone", message: problem.message });
  }
  if (rule) {
    const problem = scheduleRuleProblem(rule);
    if (problem)
      problems.push({
        field: problem.part === "timeZone" ? "body.timeZone" : "body.frequency",
        rule: problem.part,
        message: problem.message,
      });
  }
  if (input.outputTypeId) {
    const found = await env.DB.prepare("SELECT 1 AS ok FROM output_types WHERE id = ?1").bind(input.outputTypeId).first();
    if (!found) problems.push({ field: "body.outputTypeId", rule: "exists", message: `Output type ${input.outputTypeId} does not exist.` });
  }
  if (input.nextConfigId) {
    const chainProblem = await chainProblemFrom(env.DB, input.nextConfigId, selfId);
    if (chainProblem) problems.push({ field: "body.nextConfigId", rule: chainProblem.rule, message: chainProblem.message });
  }
  if (problems.length > 0)
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join(" "), { errors: problems });
  return { imageName, imageTag, runOptions, rule };
}

/**
 * The longest run of configs that chain into `id` (each naming the next with nextConfigId), not
 * counting `id` itself. Configs form in-trees (many may name the same next one), so this is the
 * deepest branch; the walk stops past MAX_CHAIN_LENGTH, which also bounds it on a cycle.
 */
async function configsBefore(db: Database, id: string): Promise<number> {
  const row = await db
    .prepare(
      `WITH RECURSIVE up(id, depth) AS (
         SELECT id, 1 FROM job_configurations WHERE next_config_id = ?1
         UNION ALL
         SELECT c.id, up.depth + 1 FROM job_configurations c JOIN up ON c.next_config_id = up.id WHERE up.depth <= ?2
       ) SELECT coalesce(max(depth), 0) AS depth FROM up`,
    )
    .bind(id, MAX_CHAIN_LENGTH)
    .first<{ depth: number }>();
  return row?.depth ?? 0;
}

/**
 * SQL (for {@link assertStatement}) that holds when the longest chain through config `?1` has at most
 * MAX_CHAIN_LENGTH configs: the configs before it, itself and the configs after it. Both walks stop
 * past the limit, so a cycle (which is an endless chain) fails it too. Run in the write's own batch,
 * it holds against a concurrent write that lengthens the same chain from its other end.
 */
const CHAIN_WITHIN_LIMIT = `
  (WITH RECURSIVE up(id, depth) AS (
     SELECT ?1, 1
     UNION ALL
     SELECT c.id, up.depth + 1 FROM job_configurations c JOIN up ON c.next_config_id = up.id WHERE up.depth <= ${MAX_CHAIN_LENGTH}
   ) SELECT max(depth) FROM up)
  + (WITH RECURSIVE down(id, depth) AS (
     SELECT next_config_id, 1 FROM job_configurations WHERE id = ?1 AND next_config_id IS NOT NULL
     UNION ALL
     SELECT c.next_config_id, down.depth + 1 FROM job_configurations c JOIN down ON c.id = down.id WHERE c.next_config_id IS
     NOT NULL AND down.depth <= ${MAX_CHAIN_LENGTH}
   ) SELECT coalesce(max(depth), 0) FROM down)
  <= ${MAX_CHAIN_LENGTH}`;

const chainTooLong = (detail: string) => ({ rule: "maxLength", message: `A chain has at most ${MAX_CHAIN_LENGTH} configs; ${detail}` });

/**
 * Walks the chain from `nextId`: a config that does not exist, a cycle back to `selfId` or within, or
 * a chain past MAX_CHAIN_LENGTH counting every config that chains into `selfId` (the longest such
 * run), the config itself and every config after it. Any config of a chain can be executed, so the
 * whole chain counts, not just the part after the config being written.
 */
async function chainProblemFrom(db: Database, nextId: string, selfId: string | null): Promise<{ rule: string; message: string } | null> {
  const before = selfId ? await configsBefore(db, selfId) : 0;
  const seen = new Set<string>(selfId ? [selfId] : []);
  let current: string | null = nextId;
  let from = selfId ? `config ${selfId}` : "this config";
  let after = 0;
  while (current) {
    if (seen.has(current))
      return { rule: "acyclic", message: `nextConfigId makes a cycle: ${from} leads back to job configuration ${current}.` };
    if (before + 1 + after >= MAX_CHAIN_LENGTH) {
      return chainTooLong(
        `this nextConfigId makes one of more than ${MAX_CHAIN_LENGTH}` +
          (before > 0
            ? ` (${before} config${before === 1 ? "" : "s"} chain into this one, and more than ${MAX_CHAIN_LENGTH - 1 - before} follow it).`
            : ` (more than ${MAX_CHAIN_LENGTH - 1} configs follow this one).`),
      );
    }
    seen.add(current);
    const row: { next_config_id: string | null } | null = await db
      .prepare("SELECT next_config_id FROM job_configurations WHERE id = ?1")
      .bind(current)
      .first();
    if (!row) return { rule: "exists", message: `Job configuration ${current} (named by ${from}) does not exist.` };
    after += 1;
    from = `job configuration ${current}`;
    current = row.next_config_id;
  }
  return null;
}

/** The 400 of a chain past the limit that a concurrent write made between the check and the batch. */
const chainLimitRaced = () =>
  new ApiError(
    "ValidationFailed",
    `body.nextConfigId: A chain has at most ${MAX_CHAIN_LENGTH} configs; with a change saved meanwhile, this ` +
      `nextConfigId makes a longer one.`,
    {
      errors: [{ field: "body.nextConfigId", ...chainTooLong("with a change saved meanwhile, this nextConfigId makes a longer one.") }],
    },
  );

/**
 * Runs a config write's batch; when the write links the config to a next one, the batch ends with an
 * assertion that the chain through it is still within MAX_CHAIN_LENGTH (see CHAIN_WITHIN_LIMIT).
 */
async function runChainBatch(
  db: Database,
  linkedId: string | null,
  statements: D1PreparedStatement[],
  onUnique: () => ApiError,
): Promise<D1Result[]> {
  try {
    return await runBatch(db, linkedId ? [...statements, assertStatement(db, CHAIN_WITHIN_LIMIT, linkedId)] : statements, onUnique);
  } catch (error) {
    if (linkedId && isAssertionFailure(error)) throw chainLimitRaced();
    throw error;
  }
}

const nameTaken = (name: string) =>
  conflict(`A job configuration named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used." },
  ]);

const configTable = tableStatements(jobConfigurations);

/** The columns a create and an update both write. */
function writtenColumns(
  input: JobConfigurationInput,
  resolved: Resolved,
  sealed: string,
  owner: { id: string; name: string | null },
  etag: string,
) {
  return {
    name: input.name,
    nameKey: nameKey(input.name),
    description: input.description,
    imageName: resolved.imageName,
    imageTag: resolved.imageTag,
    cpuCores: input.runConfigs.cpuCores,
    memoryGb: input.runConfigs.memory,
    gpuCores: input.runConfigs.gpuCores,
    gpuSku: input.runConfigs.gpuSku,
    runOptionsEnc: sealed,
    runCommand: input.runCommand,
    nextConfigId: input.nextConfigId,
    frequency: input.frequency ? JSON.stringify(input.frequency) : null,
    timeZone: input.timeZone,
    outputTypeId: input.outputTypeId,
    timeoutMinutes: input.timeoutMinutes,
    objectOwnerId: owner.id,
    objectOwnerName: owner.name,
    etag,
  } satisfies Partial<Insert<typeof jobConfigurations>>;
}

/** The event payload: never the run options (names or values). */
function eventPayload(id: string, input: JobConfigurationInput, resolved: Resolved) {
  return {
    id,
    name: input.name,
    jobDefinition: `${resolved.imageName}:${resolved.imageTag}`,
    nextConfigId: input.nextConfigId,
    frequency: input.frequency,
  };
}

export async function createConfig(
  ctx: WriteContext,
  env: Bindings,
  principal: Principal,
  input: JobConfigurationInput,
): Promise<ConfigRow> {
  const resolved = await validateConfig(env, input, null);
  const id = ctx.uuid();
  const owner = ownerOrCaller(input.objectOwner, principal);
  const sealed = await sealRunOptions(env, resolved.runOptions);
  const etag = newEtagToken();
  await runChainBatch(
    ctx.db,
    input.nextConfigId ? id : null,
    [
      configTable.insert(ctx.db, {
        ...writtenColumns(input, resolved, sealed, owner, etag),
        id,
        createdAt: ctx.now,
        updatedAt: ctx.now,
        createdBy: ctx.actorId,
      }),
      scheduleStatement(ctx.db, JOB_CONFIG_SCHEDULE_KIND, id, resolved.rule, new Date(ctx.now)),
      ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: eventPayload(id, input, resolved) }),
    ],
    () => nameTaken(input.name),
  );
  return getConfigRow(ctx.db, id);
}

export async function updateConfig(ctx: WriteContext, env: Bindings, input: JobConfigurationInput & { id: string }): Promise<ConfigRow> {
  return retryWrite(ctx, async () => {
    const current = await getConfigRow(ctx.db, input.id);
    assertVersion(ctx, current.etag);
    const resolved = await validateConfig(env, input, input.id);
    const owner = input.objectOwner
      ? { id: input.objectOwner.id, name: input.objectOwner.name ?? null }
      : { id: current.object_owner_id, name: current.object_owner_name };
    const sealed = await sealRunOptions(env, resolved.runOptions);
    const etag = newEtagToken();
    const [update] = await runChainBatch(
      ctx.db,
      input.nextConfigId ? input.id : null,
      [
        configTable.update(
          ctx.db,
          { ...writtenColumns(input, resolved, sealed, owner, etag), updatedAt: ctx.now },
          { id: input.id, etag: current.etag },
        ),
        scheduleStatement(ctx.db, JOB_CONFIG_SCHEDULE_KIND, input.id, resolved.rule, new Date(ctx.now)),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: input.id, action: "updated", payload: eventPayload(input.id, input, resolved) },
          { table: "job_configurations", etag },
        ),
      ],
      () => nameTaken(input.name),
    );
    if (update?.meta.changes !== 1) throw preconditionFailed();
    return getConfigRow(ctx.db, input.id);
  });
}

export async function deleteConfig(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getConfigRow(ctx.db, id);
    assertVersion(ctx, current.etag);
    const pointing = await ctx.db
      .prepare("SELECT id, name FROM job_configurations WHERE next_config_id = ?1 LIMIT 1")
      .bind(id)
      .first<{ id: string; name: string }>();
    if (pointing)
      throw new ApiError(
        "InUse",
        `Job configuration '${pointing.name}' (${pointing.id}) chains to this one with nextConfigId; change it first.`,
      );
    const [removed] = await ctx.db.batch([
      ctx.db
        .prepare(
          "DELETE FROM job_configurations WHERE id = ?1 AND etag = ?2 AND NOT EXISTS (SELECT 1 FROM job_configurations " +
            "WHERE next_config_id = ?1)",
        )
        .bind(id, current.etag),
      scheduleStatement(ctx.db, JOB_CONFIG_SCHEDULE_KIND, id, null, new Date(ctx.now)),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1)
      throw new ApiError("Conflict", "The job configuration changed while it was being deleted; read it again.");
  });
}

/** A config as a run needs it, options opened. */
export async function toRunnable(env: Bindings, row: ConfigRow): Promise<RunnableConfig> {
  return {
    id: row.id,
    image: `${row.image_name}:${row.image_tag}`,
    runCommand: row.run_command,
    cpuCores: row.cpu_cores,
    memoryGb: row.memory_gb,
    gpuCores: row.gpu_cores,
    gpuSku: row.gpu_sku,
    runOptions: await openRunOptions(env, row.run_options_enc),
    nextConfigId: row.next_config_id,
    outputTypeId: row.output_type_id,
    timeoutSeconds: row.timeout_minutes * 60,
    objectOwnerId: row.object_owner_id,
  };
}

/**
 * The config and every config its nextConfigId chain reaches, in order. A chain is never cut short:
 * one past MAX_CHAIN_LENGTH, or one that loops (writes refuse both, so only data older than that
 * check can hold them), is refused whole with a 409 naming the limit, and nothing runs.
 */
export async function configChain(env: Bindings, firstId: string): Promise<RunnableConfig[]> {
  const chain: RunnableConfig[] = [];
  const seen = new Set<string>();
  let id: string | null = firstId;
  while (id) {
    if (seen.has(id)) {
      throw new ApiError(
        "Conflict",
        `The chain of job configuration ${firstId} loops back to job configuration ${id}; nothing was run. Set a ` +
          `nextConfigId in the loop to null (or to a config outside it) and run it again.`,
      );
    }
    if (chain.length === MAX_CHAIN_LENGTH) {
      throw new ApiError(
        "Conflict",
        `The chain of job configuration ${firstId} has more than ${MAX_CHAIN_LENGTH} configs, the most one chain may ` +
          `have; nothing was run. Shorten it (set the nextConfigId of job configuration ` +
          `${chain[MAX_CHAIN_LENGTH - 1]!.id} to null) and run it again.`,
      );
    }
    seen.add(id);
    const row = await findConfigRow(env.DB, id);
    if (!row) {
      if (chain.length === 0) throw notFound("Job configuration", id);
      throw new ApiError("Conflict", `Job configuration ${id}, next in the chain, no longer exists.`);
    }
    chain.push(await toRunnable(env, row));
    id = row.next_config_id;
  }
  return chain;
}
