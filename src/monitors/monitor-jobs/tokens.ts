/**
 * A monitor job's status token (External models; `monitorJobStatusToken` in run.ts), as
 * authentication sees it: one run's, good while that monitor job is Started or InProgress, for
 * setting that run's status and reading the assets it scores. Ending the run (by its model, its
 * deadline or a cancellation) revokes it. The older monitor-wide tokens verify but are refused, saying
 * why. Listed with the other scoped tokens in src/app.ts.
 */
import { tokenRefused, type ScopedTokenKind } from "../../pkg/auth";
import { PERMISSIONS } from "../../pkg/permissions";
import { findMonitorJobRow } from "./store";

export const monitorJobTokens: ScopedTokenKind = {
  scope: "monitorjob",
  async principal(env, monitorJobId) {
    const run = await findMonitorJobRow(env.DB, monitorJobId);
    if (!run || (run.status !== "Started" && run.status !== "InProgress"))
      throw tokenRefused("The monitor job's status token has expired: its run has ended (or was cancelled).", "expired");
    return {
      id: `monitorjob:${monitorJobId}`,
      name: `monitor job ${monitorJobId}`,
      permissions: new Set([PERMISSIONS.monitorJobsStatus, PERMISSIONS.monitorJobAssetsRead]),
      monitorRef: run.monitorRef,
      monitorJobId,
    };
  },
};

export const monitorWideTokens: ScopedTokenKind = {
  scope: "monitor",
  principal() {
    throw tokenRefused(
      "Monitor-wide status tokens are no longer accepted: each run has its own, the statusToken in the answer of " +
        "POST /MonitorJobs/Execution/{monitorId}, valid until that run ends.",
      "expired",
    );
  },
};
