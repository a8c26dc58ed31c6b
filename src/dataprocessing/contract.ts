/**
 * What the two halves of data processing promise each other: job configurations (./configs, which
 * own configs, run-option encryption, output types and the weekly schedules) and job runs (./jobs,
 * which own jobs, the JobRunner Durable Object, chains and job outputs).
 */

/** The schedule kind (src/pkg/schedule) under which a config's weekly frequency is kept; jobs registers its runner. */
export const JOB_CONFIG_SCHEDULE_KIND = "job-config";

/** What every run needs: the image, its command, the resources, the time limit and the owner. */
export interface RunBasics {
  /** `name:tag` of the job definition. */
  image: string;
  /** Null: the image's own command. */
  runCommand: string | null;
  cpuCores: number;
  /** GiB. */
  memoryGb: number;
  gpuCores: number | null;
  gpuSku: string | null;
  /** How long a run may take before it is failed (the host's time limit and the runner's deadline). */
  timeoutSeconds: number;
  objectOwnerId: string;
}

/** A job config as a run needs it, run options already decrypted. Secret: never log runOptions. */
export interface RunnableConfig extends RunBasics {
  id: string;
  runOptions: Record<string, string>;
  nextConfigId: string | null;
  outputTypeId: string | null;
}

/** An output type as outputs are validated against it. */
export interface OutputTypeRecord {
  id: string;
  name: string;
  /** A JSON Schema, or null for unstructured outputs. */
  schema: unknown;
}

/**
 * A run not tied to a config: a monitor job runs its model's image with the monitor's effective
 * resources and parameters. Jobs (./jobs) implement `startAdHocJob(env, request)` with this shape and
 * tell `endHook.kind`'s {@link JobEndHook} when the job ends.
 */
export interface AdHocRunRequest extends RunBasics {
  /** Environment variables (secret: never log); the job's own variables (jobId, token, API URL) are added. */
  environment: Record<string, string>;
  /** Who is told when the job ends, e.g. `{ kind: "monitor-job", ref: monitorJobId }`. */
  endHook: { kind: string; ref: string } | null;
}

/** How a job ended, handed to its end hook. */
export interface JobEnd {
  jobId: string;
  /** Section 3 job status it ended in. */
  status: string;
  errorMessage: string | null;
  /** The container output tail the job holds. */
  output: string | null;
  /** Structured outputs the job posted (JobOutputs), oldest first. */
  outputs: { jobOutputTypeId: string | null; output: unknown }[];
}

/** Called once when a job with an end hook of this kind ends (at-least-once: make it idempotent). */
export interface JobEndHook {
  readonly kind: string;
  onEnd(env: import("../env").Bindings, ref: string, end: JobEnd): Promise<void>;
}
