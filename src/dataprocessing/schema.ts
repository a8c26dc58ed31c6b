/** API shapes of data processing: job definitions, job configs, output types, jobs and job outputs. */
import { z } from "@hono/zod-openapi";
import { resourceBody, updateBodyOf } from "../pkg/resource";
import { PersonSchema } from "../work/common";

export const JOB_STATUSES = ["Unknown", "Started", "InProgress", "Failed", "Success"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const DAYS_OF_WEEK = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;

/** A run's time limit: the host stops the container after it and the job fails. */
export const DEFAULT_TIMEOUT_MINUTES = 60;
export const MAX_TIMEOUT_MINUTES = 24 * 60;
export const MAX_RUN_OPTIONS = 100;

export const JobDefinitionSchema = z
  .object({
    name: z.string().openapi({ example: "examples/hello" }),
    tag: z.string().openapi({ example: "latest" }),
    image: z.string().openapi({ description: "`name:tag`, as job configs name it.", example: "examples/hello:latest" }),
    description: z.string().nullable(),
    command: z.string().nullable().openapi({ description: "The image's own command, run when a config gives no runCommand." }),
  })
  .openapi("JobDefinition");

const runConfigsFields = {
  cpuCores: z.number().positive().max(64).openapi({ example: 1 }),
  memory: z.number().positive().max(1024).openapi({ description: "GiB.", example: 1.5 }),
  gpuCores: z.number().int().min(0).max(16).nullable().default(null),
  gpuSku: z
    .string()
    .trim()
    .min(1)
    .max(40)
    .nullable()
    .default(null)
    .openapi({ description: "A GPU SKU the host offers (e.g. K80); required with gpuCores." }),
};
export const RunConfigsSchema = z.object(runConfigsFields).strict().openapi("RunConfigs");
/** RunConfigs as written: the spec (2.7) spells the SKU `gpusku`; answers say `gpuSku`. */
const RunConfigsInputSchema = resourceBody(runConfigsFields, "RunConfigsInput", {
  spellings: { gpusku: { of: "gpuSku", schema: runConfigsFields.gpuSku } },
});

const optionName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "an environment variable name: letters, digits and _, not starting with a digit");
const optionValue = z.string().max(32 * 1024);

export const RunOptionsSchema = z
  .record(optionName, optionValue)
  .refine((o) => Object.keys(o).length <= MAX_RUN_OPTIONS, {
    message: `at most ${MAX_RUN_OPTIONS} run options`,
    params: { rule: "maxItems" },
  })
  .openapi("RunOptions", {
    description: "Environment variables of the job: names to values. Stored encrypted.",
    example: { THRESHOLD: "0.8" },
  });

export const FrequencySchema = z
  .object({
    dayOfWeek: z.enum(DAYS_OF_WEEK),
    hour: z.number().int().min(0).max(23),
    startDate: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/, "an ISO 8601 date-time without a zone, e.g. 2026-01-05T00:00:00")
      .openapi({ description: "No run before this local date-time (read in the config's timeZone, UTC when none)." }),
  })
  .strict()
  .openapi("Frequency");

export const JobConfigurationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    jobDefinition: z.string().openapi({ description: "The image, `name:tag` (GET /JobDefinitions).", example: "examples/hello:latest" }),
    runConfigs: RunConfigsSchema,
    runOptions: z.record(z.string(), z.string().nullable()).openapi({
      description:
        "Names and values. Values are shown to holders of `dataprocessing_write` and to the config's owner; others see " +
        "the names with null values.",
    }),
    runCommand: z.string().nullable(),
    nextConfigId: z.uuid().nullable(),
    frequency: FrequencySchema.nullable(),
    timeZone: z.string().nullable().openapi({ description: "IANA zone the frequency is read in; null means UTC." }),
    nextRunAt: z.string().nullable().openapi({ description: "The next scheduled run (ISO 8601 UTC), when the config has a frequency." }),
    outputTypeId: z.uuid().nullable(),
    timeoutMinutes: z.number().int(),
    objectOwner: PersonSchema,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("JobConfiguration");
export type JobConfiguration = z.infer<typeof JobConfigurationSchema>;

const configFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(4000).nullable().default(null),
  jobDefinition: z
    .string()
    .trim()
    .min(3)
    .max(300)
    .regex(/^[^:\s]+(:[^:\s]+)?$/, "an image `name:tag` (the tag defaults to latest)"),
  runConfigs: RunConfigsInputSchema,
  runOptions: z
    .union([RunOptionsSchema, z.string().max(64 * 1024)])
    .default({})
    .openapi({
      description: "An object of strings; older clients' docker-style `-e KEY=VALUE` string is accepted and stored as the object.",
    }),
  runCommand: z.string().trim().min(1).max(4000).nullable().default(null),
  nextConfigId: z.uuid().nullable().default(null),
  frequency: FrequencySchema.nullable().default(null),
  timeZone: z.string().trim().min(1).max(64).nullable().default(null),
  outputTypeId: z.uuid().nullable().default(null),
  timeoutMinutes: z.number().int().min(1).max(MAX_TIMEOUT_MINUTES).default(DEFAULT_TIMEOUT_MINUTES),
  objectOwner: PersonSchema.nullable().optional().openapi({ description: "Default on create: the caller; on PUT, when absent: kept." }),
};

