/**
 * A job the container host holds back (issue 32: the local host runs at most CONTAINER_HOST_MAX_JOBS
 * jobs at once, CONTAINER_HOST_MAX_JOBS_PER_USER of one owner): it stays Started while it waits, its
 * output says why, its deadline moves with the wait (the time limit counts from the run), and it goes
 * InProgress when the host starts it. The host is told whose job it is.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { advanceChain } from "../../src/dataprocessing/runner";
import { createLogger } from "../../src/pkg/logger";
import { groupRecord, scriptGroup } from "../support/fake-host";
import { call } from "../support/http";
import { createConfig, job, owner, step } from "./support";

const log = createLogger("error", { test: "waiting" });
const WAITING =
  "2 jobs of the same user are running, the limit per user (CONTAINER_HOST_MAX_JOBS_PER_USER 2); it starts when one of them ends " +
  "(0 waiting before it)";

describe("a job the host holds back", () => {
  it("stays Started saying why, keeps its full time limit however long it waits, and runs when the host starts it", async () => {
    const config = await createConfig({ timeoutMinutes: 1 });
    const run = await call(`/Jobs/Execution/${config.id}`, { method: "POST", user: owner });
    expect(run.status, run.text).toBe(201);
    const { jobId, chainId } = run.body as { jobId: string; chainId: string };
    const name = `containergroup-${jobId}`;
    await scriptGroup(name, { phase: "pending", waiting: WAITING, output: `[container host] waiting: ${WAITING}\n` });
    await step(chainId);
    expect((await groupRecord(name))!.spec!.owner).toBe(owner.id);
    const waiting = await job(jobId);
    expect(waiting.status).toBe("Started");
    expect(waiting.output).toContain("[container host] waiting: 2 jobs of the same user are running");
    // Ten minutes later (the time limit is 1 minute, its grace 2): still waiting, not failed.
    const later = new Date(Date.now() + 10 * 60_000);
    await advanceChain(env, chainId, later, log);
    const stillWaiting = await job(jobId);
    expect(stillWaiting.status).toBe("Started");
    expect(Date.parse(stillWaiting.deadlineAt as string)).toBe(later.getTime() + (60 + 120) * 1000);
    // The host starts it: InProgress, and it succeeds like any job.
    await scriptGroup(name, {
      phase: "running",
      waiting: null,
      output: "[container host] a place is free: starting after 600 s of waiting\n",
    });
    await advanceChain(env, chainId, new Date(later.getTime() + 60_000), log);
    expect((await job(jobId)).status).toBe("InProgress");
    await scriptGroup(name, { phase: "succeeded", exitCode: 0, output: "done\n" });
    await advanceChain(env, chainId, new Date(later.getTime() + 120_000), log);
    expect((await job(jobId)).status).toBe("Success");
    expect((await groupRecord(name))!.starts).toBe(1);
  });

  it("can be cancelled while it waits: Failed with cancelledBy, and the host forgets the group", async () => {
    const config = await createConfig();
    const run = await call(`/Jobs/Execution/${config.id}`, { method: "POST", user: owner });
    const { jobId, chainId } = run.body as { jobId: string; chainId: string };
    const name = `containergroup-${jobId}`;
    await scriptGroup(name, { phase: "pending", waiting: WAITING, output: "" });
    await step(chainId);
    expect((await job(jobId)).status).toBe("Started");
    const cancelled = await call(`/Jobs/${jobId}/Cancellation`, { method: "POST", user: owner });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "Failed", cancelledBy: { id: owner.id } });
    expect((await groupRecord(name))!.removed).toBe(true);
  });
});
