/**
 * A job's output token (src/dataprocessing/run-options.ts `jobTokenFor`), as authentication sees it:
 * good while its job runs, for posting that job's outputs and, when the job runs a monitor's model,
 * reading the assets it scores. Listed with the other scoped tokens in src/app.ts.
 */
import { tokenRefused, type ScopedTokenKind } from "../pkg/auth";
import { PERMISSIONS } from "../pkg/permissions";
import { findJobStatus } from "./jobs";

export const jobTokens: ScopedTokenKind = {
  scope: "job",
  async principal(env, jobId) {
    const status = await findJobStatus(env.DB, jobId);
    if (status !== "Started" && status !== "InProgress") throw tokenRefused("The job token has expired: its job has ended.", "expired");
    return {
      id: `job:${jobId}`,
      name: `job ${jobId}`,
      permissions: new Set([PERMISSIONS.jobOutputsWrite, PERMISSIONS.monitorJobAssetsRead]),
      jobId,
    };
  },
};
