/**
 * What the two halves of data processing promise each other: job configurations (./configs, which
 * own configs, run-option encryption, output types and the weekly schedules) and job runs (./jobs,
 * which own jobs, the JobRunner Durable Object, chains and job outputs).
 */

/** The schedule kind (src/pkg/schedule) under which a config's weekly frequency is kept; jobs registers its runner. */
export const JOB_CONFIG_SCHEDULE_KIND = "job-config";

/** A job config as a run needs it, run options already decrypted. Secret: never log runOptions. */
export interface RunnableConfig {
  id: string;
  /** `name:tag` of the job definition. */
  image: string;
  runCommand: string | null;
  cpuCores: number;
  /** GiB. */
  memoryGb: number;
  gpuCores: number | null;
  gpuSku: string | null;
  runOptions: Record<string, string>;
  nextConfigId: string | null;
  outputTypeId: string | null;
  /** How long a run may take before it is failed (the host's time limit and the runner's deadline). */
  timeoutSeconds: number;
  objectOwnerId: string;
}

/** An output type as outputs are validated against it. */
export interface OutputTypeRecord {
  id: string;
  name: string;
  /** A JSON Schema, or null for unstructured outputs. */
  schema: unknown;
}
