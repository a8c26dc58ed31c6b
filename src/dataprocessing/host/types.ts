/**
 * The container host: where job containers run. Running containers is remote, so the rest of the
 * service sees only this small interface; `hostFor(env)` (in ./index.ts) picks an implementation by
 * configuration:
 *   - `local`: the HTTP protocol below, served by the local host that `npm start` runs beside the
 *     Worker (child processes) and, in tests, by a scripted fake behind a service binding;
 *   - `azure`: Azure Container Instances through the Azure Resource Manager REST API;
 *   - `cloudflare`: Cloudflare Containers, where the platform's packages allow it.
 *
 * Every call is idempotent by group name (`containergroup-{jobId}`): starting a group that exists
 * does not start a second one, and removing a group that is gone succeeds.
 *
 * Local host protocol (JSON over HTTP; the same for the real local host and the test fake):
 *   GET    /images                     -> 200 { images: JobImage[], capacity: HostCapacity }
 *   PUT    /groups/{name}   GroupSpec  -> 201 started | 200 already exists (not started again)
 *   GET    /groups/{name}?tailBytes=N  -> 200 GroupState | 404 the host does not know the group
 *                                         (phase pending with `waiting` while the host's job limits hold it back)
 *   DELETE /groups/{name}              -> 204 removed or already gone
 */

/** An image the host can run (a job definition). */
export interface JobImage {
  /** Repository name, e.g. `examples/hello`. */
  name: string;
  tag: string;
  /** What the host knows of it (description, default command, size...), host-specific. */
  description?: string | null;
  command?: string | null;
  [extra: string]: unknown;
}

/** What one container group may ask for on this host; configs are validated against it. */
export interface HostCapacity {
  maxCpuCores: number;
  /** GiB. */
  maxMemoryGb: number;
  maxGpuCores: number;
  /** GPU SKUs the host offers, e.g. `["K80", "P100", "V100"]`; empty when it has no GPUs. */
  gpuSkus: string[];
}

export interface GroupSpec {
  /** `containergroup-{jobId}`. */
  name: string;
  /** `name:tag`. */
  image: string;
  /** The config's runCommand, or null for the image's own command. */
  command: string | null;
  /** Run options merged with the job's own variables (jobId, the output token, the API's URL). Secret: never log. */
  environment: Record<string, string>;
  cpuCores: number;
  memoryGb: number;
  gpuCores: number | null;
  gpuSku: string | null;
  /** The host stops the group after this many seconds (counted from when it runs, not while it waits). */
  timeoutSeconds: number;
  /** Who the job runs for (its owner's id): the local host limits the jobs running at once per owner. */
  owner: string;
}

export type GroupPhase = "pending" | "running" | "succeeded" | "failed";

export interface GroupState {
  phase: GroupPhase;
  exitCode: number | null;
  /** Why it failed, in words (host error, non-zero exit, time limit). */
  error: string | null;
  /** The container's output so far: at most tailBytes, the tail kept. */
  output: string;
  /** True when older output was dropped to keep the tail within tailBytes. */
  outputTruncated: boolean;
  /**
   * Set while the host holds the group back (phase pending) because its limit of jobs running at once
   * is reached, saying why: the local host's CONTAINER_HOST_MAX_JOBS and CONTAINER_HOST_MAX_JOBS_PER_USER.
   * Absent or null otherwise (other hosts never hold a group back).
   */
  waiting?: string | null;
}

export interface ContainerHost {
  readonly kind: "local" | "azure" | "cloudflare";
  listImages(): Promise<{ images: JobImage[]; capacity: HostCapacity }>;
  /** Starts the group unless one of that name exists. */
  startGroup(spec: GroupSpec): Promise<void>;
  /** The group's state and output tail, or null when the host no longer knows the group. */
  inspectGroup(name: string, tailBytes: number): Promise<GroupState | null>;
  /** Stops and removes the group; succeeds when it is already gone. */
  removeGroup(name: string): Promise<void>;
}
