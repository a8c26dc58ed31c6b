/**
 * Areas that want to know when a job ends (monitor jobs copy its status back) register a hook here;
 * the runner calls the hook named by the job's `end_hook_kind` once the job ends.
 */
import type { JobEndHook } from "./contract";
import { monitorJobEndHook } from "../monitors/monitor-jobs/run";

export const jobEndHooks: JobEndHook[] = [monitorJobEndHook];
