/**
 * Issue 24, "Jobs a user can watch": a running job's output followed as it is produced
 * (GET /Jobs/{id}/Output?follow=true, server-sent events fed from the container host), bounded by
 * the job's end and a maximum duration, while the stored output keeps the runner's minute refresh.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { continueOutput, START } from "../../src/dataprocessing/follow";
import { scriptGroup, setHostDown } from "../support/fake-host";
import { call, tokenFor } from "../support/http";
import { createConfig, job, owner, step } from "./support";

const group = (jobId: string) => `containergroup-${jobId}`;
const app = createApp();

afterEach(() => setHostDown(false));

interface ServerEvent {
  event: string;
  data: Record<string, unknown>;
  id?: string;
}

/** Reads server-sent events one at a time; null when the stream has ended. */
function eventReader(res: Response) {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return async function next(timeoutMs = 10_000): Promise<ServerEvent | null> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const cut = buffer.indexOf("\n\n");
      if (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, "");
        }
        if (!fields.event) continue; // the retry field, heartbeats
        return {
          event: fields.event,
          data: JSON.parse(fields.data ?? "null") as Record<string, unknown>,
          ...(fields.id ? { id: fields.id } : {}),
        };
      }
      if (Date.now() > until) throw new Error(`no event within ${timeoutMs} ms; have: ${JSON.stringify(buffer)}`);
      const { value, done } = await reader.read();
      if (done) return null;
      buffer += value;
    }
  };
}

/** Opens the stream with the bounds a test needs (the defaults are 300 s and a 2 s poll). */
async function follow(jobId: string, options: { seconds?: number; lastEventId?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${await tokenFor(owner)}` };
  if (options.lastEventId) headers["last-event-id"] = options.lastEventId;
  const testEnv = { ...env, JOB_OUTPUT_POLL_MS: "50", JOB_OUTPUT_FOLLOW_SECONDS: String(options.seconds ?? 20) };
  const res = await app.fetch(
    new Request(`https://api.test/Jobs/${jobId}/Output?follow=true`, { headers }),
    testEnv,
    createExecutionContext(),
  );
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return eventReader(res);
}

async function running() {
  const res = await call(`/Jobs/Execution/${(await createConfig()).id}`, { method: "POST", user: owner });
  expect(res.status, res.text).toBe(201);
  const run = res.body as { jobId: string; chainId: string };
  await step(run.chainId);
  expect((await job(run.jobId)).status).toBe("InProgress");
  return run;
}

