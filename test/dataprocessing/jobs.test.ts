import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { afterEach, describe, expect, it } from "vitest";
import { advanceChain } from "../../src/dataprocessing/runner";
import { createLogger } from "../../src/pkg/logger";
import { dispatchDueRuns } from "../../src/pkg/schedule";
import { jobConfigScheduleKind } from "../../src/dataprocessing/execution";
import { groupRecord, loseGroup, scriptGroup, setHostDown } from "../support/fake-host";
import { call } from "../support/http";
import { createConfig, job, owner, step } from "./support";

const log = createLogger("error", { test: "jobs" });
const group = (jobId: string) => `containergroup-${jobId}`;

async function execute(configId: string, body?: unknown) {
  const res = await call(
    `/Jobs/Execution/${configId}`,
    body === undefined ? { method: "POST", user: owner } : { method: "POST", body, user: owner },
  );
  expect(res.status, res.text).toBe(201);
  return res.body as { jobId: string; jobIds: string[]; chainId: string; job: { status: string } };
}

afterEach(() => setHostDown(false));

describe("running a job config", () => {
  it("answers jobId for an empty body, starts containergroup-{jobId} once with the merged options", async () => {
    const config = await createConfig({
      runOptions: { THRESHOLD: "0.8", MODE: "slow" },
      runConfigs: { cpuCores: 2, memory: 3, gpuCores: null, gpuSku: null },
    });
    const run = await execute(config.id);
    expect(run.job.status).toBe("Started");
    expect(run.jobIds).toEqual([run.jobId]);
    await step(run.chainId);
    await step(run.chainId);
    const record = await groupRecord(group(run.jobId));
    expect(record?.starts).toBe(1);
    expect(record?.spec).toMatchObject({
      name: group(run.jobId),
      image: "examples/hello:latest",
      cpuCores: 2,
      memoryGb: 3,
      timeoutSeconds: 3600,
    });
    expect(record?.spec?.environment).toMatchObject({
      THRESHOLD: "0.8",
      MODE: "slow",
      jobId: run.jobId,
      INTEGRITY_EDGE_API_URL: "https://api.test",
    });
    expect(record?.spec?.environment.INTEGRITY_EDGE_JOB_TOKEN).toMatch(/^job\./);
    expect((await job(run.jobId)).status).toBe("InProgress");
  });

  it("merges the body's options over the config's, the body winning, and always sets jobId", async () => {
    const config = await createConfig({ runOptions: { THRESHOLD: "0.8", MODE: "slow" } });
    const run = await execute(config.id, { runOptions: { MODE: "fast", EXTRA: "1" } });
    await step(run.chainId);
    expect((await groupRecord(group(run.jobId)))?.spec?.environment).toMatchObject({
      THRESHOLD: "0.8",
      MODE: "fast",
      EXTRA: "1",
      jobId: run.jobId,
    });
    const reserved = await call(`/Jobs/Execution/${config.id}`, { method: "POST", body: { runOptions: { jobId: "mine" } } });
    expect(reserved.status).toBe(400);
  });

  it("refreshes the output every step, ends Success, removes the container and keeps the job readable", async () => {
    const run = await execute((await createConfig()).id);
    await step(run.chainId);
    await scriptGroup(group(run.jobId), { phase: "running", output: "line 1\n" });
    await step(run.chainId);
    expect((await job(run.jobId)).output).toBe("line 1\n");
    await scriptGroup(group(run.jobId), { phase: "succeeded", exitCode: 0, output: "line 1\nline 2\ndone\n" });
    await step(run.chainId);
    const ended = await job(run.jobId);
    expect(ended).toMatchObject({ status: "Success", output: "line 1\nline 2\ndone\n", errorMessage: null });
    expect((await groupRecord(group(run.jobId)))?.removed).toBe(true);
    expect((await job(run.jobId)).status).toBe("Success");
  });

  it("keeps the tail of an output that is too long", async () => {
    const run = await execute((await createConfig()).id);
    await step(run.chainId);
    const long = "x".repeat(70 * 1024) + "THE END";
    await scriptGroup(group(run.jobId), { phase: "running", output: long });
    await step(run.chainId);
    const read = await job(run.jobId);
    expect(read.outputTruncated).toBe(true);
    expect(read.output!.length).toBe(64 * 1024);
    expect(read.output!.endsWith("THE END")).toBe(true);
  });

  it("fails with the container's error message", async () => {
    const run = await execute((await createConfig({ jobDefinition: "examples/fail:latest" })).id);
    await step(run.chainId);
    await scriptGroup(group(run.jobId), { phase: "failed", exitCode: 1, error: "model weights missing", output: "loading...\n" });
    await step(run.chainId);
    expect(await job(run.jobId)).toMatchObject({ status: "Failed", errorMessage: "model weights missing", output: "loading...\n" });
    expect((await groupRecord(group(run.jobId)))?.removed).toBe(true);
  });

  it("fails a job whose container the host no longer knows", async () => {
    const run = await execute((await createConfig()).id);
    await step(run.chainId);
    await loseGroup(group(run.jobId));
    await step(run.chainId);
    const lost = await job(run.jobId);
    expect(lost.status).toBe("Failed");
    expect(lost.errorMessage).toContain("no longer knows");
  });

  it("waits for a silent host until the job's deadline, then fails it", async () => {
    const run = await execute((await createConfig({ timeoutMinutes: 1 })).id);
    await step(run.chainId);
    await setHostDown(true);
    await step(run.chainId);
    expect((await job(run.jobId)).status).toBe("InProgress");
    // Past the time limit (60 s) and its grace (120 s).
    await advanceChain(env, run.chainId, new Date(Date.now() + 200_000), log);
    const failed = await job(run.jobId);
    expect(failed.status).toBe("Failed");
    expect(failed.errorMessage).toMatch(/has not answered since .* deadline/);
  });

  it("starts a job interrupted before its container was created exactly once, from the cron refresh", async () => {
    const config = await createConfig();
    // A Worker restart after the jobs were written: the runner was never kicked.
    const { createChain, plannedFromConfig } = await import("../../src/dataprocessing/jobs");
    const { toRunnable, getConfigRow } = await import("../../src/dataprocessing/configs");
    const runnable = await toRunnable(env, await getConfigRow(env.DB, config.id));
    const ctx = {
      db: env.DB,
      now: new Date().toISOString(),
      actorId: null,
      actorName: null,
      requestId: "t",
      uuid: () => crypto.randomUUID(),
      expectedEtag: undefined,
    };
    const created = await createChain(ctx, env, {
      jobs: [plannedFromConfig(runnable, runnable.runOptions, "https://api.test")],
      owner: { id: "dp-owner", name: null },
    });
    const jobId = created.jobIds[0]!;
    expect(await groupRecord(group(jobId))).toBeNull();
    for (let i = 0; i < 2; i++) {
      const ctx2 = createExecutionContext();
      await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), env, ctx2);
      await waitOnExecutionContext(ctx2);
    }
    expect((await groupRecord(group(jobId)))?.starts).toBe(1);
    expect((await job(jobId)).status).toBe("InProgress");
  });
});

