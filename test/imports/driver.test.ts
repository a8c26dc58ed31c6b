/**
 * Issue 37, imports that always reach their end: each import is driven by its own Durable Object
 * (ImportRunner, durable-objects/import-runner.ts), one step per alarm, with the minute cron poking a
 * stalled one. The clock every Durable Object reads is moved an hour ahead (test/support/clock.ts), so
 * the runner's alarms ("now") are due an hour from now in real time and never fire by themselves: each
 * test runs them one by one (runDurableObjectAlarm), deterministically, without sleeping.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ImportRunner } from "../../durable-objects/import-runner";
import { MAX_STEP_ATTEMPTS, resumeStalledImports } from "../../src/imports/run";
import { nowMs } from "../../src/platform/services";
import { call } from "../support/http";
import { clockAhead } from "../support/clock";
import { importCsv, waitForImport } from "./support";

const HOUR = 3_600_000;
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

function runner(importId: string): DurableObjectStub<ImportRunner> {
  return env.IMPORT_RUNNERS.get(env.IMPORT_RUNNERS.idFromName(importId)) as unknown as DurableObjectStub<ImportRunner>;
}

/** A CSV of `n` deviations keyed by a `ref` column. */
function register(ref: string, n: number): string {
  const lines = ["ref,referenceId,description"];
  for (let i = 1; i <= n; i++) lines.push(`${i},${ref}-${i},Wall loss at location ${i}`);
  return `${lines.join("\r\n")}\r\n`;
}