describe("following a job's output", () => {
  it("streams each line as the container writes it and ends when the job ends; the stored output keeps its minute refresh", async () => {
    const run = await running();
    await scriptGroup(group(run.jobId), { phase: "running", output: "line 1\n" });
    const next = await follow(run.jobId);
    expect(await next()).toEqual({ event: "status", data: { status: "InProgress" } });
    expect(await next()).toMatchObject({ event: "output", data: { text: "line 1\n", gap: false }, id: expect.any(String) });

    await scriptGroup(group(run.jobId), { phase: "running", output: "line 1\nline 2\n" });
    expect(await next()).toMatchObject({ event: "output", data: { text: "line 2\n", gap: false } });
    // Following reads the host; the job's stored output is still the runner's, refreshed each minute (rule 5).
    expect((await job(run.jobId)).output).not.toContain("line 2");

    await scriptGroup(group(run.jobId), { phase: "succeeded", exitCode: 0, output: "line 1\nline 2\ndone\n" });
    expect(await next()).toMatchObject({ event: "output", data: { text: "done\n" } });
    // The container ended: the stream asked the runner for a step, so the job ended now, not at the next minute.
    expect(await next()).toEqual({ event: "status", data: { status: "Success" } });
    expect(await next()).toMatchObject({ event: "end", data: { status: "Success", errorMessage: null, cancelledBy: null } });
    expect(await next()).toBeNull();
    expect(await job(run.jobId)).toMatchObject({ status: "Success", output: "line 1\nline 2\ndone\n" });
  });

  it("ends after its maximum duration while the job runs, and a reconnect with Last-Event-ID goes on where it stopped", async () => {
    const run = await running();
    await scriptGroup(group(run.jobId), { phase: "running", output: "a\n" });
    const first = await follow(run.jobId, { seconds: 1 });
    expect((await first())?.event).toBe("status");
    const a = await first();
    expect(a).toMatchObject({ event: "output", data: { text: "a\n" } });
    const started = Date.now();
    expect(await first()).toMatchObject({ event: "limit", data: { reason: "maxDuration", seconds: 1, status: "InProgress" } });
    expect(await first()).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);

    await scriptGroup(group(run.jobId), { phase: "running", output: "a\nb\n" });
    const second = await follow(run.jobId, { lastEventId: a!.id! });
    expect((await second())?.event).toBe("status");
    expect(await second()).toMatchObject({ event: "output", data: { text: "b\n", gap: false } });

    // A cancellation ends the stream with who cancelled it.
    const cancelled = await call(`/Jobs/${run.jobId}/Cancellation`, { method: "POST", user: { id: "u-watch", name: "Watcher" } });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(await second()).toEqual({ event: "status", data: { status: "Failed" } });
    expect(await second()).toMatchObject({
      event: "end",
      data: { status: "Failed", cancelledBy: { id: "u-watch", name: "Watcher" }, cancelledAt: expect.any(String) },
    });
    expect(await second()).toBeNull();
    // The output it had written when it was cancelled stays on the job.
    expect((await job(run.jobId)).output).toBe("a\nb\n");
  });

  it("answers an ended job's stream with its stored output and its end at once", async () => {
    const run = await running();
    await scriptGroup(group(run.jobId), { phase: "failed", exitCode: 3, output: "oops\n" });
    await step(run.chainId);
    const next = await follow(run.jobId);
    expect(await next()).toEqual({ event: "status", data: { status: "Failed" } });
    expect(await next()).toMatchObject({ event: "output", data: { text: "oops\n" } });
    expect(await next()).toMatchObject({
      event: "end",
      data: { status: "Failed", errorMessage: expect.stringContaining("3"), cancelledBy: null },
    });
    expect(await next()).toBeNull();
    // The same through the Worker's entry (its D1 session and bookmark wrap the stream).
    const whole = await call(`/Jobs/${run.jobId}/Output?follow=true`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("x-session-bookmark")).toBeTruthy();
    expect(whole.text).toMatch(/id: \S+\nevent: output\ndata: \{"text":"oops\\n"/);
    expect(whole.text).toMatch(/event: end\ndata: \{"status":"Failed"/);
  });

  it("keeps the stream open while the host does not answer, and goes on when it does", async () => {
    const run = await running();
    await scriptGroup(group(run.jobId), { phase: "running", output: "x\n" });
    await setHostDown(true);
    const next = await follow(run.jobId);
    expect((await next())?.event).toBe("status");
    await new Promise((resolve) => setTimeout(resolve, 200));
    await setHostDown(false);
    expect(await next()).toMatchObject({ event: "output", data: { text: "x\n" } });
  });
});

describe("reading a job's output without following", () => {
  it("reads live from the host while the job runs, and only what is new after a cursor", async () => {
    const run = await running();
    await scriptGroup(group(run.jobId), { phase: "running", output: "one\n" });
    const first = await call(`/Jobs/${run.jobId}/Output`);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ jobId: run.jobId, status: "InProgress", text: "one\n", gap: false, live: true, ended: false });
    await scriptGroup(group(run.jobId), { phase: "running", output: "one\ntwo\n" });
    const second = await call(`/Jobs/${run.jobId}/Output?after=${first.body.cursor}`);
    expect(second.body).toMatchObject({ text: "two\n", live: true });
    const same = await call(`/Jobs/${run.jobId}/Output?after=${second.body.cursor}`);
    expect(same.body.text).toBe("");
  });

  it("refuses a cursor it did not give and an unknown job", async () => {
    const run = await running();
    const bad = await call(`/Jobs/${run.jobId}/Output?after=not-a-cursor`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: "query.after", rule: "cursor" })]);
    expect((await call(`/Jobs/${crypto.randomUUID()}/Output`)).status).toBe(404);
    expect((await call(`/Jobs/${crypto.randomUUID()}/Output?follow=true`)).status).toBe(404);
  });
});

describe("what is new in a tail", () => {
  it("is exact while the output fits in its tail", () => {
    const one = continueOutput(START, "a\n", false);
    expect(one.text).toBe("a\n");
    const two = continueOutput(one.next, "a\na\n", false);
    expect(two).toMatchObject({ text: "a\n", gap: false });
    expect(continueOutput(two.next, "a\na\n", false).text).toBe("");
  });

  it("finds its place in a truncated tail, even one cut inside a character", () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join("");
    const before = continueOutput(START, lines, false);
    // The host keeps the last bytes: the tail starts inside an earlier line, here inside a character.
    const after = continueOutput(before.next, `\uFFFD${lines.slice(100)}line 40\n`, true);
    expect(after).toMatchObject({ text: "line 40\n", gap: false });
    // Little of what was sent is left at the start of the next tail: still found.
    const later = continueOutput(after.next, `${(lines + "line 40\n").slice(-20)}line 41\nline 42\n`, true);
    expect(later).toMatchObject({ text: "line 41\nline 42\n", gap: false });
    // A stored output older than what was read live adds nothing.
    expect(continueOutput(later.next, (lines + "line 40\n").slice(-20), true)).toMatchObject({ text: "", gap: false });
  });

  it("says so when more was written than the tail holds", () => {
    const before = continueOutput(START, "first part of the output\n", false);
    const after = continueOutput(before.next, "entirely new text that no longer overlaps\n", true);
    expect(after).toMatchObject({ text: "entirely new text that no longer overlaps\n", gap: true });
  });
});
