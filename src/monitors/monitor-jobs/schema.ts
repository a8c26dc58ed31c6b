/** API shapes of monitor jobs (spec 2.8): one run of a monitor's model. */
import { z } from "@hono/zod-openapi";

export const MONITOR_JOB_STATUSES = ["Unknown", "Started", "InProgress", "Failed", "Succeeded"] as const;
export type MonitorJobStatus = (typeof MONITOR_JOB_STATUSES)[number];

/**
 * The variables the service adds to a monitor job's environment besides a job's own (`jobId`,
 * `INTEGRITY_EDGE_*`): the monitor's number and its population (src/monitors/monitor-jobs/run.ts).
 */
export const MONITOR_JOB_VARIABLES = {
  monitorId: "monitorId",
  populationAssetCount: "populationAssetCount",
  populationAssetIdsPath: "populationAssetIdsPath",
  populationAssetIds: "populationAssetIds",
} as const;

export const MonitorJobSchema = z
  .object({
    id: z.uuid(),
    monitor: z.object({ id: z.uuid(), monitorId: z.string(), name: z.string() }),
    jobId: z.uuid().nullable().openapi({ description: "The data processing job (ACR models)." }),
    modelDefinitionName: z.string(),
    modelDefinitionVersion: z.string(),
    status: z.enum(MONITOR_JOB_STATUSES),
    parameters: z.record(z.string(), z.string()),
    errorMessage: z.string().nullable(),
    output: z.string().nullable(),
    trigger: z.string(),
    createdDate: z.string(),
    completedDate: z.string().nullable(),
    statusToken: z
      .string()
      .optional()
      .openapi({
        description:
          "External models only, in the answer of the execution: the bearer token that may set this run's status (and read " +
          "the assets it scores), valid until the run ends or is cancelled.",
      }),
  })
  .openapi("MonitorJob");