export const CreateJobConfigurationSchema = z.object(configFields).strict().openapi("CreateJobConfiguration");
/** The whole config; fields left out take their defaults (runOptions: none). */
export const UpdateJobConfigurationSchema = updateBodyOf(JobConfigurationSchema, configFields, "UpdateJobConfiguration");
export type JobConfigurationInput = z.infer<typeof CreateJobConfigurationSchema>;

export const OutputTypeSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    schema: z
      .unknown()
      .nullable()
      .openapi({ description: "A JSON Schema (drafts 4, 7, 2019-09, 2020-12), or null for unstructured outputs." }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("OutputType");
export type OutputType = z.infer<typeof OutputTypeSchema>;

const outputTypeFields = { name: z.string().trim().min(1).max(200), schema: z.unknown().nullable().default(null) };
export const CreateOutputTypeSchema = z.object(outputTypeFields).strict().openapi("CreateOutputType");
export const UpdateOutputTypeSchema = updateBodyOf(OutputTypeSchema, outputTypeFields, "UpdateOutputType");

export const JobSchema = z
  .object({
    id: z.uuid(),
    jobId: z.uuid().openapi({ description: "The id again, as the original client reads it." }),
    configurationId: z.uuid().nullable(),
    chainId: z.uuid().openapi({ description: "Jobs created by one execution share it; a single job is a chain of one." }),
    chainPosition: z.number().int(),
    status: z.enum(JOB_STATUSES),
    errorMessage: z.string().nullable(),
    output: z
      .string()
      .nullable()
      .openapi({ description: "The container's output so far (refreshed every minute), at most 64 KiB, the tail kept." }),
    outputTruncated: z.boolean(),
    containerGroup: z.string().openapi({ example: "containergroup-0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10" }),
    image: z.string(),
    outputRejections: z
      .array(z.object({ at: z.string(), jobOutputTypeId: z.string().nullable(), errors: z.array(z.string()) }))
      .openapi({ description: "Outputs the job posted that its output type refused (rule 6), newest last (at most 20)." }),
    startedAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    deadlineAt: z.string().nullable(),
    cancelledBy: z
      .object({ id: z.string().nullable(), name: z.string().nullable() })
      .nullable()
      .openapi({
        description:
          "Who cancelled the job (POST /Jobs/{id}/Cancellation), or a job before it in its chain; null when it was not " +
          "cancelled. A cancelled job is Failed, as the spec's statuses have no Cancelled: this field tells it from a " +
          "failure.",
      }),
    cancelledAt: z.string().nullable().openapi({ description: "When it was cancelled; null when it was not." }),
    objectOwner: PersonSchema,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Job");
export type Job = z.infer<typeof JobSchema>;

export const ExecutionBodySchema = z
  .object({ runOptions: z.union([RunOptionsSchema, z.string().max(64 * 1024)]).optional() })
  .strict()
  .openapi("JobExecution");

export const ChainExecutionSchema = z
  .object({
    jobConfigIds: z.array(z.uuid()).min(1).max(50, "A chain has at most 50 configs (the longest chain one execution runs)."),
    runOptions: z
      .union([RunOptionsSchema, z.record(z.uuid(), RunOptionsSchema), z.array(RunOptionsSchema.nullable()).max(50)])
      .optional()
      .openapi({
        description:
          "Options for the FIRST job only (rule 3): an object of strings; the per-config form `{ <configId>: {...} }`, " +
          "which may name only the first config; " +
          'or the spec\'s "run options for each job config", an array in the order of jobConfigIds whose later entries ' +
          "must be empty or null.",
      }),
  })
  .strict()
  .openapi("ChainExecution");

export const ExecutionResultSchema = z
  .object({ jobId: z.uuid(), jobIds: z.array(z.uuid()), chainId: z.uuid(), job: JobSchema })
  .openapi("ExecutionResult");

export const JobOutputSchema = z
  .object({
    id: z.uuid(),
    jobId: z.uuid(),
    jobOutputTypeId: z.uuid().nullable(),
    output: z.unknown(),
    createdAt: z.iso.datetime(),
  })
  .openapi("JobOutput");
export type JobOutput = z.infer<typeof JobOutputSchema>;

export const CreateJobOutputSchema = z
  .object({ jobId: z.uuid(), jobOutputTypeId: z.uuid().nullable().default(null), output: z.unknown() })
  .strict()
  .openapi("CreateJobOutput");