describe("chains", () => {
  it("runs a one-time chain in order, starting each job when the previous succeeds, failing the rest when one fails", async () => {
    const [a, b, c] = [
      await createConfig({ runOptions: { A: "1" } }),
      await createConfig({ runOptions: { B: "1" } }),
      await createConfig({ runOptions: { C: "1" } }),
    ];
    const res = await call("/Jobs/ChainExecution", {
      method: "POST",
      body: { jobConfigIds: [a.id, b.id, c.id], runOptions: { FROM_BODY: "yes" } },
    });
    expect(res.status, res.text).toBe(201);
    const [first, second, third] = res.body.jobIds as string[];
    expect(res.body.jobId).toBe(first);
    await step(res.body.chainId);
    expect((await groupRecord(group(first!)))?.starts).toBe(1);
    expect(await groupRecord(group(second!))).toBeNull();
    expect((await job(second!)).status).toBe("Started");
    // Rule 3: the body's options go to the first job only.
    expect((await groupRecord(group(first!)))?.spec?.environment).toMatchObject({ A: "1", FROM_BODY: "yes" });

    await scriptGroup(group(first!), { phase: "succeeded", exitCode: 0 });
    await step(res.body.chainId);
    expect((await job(first!)).status).toBe("Success");
    const secondEnv = (await groupRecord(group(second!)))?.spec?.environment;
    expect(secondEnv).toMatchObject({ B: "1" });
    expect(secondEnv).not.toHaveProperty("FROM_BODY");

    await scriptGroup(group(second!), { phase: "failed", exitCode: 2, error: "bad input" });
    await step(res.body.chainId);
    expect((await job(second!)).status).toBe("Failed");
    const last = await job(third!);
    expect(last.status).toBe("Failed");
    expect(last.errorMessage).toContain(second!);
    expect(await groupRecord(group(third!))).toBeNull();
  });

  it("accepts per-config options for the first config only, and says why otherwise", async () => {
    const [a, b] = [await createConfig(), await createConfig()];
    const ok = await call("/Jobs/ChainExecution", {
      method: "POST",
      body: { jobConfigIds: [a.id, b.id], runOptions: { [a.id]: { X: "1" } } },
    });
    expect(ok.status).toBe(201);
    const refused = await call("/Jobs/ChainExecution", {
      method: "POST",
      body: { jobConfigIds: [a.id, b.id], runOptions: { [b.id]: { X: "1" } } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ field: `body.runOptions.${b.id}`, rule: "firstJobOnly" });
    const missing = await call("/Jobs/ChainExecution", { method: "POST", body: { jobConfigIds: [a.id, crypto.randomUUID()] } });
    expect(missing.status).toBe(404);
  });

  it("runs a config's own nextConfigId chain the same way", async () => {
    const second = await createConfig();
    const first = await createConfig({ nextConfigId: second.id });
    const run = await execute(first.id);
    expect(run.jobIds).toHaveLength(2);
    const jobs = await call(`/Jobs?chainIds=${run.chainId}&order=chainPosition asc`);
    expect(jobs.body.map((j: { configurationId: string }) => j.configurationId)).toEqual([first.id, second.id]);
  });

  it("cancels a running job, removing its container and failing the rest of its chain", async () => {
    const [a, b] = [await createConfig(), await createConfig()];
    const res = await call("/Jobs/ChainExecution", { method: "POST", body: { jobConfigIds: [a.id, b.id] } });
    const [first, second] = res.body.jobIds as string[];
    await step(res.body.chainId);
    const cancelled = await call(`/Jobs/${first}/Cancellation`, { method: "POST", user: { id: "u-cancel", name: "Cancel Person" } });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe("Failed");
    expect(cancelled.body.errorMessage).toContain("Cancelled by Cancel Person");
    // A client tells a cancellation from a failure by its fields, not by parsing the message (issue 24).
    expect(cancelled.body.cancelledBy).toEqual({ id: "u-cancel", name: "Cancel Person" });
    expect(Date.parse(cancelled.body.cancelledAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await groupRecord(group(first!)))?.removed).toBe(true);
    const rest = await job(second!);
    expect(rest.status).toBe("Failed");
    expect(rest).toMatchObject({ cancelledBy: { id: "u-cancel", name: "Cancel Person" }, cancelledAt: cancelled.body.cancelledAt });
    expect((await call(`/Jobs/${first}/Cancellation`, { method: "POST" })).status).toBe(409);
  });

  it("migration 0011 gives jobs cancelled before it their cancelledBy name and cancelledAt from the message", async () => {
    const run = await execute((await createConfig()).id);
    const endedAt = "2026-01-05T09:00:00.000Z";
    await env.DB.prepare("UPDATE jobs SET status = 'Failed', ended_at = ?2, error_message = ?3 WHERE id = ?1")
      .bind(run.jobId, endedAt, `Cancelled by Ada at Home at ${endedAt}.`)
      .run();
    const other = await execute((await createConfig()).id);
    await env.DB.prepare("UPDATE jobs SET status = 'Failed', ended_at = ?2, error_message = 'Cancelled by nothing we know' WHERE id = ?1")
      .bind(other.jobId, endedAt)
      .run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0011_"))!;
    for (const query of migration.queries.filter((q) => q.trim().startsWith("UPDATE") || q.includes("\nUPDATE")))
      await env.DB.prepare(query.slice(query.indexOf("UPDATE"))).run();
    expect(await job(run.jobId)).toMatchObject({ cancelledBy: { id: null, name: "Ada at Home" }, cancelledAt: endedAt });
    expect(await job(other.jobId)).toMatchObject({ cancelledBy: null, cancelledAt: null });
  });

  it("leaves cancelledBy and cancelledAt null on a job that failed by itself", async () => {
    const run = await execute((await createConfig()).id);
    await step(run.chainId);
    await scriptGroup(group(run.jobId), { phase: "failed", exitCode: 2, output: "boom\n" });
    await step(run.chainId);
    const failed = await job(run.jobId);
    expect(failed).toMatchObject({ status: "Failed", cancelledBy: null, cancelledAt: null });
    const listed = await call(`/Jobs?chainIds=${run.chainId}`);
    expect(listed.body[0]).toMatchObject({ cancelledBy: null, cancelledAt: null });
  });
});

describe("listing jobs", () => {
  it("filters by the original client's configurationId, by statuses and by creation time", async () => {
    const config = await createConfig();
    const one = await execute(config.id);
    const two = await execute(config.id);
    await step(two.chainId);
    await scriptGroup(group(two.jobId), { phase: "succeeded", exitCode: 0 });
    await step(two.chainId);
    const byConfig = await call(`/Jobs?configurationId=${config.id}`);
    expect(byConfig.body.map((j: { id: string }) => j.id).sort()).toEqual([one.jobId, two.jobId].sort());
    const succeeded = await call(`/Jobs?configurationIds=${config.id}&statuses=Success`);
    expect(succeeded.body.map((j: { id: string }) => j.id)).toEqual([two.jobId]);
    expect((await call(`/Jobs?configurationId=${config.id}&createdFrom=2999-01-01T00:00:00Z`)).body).toEqual([]);
    expect((await call("/Jobs?statuses=Succeeded")).status).toBe(400);
  });
});

describe("weekly schedules", () => {
  it("starts each due occurrence once when a tick is delivered twice, and follows daylight saving time", async () => {
    const config = await createConfig({
      frequency: { dayOfWeek: "monday", hour: 9, startDate: "2027-03-01T00:00:00" },
      timeZone: "America/New_York",
    });
    const kinds = [jobConfigScheduleKind];
    const tick = (iso: string) => dispatchDueRuns(env, new Date(iso), kinds, log);
    await Promise.all([tick("2027-03-01T14:00:10Z"), tick("2027-03-01T14:00:10Z")]);
    await tick("2027-03-01T14:01:00Z");
    const jobs = async () => (await call(`/Jobs?configurationId=${config.id}`)).body as { id: string }[];
    expect(await jobs()).toHaveLength(1);
    expect((await call(`/JobConfigurations/${config.id}`)).body.nextRunAt).toBe("2027-03-08T14:00:00.000Z");
    await tick("2027-03-08T14:00:05Z");
    expect(await jobs()).toHaveLength(2);
    // Daylight saving time began on 14 March: 09:00 in New York is now 13:00 UTC.
    expect((await call(`/JobConfigurations/${config.id}`)).body.nextRunAt).toBe("2027-03-15T13:00:00.000Z");
  });
});

describe("job outputs", () => {
  async function runningJob(outputSchema: unknown = null) {
    const type = await call("/OutputTypes", { method: "POST", body: { name: `type ${crypto.randomUUID()}`, schema: outputSchema } });
    const config = await createConfig({ outputTypeId: type.body.id });
    const run = await execute(config.id);
    await step(run.chainId);
    const token = (await groupRecord(group(run.jobId)))!.spec!.environment.INTEGRITY_EDGE_JOB_TOKEN!;
    return { run, token, typeId: type.body.id as string };
  }
  const post = (token: string, body: unknown) =>
    call("/JobOutputs", { method: "POST", body, headers: { authorization: `Bearer ${token}` } });

  it("stores an output posted with the job's own token, of the config's output type", async () => {
    const { run, token, typeId } = await runningJob();
    const res = await post(token, { jobId: run.jobId, output: { rows: 3 } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ jobId: run.jobId, jobOutputTypeId: typeId, output: { rows: 3 } });
    expect((await call(`/Jobs/${run.jobId}/Outputs`)).body).toHaveLength(1);
  });

  it("writes jobOutput events: created with the output, deleted as a tombstone, none for a refused delete", async () => {
    const { run, token } = await runningJob();
    const created = await post(token, { jobId: run.jobId, output: { rows: 7 } });
    expect(created.status, created.text).toBe(201);
    const events = async () =>
      (
        await env.DB.prepare("SELECT action, payload FROM outbox WHERE entity_kind = 'jobOutput' AND entity_id = ?1 ORDER BY seq")
          .bind(created.body.id)
          .all<{ action: string; payload: string }>()
      ).results.map((r) => [r.action, JSON.parse(r.payload)]);
    expect(await events()).toEqual([["created", created.body]]);
    expect((await call(`/JobOutputs/${created.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/JobOutputs/${created.body.id}`, { method: "DELETE" })).status).toBe(404);
    expect(await events()).toEqual([
      ["created", created.body],
      ["deleted", null],
    ]);
  });

  it("refuses an output that breaks its schema, creating nothing and recording why on the job", async () => {
    const { run, token } = await runningJob({
      type: "object",
      required: ["score"],
      properties: { score: { type: "number", maximum: 100 } },
    });
    const res = await post(token, { jobId: run.jobId, output: { score: 140 } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: "body.output", rule: "schema" });
    expect(res.body.detail).toContain("100");
    expect((await call(`/Jobs/${run.jobId}/Outputs`)).body).toEqual([]);
    const read = await job(run.jobId);
    expect(read.outputRejections).toHaveLength(1);
    expect(read.outputRejections[0]).toMatchObject({ errors: ["output/score: 140 is greater than 100."] });
  });

  it("lets a job token post its own job's outputs only, call nothing else, and expire with the job", async () => {
    const a = await runningJob();
    const b = await runningJob();
    expect((await post(a.token, { jobId: b.run.jobId, output: 1 })).status).toBe(403);
    expect((await call(`/Jobs/${a.run.jobId}`, { headers: { authorization: `Bearer ${a.token}` } })).status).toBe(403);
    const forged = a.token.slice(0, -4) + (a.token.endsWith("AAAA") ? "BBBB" : "AAAA");
    expect((await post(forged, { jobId: a.run.jobId, output: 1 })).status).toBe(401);
    await scriptGroup(group(a.run.jobId), { phase: "succeeded", exitCode: 0 });
    await step(a.run.chainId);
    const expired = await post(a.token, { jobId: a.run.jobId, output: 1 });
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toContain("ended");
  });
});
