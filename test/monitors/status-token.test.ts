/**
 * A monitor job's status token is one run's (issue 32): it sets that run alone, it stops working when
 * the run ends (its model reports an end, its deadline passes, it is cancelled), and the older
 * monitor-wide tokens, good for every run forever, are refused saying why.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signScopedToken } from "../../src/pkg/keys";
import { expireMonitorJobs } from "../../src/monitors/monitor-jobs/run";
import { step } from "../dataprocessing/support";
import { groupRecord } from "../support/fake-host";
import { call } from "../support/http";
import { bearer, monitoredPlants } from "./support";

async function runOf(monitorId: string) {
  const run = await call(`/MonitorJobs/Execution/${monitorId}`, { method: "POST" });
  expect(run.status, run.text).toBe(201);
  return run.body as { id: string; statusToken: string; jobId: string | null; status: string };
}
const put = (runId: string, status: string, token: string) =>
  call(`/MonitorJobs/${runId}/${status}`, { method: "PUT", anonymous: true, headers: bearer(token) });

describe("a monitor job's status token", () => {
  it("sets its own run only, and no longer works once that run has ended", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const first = await runOf(monitor.id);
    const second = await runOf(monitor.id);
    expect(first.statusToken).toMatch(/^monitorjob\./);
    expect(first.statusToken).not.toBe(second.statusToken);
    const crossed = await put(second.id, "InProgress", first.statusToken);
    expect(crossed.status).toBe(403);
    expect(crossed.body.detail).toContain("another run of the same monitor");
    expect(
      (await call(`/MonitorJobs/${first.id}/PopulationAssetIds`, { anonymous: true, headers: bearer(second.statusToken) })).status,
    ).toBe(403);
    expect((await put(first.id, "Succeeded", first.statusToken)).status).toBe(200);
    // A token from the old run: refused, for its own run and everything else.
    const stale = await put(first.id, "Failed", first.statusToken);
    expect(stale.status).toBe(401);
    expect(stale.body.detail).toContain("its run has ended");
    expect(
      (await call(`/MonitorJobs/${first.id}/PopulationAssetIds`, { anonymous: true, headers: bearer(first.statusToken) })).status,
    ).toBe(401);
    // The other run keeps its own.
    expect((await put(second.id, "InProgress", second.statusToken)).status).toBe(200);
  });

  it("expires with its run's deadline", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const run = await runOf(monitor.id);
    await expireMonitorJobs(env, new Date(Date.now() + 3 * 3600_000));
    expect((await call(`/MonitorJobs/${run.id}`)).body.status).toBe("Failed");
    expect((await put(run.id, "Succeeded", run.statusToken)).status).toBe(401);
  });

  it("is revoked by cancelling the run: Failed, saying who cancelled, and the token refused", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const run = await runOf(monitor.id);
    expect((await put(run.id, "InProgress", run.statusToken)).status).toBe(200);
    const canceller = { id: "mon-canceller", name: "Night Shift" };
    const cancelled = await call(`/MonitorJobs/${run.id}/Cancellation`, { method: "POST", user: canceller });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({
      id: run.id,
      status: "Failed",
      errorMessage: expect.stringMatching(/^Cancelled by Night Shift at /),
    });
    expect((await put(run.id, "Succeeded", run.statusToken)).status).toBe(401);
    const { results } = await env.DB.prepare("SELECT payload FROM outbox WHERE entity_kind = 'monitorJob' AND entity_id = ?1 ORDER BY seq")
      .bind(run.id)
      .all<{ payload: string }>();
    expect(results.map((r) => JSON.parse(r.payload).status)).toEqual(["InProgress", "Failed"]);
    // Once ended, a second cancellation is a 409 and changes nothing.
    const again = await call(`/MonitorJobs/${run.id}/Cancellation`, { method: "POST" });
    expect(again.status).toBe(409);
    expect((await call(`/MonitorJobs/${run.id}`)).body.errorMessage).toMatch(/^Cancelled by Night Shift/);
  });

  it("cancelling an ACR model's run cancels its data processing job too, which ends that job's own token", async () => {
    const { monitor } = await monitoredPlants("ACR", 1);
    const run = await runOf(monitor.id);
    const job = (await call(`/Jobs/${run.jobId}`)).body as { chainId: string };
    await step(job.chainId);
    const jobToken = (await groupRecord(`containergroup-${run.jobId}`))!.spec!.environment.INTEGRITY_EDGE_JOB_TOKEN!;
    const cancelled = await call(`/MonitorJobs/${run.id}/Cancellation`, { method: "POST", user: { id: "mon-canceller", name: "Ops" } });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "Failed", errorMessage: expect.stringMatching(/^Cancelled by Ops at /) });
    expect((await call(`/Jobs/${run.jobId}`)).body).toMatchObject({ status: "Failed", cancelledBy: { id: "mon-canceller", name: "Ops" } });
    expect((await groupRecord(`containergroup-${run.jobId}`))!.removed).toBe(true);
    const posted = await call("/JobOutputs", {
      method: "POST",
      anonymous: true,
      headers: bearer(jobToken),
      body: { jobId: run.jobId, output: { criticality: [] } },
    });
    expect(posted.status).toBe(401);
  });

  it("cancelling takes monitors_write (a run's own token cannot), and an unknown run is a 404", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const run = await runOf(monitor.id);
    const reader = { id: "mon-reader", name: "Reader", permissions: ["monitors_read"] };
    expect((await call(`/MonitorJobs/${run.id}/Cancellation`, { method: "POST", user: reader })).status).toBe(403);
    expect(
      (await call(`/MonitorJobs/${run.id}/Cancellation`, { method: "POST", anonymous: true, headers: bearer(run.statusToken) })).status,
    ).toBe(403);
    expect((await call(`/MonitorJobs/${crypto.randomUUID()}/Cancellation`, { method: "POST" })).status).toBe(404);
    expect((await call(`/MonitorJobs/${run.id}`)).body.status).toBe("Started");
  });

  it("refuses the older monitor-wide tokens, saying runs have their own", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const run = await runOf(monitor.id);
    const monitorWide = await signScopedToken(env, "monitor", monitor.id);
    const refused = await put(run.id, "InProgress", monitorWide);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toContain("Monitor-wide status tokens are no longer accepted");
    expect((await call(`/MonitorJobs/${run.id}`)).body.status).toBe("Started");
  });
});
