/**
 * Monitor job statuses and reported criticality (issue 20, section 3, the small ones): the status
 * token's 403 says what it means, a job never moves backwards, and criticality for assets outside the
 * monitor's populations is named in the job's error message instead of dropped in silence.
 */
import { describe, expect, it } from "vitest";
import { groupRecord, scriptGroup } from "../support/fake-host";
import { call } from "../support/http";
import { step } from "../dataprocessing/support";
import { bearer, monitoredPlants } from "./support";

describe("monitor job status PUT", () => {
  it("refuses another monitor's job with a 403 that says the token is for its own run only", async () => {
    const mine = await monitoredPlants("External", 1);
    const theirs = await monitoredPlants("External", 1);
    const run = await call(`/MonitorJobs/Execution/${mine.monitor.id}`, { method: "POST" });
    const other = await call(`/MonitorJobs/Execution/${theirs.monitor.id}`, { method: "POST" });
    const refused = await call(`/MonitorJobs/${other.body.id}/Succeeded`, { method: "PUT", headers: bearer(run.body.statusToken) });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("its own monitor job only");
    expect(refused.body.detail).toContain("a job of another monitor");
    expect((await call(`/MonitorJobs/${other.body.id}`)).body.status).toBe("Started");
  });

  it("moves a job forward only: InProgress never goes back to Started", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const run = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    const token = run.body.statusToken as string;
    const put = (status: string) => call(`/MonitorJobs/${run.body.id}/${status}`, { method: "PUT", headers: bearer(token) });
    expect((await put("Started")).status).toBe(200); // a repeat of where it is: harmless
    expect((await put("InProgress")).status).toBe(200);
    expect((await put("InProgress")).status).toBe(200);
    const back = await put("Started");
    expect(back.status, back.text).toBe(409);
    expect(back.body.detail).toContain("forward only");
    expect((await call(`/MonitorJobs/${run.body.id}`)).body.status).toBe("InProgress");
    expect((await put("Succeeded")).status).toBe(200);
    // The run's own token ended with it; someone holding monitor_jobs_status is told it has ended.
    expect((await put("InProgress")).status).toBe(401);
    const ended = await call(`/MonitorJobs/${run.body.id}/InProgress`, { method: "PUT" });
    expect(ended.status).toBe(409);
    expect(ended.body.detail).toContain("already ended");
  });
});

describe("criticality for assets outside the population", () => {
  it("applies the known assets and names the others in the job's error message (External)", async () => {
    const { monitor, plants } = await monitoredPlants("External", 2);
    const run = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    const stranger = crypto.randomUUID();
    const done = await call(`/MonitorJobs/${run.body.id}/Succeeded`, {
      method: "PUT",
      headers: bearer(run.body.statusToken),
      body: {
        criticality: [
          { assetId: plants[0]!.id, criticality: 85 },
          { assetId: stranger, criticality: 10 },
        ],
      },
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe("Succeeded");
    expect(done.body.errorMessage).toContain("outside the monitor's populations");
    expect(done.body.errorMessage).toContain(stranger);
    expect(done.body.errorMessage).not.toContain(plants[0]!.id);
    const items = (await call(`/Monitors/${monitor.id}`)).body.populations[0].items as {
      assetReference: { id: string };
      criticality: number | null;
    }[];
    expect(items.find((i) => i.assetReference.id === plants[0]!.id)!.criticality).toBe(85);
  });

  it("names them for an ACR model's job too, next to the container's own error", async () => {
    const { monitor, plants } = await monitoredPlants("ACR", 1);
    const run = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    expect(run.status, run.text).toBe(201);
    const jobId = run.body.jobId as string;
    const chainId = (await call(`/Jobs/${jobId}`)).body.chainId as string;
    await step(chainId);
    const token = (await groupRecord(`containergroup-${jobId}`))!.spec!.environment.INTEGRITY_EDGE_JOB_TOKEN!;
    const strangers = [crypto.randomUUID(), crypto.randomUUID()];
    const posted = await call("/JobOutputs", {
      method: "POST",
      headers: bearer(token),
      body: {
        jobId,
        output: {
          criticality: [{ assetId: plants[0]!.id, criticality: 40 }, ...strangers.map((assetId) => ({ assetId, criticality: 99 }))],
        },
      },
    });
    expect(posted.status, posted.text).toBe(201);
    await scriptGroup(`containergroup-${jobId}`, { phase: "succeeded", exitCode: 0, output: "done\n" });
    await step(chainId);
    const ended = (await call(`/MonitorJobs/${run.body.id}`)).body;
    expect(ended.status).toBe("Succeeded");
    expect(ended.errorMessage).toContain("2 assets outside the monitor's populations");
    for (const id of strangers) expect(ended.errorMessage).toContain(id);
  });
});