/** Commits the CSV (rows keyed by `ref`); answers the import's id, its runner's alarm set, not yet run. */
async function commit(ref: string, n: number): Promise<string> {
  const res = await importCsv(register(ref, n), { rowKey: "ref" });
  expect(res.status, res.text).toBe(202);
  expect(res.body.status).toBe("queued");
  return res.body.id as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
async function importOf(id: string): Promise<any> {
  const res = await call(`/Imports/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Runs the runner's alarms until none is set; answers how many ran (bounded, so a loop fails the test). */
async function runAlarms(stub: DurableObjectStub<ImportRunner>, limit = 50): Promise<number> {
  let ran = 0;
  while (await runDurableObjectAlarm(stub)) if (++ran > limit) throw new Error("the runner never stops setting alarms");
  return ran;
}

/** What the runner keeps: its storage and its alarm. */
const runnerState = (stub: DurableObjectStub<ImportRunner>) =>
  runInDurableObject(stub, async (_instance, state) => ({
    storage: Object.fromEntries(await state.storage.list()),
    alarm: await state.storage.getAlarm(),
  }));

/** Deviations whose referenceId starts with `ref`: how many rows, and how many distinct referenceIds. */
const written = (ref: string) =>
  env.DB.prepare("SELECT count(*) AS n, count(DISTINCT reference_id) AS distinctRefs FROM deviations WHERE reference_id LIKE ?1")
    .bind(`${ref}-%`)
    .first<{ n: number; distinctRefs: number }>();

const chunkKey = (id: string, chunk: number) => `imports/${id}/chunks/${chunk}.json`;

describe("an import driven by its runner's alarms", () => {
  let restore: () => void;
  beforeEach(() => {
    restore = clockAhead(HOUR);
  });
  afterEach(() => restore());

  it("runs one step per alarm (the split, then one chunk of 100 rows) to completed, then keeps nothing", async () => {
    const ref = unique("DRV");
    const id = await commit(ref, 350);
    const stub = runner(id);
    const set = await runnerState(stub);
    expect(set.storage).toEqual({ importId: id });
    expect(set.alarm).not.toBeNull();

    // The split: the import knows its total and runs; no row written yet.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await importOf(id)).toMatchObject({ status: "running", total: 350, processed: 0 });
    // Each alarm one chunk, and the next alarm set.
    for (const processed of [100, 200, 300]) {
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      expect(await importOf(id)).toMatchObject({ status: "running", processed, created: processed });
      expect((await runnerState(stub)).alarm).not.toBeNull();
    }
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await importOf(id)).toMatchObject({ status: "completed", total: 350, processed: 350, created: 350, failed: 0 });
    expect(await written(ref)).toEqual({ n: 350, distinctRefs: 350 });
    // Ended: no alarm, nothing stored; the chunks are gone from R2.
    expect(await runnerState(stub)).toEqual({ storage: {}, alarm: null });
    expect(await runDurableObjectAlarm(stub)).toBe(false);
    expect(await env.UPLOADS.get(chunkKey(id, 0))).toBeNull();
  });

  it("retries a step that throws; the import completes with every row written exactly once", async () => {
    const ref = unique("RTY");
    const id = await commit(ref, 250);
    const stub = runner(id);
    expect(await runDurableObjectAlarm(stub)).toBe(true); // the split
    // Chunk 1 goes missing from R2 for a while: its step throws.
    const chunk1 = await (await env.UPLOADS.get(chunkKey(id, 1)))!.text();
    await env.UPLOADS.delete(chunkKey(id, 1));
    expect(await runDurableObjectAlarm(stub)).toBe(true); // chunk 0
    await expect(runDurableObjectAlarm(stub)).rejects.toThrow(/chunk 1 is not stored/);
    expect((await runnerState(stub)).storage).toEqual({ importId: id, failures: { step: "chunk 1", count: 1 } });
    expect(await importOf(id)).toMatchObject({ status: "running", processed: 100 });
    // Run again (here by the cron's poke, as the runtime's alarm retry would): it finds chunk 0 counted and goes on.
    await env.UPLOADS.put(chunkKey(id, 1), chunk1);
    expect(await resumeStalledImports(env, new Date(nowMs() + 31_000))).toBeGreaterThanOrEqual(1);
    expect(await runAlarms(stub)).toBe(2); // chunk 1, chunk 2
    expect(await importOf(id)).toMatchObject({ status: "completed", total: 250, processed: 250, created: 250, skipped: 0, failed: 0 });
    expect(await written(ref)).toEqual({ n: 250, distinctRefs: 250 });
    const rows = await env.DB.prepare("SELECT count(*) AS n, count(DISTINCT row_key) AS keys FROM import_rows WHERE import_id = ?1")
      .bind(id)
      .first<{ n: number; keys: number }>();
    expect(rows).toEqual({ n: 250, keys: 250 });
    expect(await runnerState(stub)).toEqual({ storage: {}, alarm: null });
  });

  it(`fails the import (given up) when a step fails ${MAX_STEP_ATTEMPTS} times in a row, keeping the rows written`, async () => {
    const ref = unique("GVU");
    const id = await commit(ref, 150);
    const stub = runner(id);
    expect(await runDurableObjectAlarm(stub)).toBe(true); // the split
    expect(await runDurableObjectAlarm(stub)).toBe(true); // chunk 0
    await env.UPLOADS.delete(chunkKey(id, 1));
    for (let attempt = 1; attempt < MAX_STEP_ATTEMPTS; attempt++) {
      await expect(runDurableObjectAlarm(stub)).rejects.toThrow(/chunk 1 is not stored/);
      expect(await importOf(id)).toMatchObject({ status: "running" });
      await stub.run(id); // the retry: the runtime's or the cron's
    }
    // The last attempt gives up: no throw (no more retries), the import failed.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await importOf(id)).toMatchObject({
      status: "failed",
      processed: 100,
      created: 100,
      problem: { rule: "failed", message: expect.stringContaining("failed again and again") },
    });
    expect(await written(ref)).toEqual({ n: 100, distinctRefs: 100 });
    expect(await runnerState(stub)).toEqual({ storage: {}, alarm: null });
    // The cron leaves a failed import alone.
    await resumeStalledImports(env, new Date(nowMs() + 31_000));
    expect(await runDurableObjectAlarm(stub)).toBe(false);
  });

  it("picks up a stalled import (its alarm lost) through the minute cron, after 30 s without progress", async () => {
    const ref = unique("STL");
    const id = await commit(ref, 220);
    const stub = runner(id);
    expect(await runDurableObjectAlarm(stub)).toBe(true); // the split
    expect(await runDurableObjectAlarm(stub)).toBe(true); // chunk 0
    await runInDurableObject(stub, (_instance, state) => state.storage.deleteAlarm());
    expect(await runDurableObjectAlarm(stub)).toBe(false);
    // Not stalled yet: the cron leaves it.
    await resumeStalledImports(env, new Date(nowMs() + 10_000));
    expect(await runDurableObjectAlarm(stub)).toBe(false);
    // 30 s without progress: poked, and its alarms run it to the end.
    expect(await resumeStalledImports(env, new Date(nowMs() + 31_000))).toBeGreaterThanOrEqual(1);
    expect(await runAlarms(stub)).toBe(2); // chunk 1, chunk 2
    expect(await importOf(id)).toMatchObject({ status: "completed", total: 220, created: 220 });
    expect(await written(ref)).toEqual({ n: 220, distinctRefs: 220 });
  });
});

describe("an import on the real clock", () => {
  it("reaches its end by its runner's alarms alone, through a step the runtime retries after it threw", async () => {
    const ref = unique("RT");
    // The clock ahead while the import is committed and split, so nothing runs until the chunk is gone.
    const restore = clockAhead(HOUR);
    let id: string;
    let chunk0: string;
    try {
      id = await commit(ref, 150);
      expect(await runDurableObjectAlarm(runner(id))).toBe(true); // the split
      chunk0 = await (await env.UPLOADS.get(chunkKey(id, 0)))!.text();
      await env.UPLOADS.delete(chunkKey(id, 0));
    } finally {
      restore();
    }
    const stub = runner(id);
    // Its alarm for now (real time): it fires, the step throws, and the runtime schedules a retry.
    await stub.run(id);
    const until = Date.now() + 10_000;
    while (!(await runnerState(stub)).storage.failures) {
      if (Date.now() > until) throw new Error("the runner's alarm never ran");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await env.UPLOADS.put(chunkKey(id, 0), chunk0);
    const done = await waitForImport(id, 30_000);
    expect(done).toMatchObject({ status: "completed", total: 150, created: 150, failed: 0 });
    expect(await written(ref)).toEqual({ n: 150, distinctRefs: 150 });
  });
});
