/**
 * Issue 32, "User code never holds the thread": hostile custom index libraries posted over HTTP. Their
 * logging is capped inside the sandbox, their outcome and log say what happened, and other requests
 * are answered while a library runs.
 */
import { describe, expect, it } from "vitest";
import logFlood from "../fixtures/hostile-libraries/log-flood.js?raw";
import busyLoop from "../fixtures/hostile-libraries/busy-loop.js?raw";
import yieldingLoop from "../fixtures/hostile-libraries/yielding-loop.js?raw";
import { MAX_LOG_BYTES, MAX_LOG_LINES } from "../../src/search/library";
import { librarySlicesRun } from "../../src/search/library-round";
import { call, type TestUser } from "../support/http";
import { awaitSync, libraryForm, search } from "./support";

const owner: Partial<TestUser> = {
  id: "hostile-1",
  name: "Hostile Owner",
  permissions: ["index_read_owned", "index_write", "work_read", "properties_read"],
};

async function postLibrary(source: string) {
  const since = new Date(Date.now() - 1).toISOString();
  const res = await call("/Indices", {
    method: "POST",
    rawBody: libraryForm({ Name: `hostile-${crypto.randomUUID().slice(0, 8)}`, DisplayName: "Hostile" }, source),
    user: owner,
    headers: { "api-version": "1.1" },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as string, since };
}

async function libraryLog(id: string): Promise<{ level: string; message: string }[]> {
  const res = await call(`/Indices/${id}/Logs?take=1000`, { user: owner });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe("hostile index libraries", () => {
  it("a library logging 100,000 lines of 1 KB keeps at most the caps, ends its log with one marker and succeeds", async () => {
    const { id, since } = await postLibrary(logFlood);
    const synced = await awaitSync(id, since, owner, 60_000);
    expect(synced.status, JSON.stringify(synced)).toBe("Ready");
    expect(synced.lastSynchronization.message).toMatch(/1 documents from the library\. Its log was truncated at 500 lines or 256 KiB\./);
    const lines = await libraryLog(id);
    const library = lines.filter((l) => /^\d+ x{1024}$/.test(l.message));
    const markers = lines.filter((l) => /^log truncated: /.test(l.message));
    expect(markers).toHaveLength(1);
    expect(markers[0]!.level).toBe("warn");
    expect(library.length).toBeGreaterThan(200);
    expect(library.length).toBeLessThanOrEqual(MAX_LOG_LINES);
    expect(library.reduce((n, l) => n + new TextEncoder().encode(l.message).length, 0)).toBeLessThanOrEqual(MAX_LOG_BYTES);
    // The guest stopped sending at the cap: the lines kept are the first ones, in order.
    expect(library.map((l) => Number(l.message.split(" ")[0])).sort((a, b) => a - b)).toEqual(library.map((_, i) => i));
    expect((await search(id, { text: "still here" }, owner)).body.total).toBe(1);
  });

  it("cuts a long line inside the sandbox and stops at 500 lines", async () => {
    const source = `import { IndexBuilder } from "integrity-edge/search";
export default class L extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() {
    this.logger.warn("y".repeat(100000));
    for (let i = 0; i < 2000; i++) { this.logger.debug("line", i); if (i % 100 === 0) await null; }
    yield { id: "a", title: "done" };
  }
}`;
    const { id, since } = await postLibrary(source);
    const synced = await awaitSync(id, since, owner, 60_000);
    expect(synced.status, JSON.stringify(synced)).toBe("Ready");
    const lines = await libraryLog(id);
    const long = lines.find((l) => l.message.startsWith("yyy"));
    expect(long).toEqual({ ...long, level: "warn", message: `${"y".repeat(1999)}\u2026` });
    const counted = lines.filter((l) => /^line \d+$/.test(l.message));
    expect(counted).toHaveLength(MAX_LOG_LINES - 1);
    expect(lines.filter((l) => /^log truncated: /.test(l.message))).toHaveLength(1);
  });

  it("a library that never awaits is stopped after one stretch, and its log says why", async () => {
    const { id, since } = await postLibrary(busyLoop);
    const synced = await awaitSync(id, since, owner, 60_000);
    expect(synced.status).toBe("Failed");
    expect(synced.lastSynchronization.message).toMatch(/worked for more than 50 ms without awaiting or yielding/);
    expect((await libraryLog(id))[0]!.message).toMatch(/failed: .*without awaiting or yielding/);
  });

  it("answers other requests while a library runs: each completes before the run ends", async () => {
    const before = librarySlicesRun();
    const { id, since } = await postLibrary(yieldingLoop);
    // A request counts when the run had begun (a slice ended) before it was sent, and the run was
    // still going (another slice ran since, and the index still synchronises) after its answer came.
    let answeredDuringRun = 0;
    for (let i = 0; i < 5000 && answeredDuringRun < 5; i++) {
      const sentAt = librarySlicesRun();
      const health = await call("/health");
      const categories = await call("/Categories", { user: owner });
      expect(health.status).toBe(200);
      expect(categories.status).toBe(200);
      const index = await call(`/Indices/${id}`, { user: owner });
      if (sentAt > before && librarySlicesRun() > sentAt && index.body.status === "Synchronizing") answeredDuringRun += 1;
    }
    expect(answeredDuringRun).toBe(5);
    const synced = await awaitSync(id, since, owner, 120_000);
    expect(synced.status).toBe("Failed");
    expect(synced.lastSynchronization.message).toMatch(/exceeded its time limit of 20000 ms/);
  }, 180_000);
});
