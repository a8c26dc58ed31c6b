/**
 * The request log line: writes, failures and slow answers at info, with the request id and the user;
 * a quick successful read at debug only (docs/decisions.md, "Request ids"), so at the deployed level
 * the hot path writes no line.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp, SLOW_REQUEST_MS } from "../../src/app";
import type { Clock } from "../../src/platform/services";
import { tokenFor } from "../support/http";

type Line = Record<string, unknown>;

/** Runs one request through a fresh app at `level`, returning the answer and every JSON log line. */
async function logged(level: string, path: string, init: RequestInit = {}, clock?: Clock): Promise<{ status: number; lines: Line[] }> {
  const lines: Line[] = [];
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(JSON.parse(args.map(String).join(" ")) as Line));
  }
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${await tokenFor({ id: "log-reader", name: "Log Reader" })}`);
  headers.set("x-request-id", "req-log-test-0001");
  const ctx = createExecutionContext();
  const res = await createApp(clock ? { clock } : {}).fetch(
    new Request(`https://api.test${path}`, { ...init, headers }),
    { ...env, LOG_LEVEL: level },
    ctx,
  );
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return { status: res.status, lines: lines.filter((line) => line.msg === "request") };
}

afterEach(() => vi.restoreAllMocks());

describe("the request log line", () => {
  it("is not written at info for a quick successful read", async () => {
    const { status, lines } = await logged("info", "/Categories");
    expect(status).toBe(200);
    expect(lines).toEqual([]);
  });

  it("is written at debug for the same read, with the request id and the user", async () => {
    const { status, lines } = await logged("debug", "/Categories");
    expect(status).toBe(200);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "debug",
        method: "GET",
        path: "/Categories",
        status: 200,
        requestId: "req-log-test-0001",
        userId: "log-reader",
      }),
    ]);
  });

  it("is written at info for a write", async () => {
    const { status, lines } = await logged("info", "/Categories", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: `Logged ${crypto.randomUUID()}` }),
    });
    expect(status).toBe(201);
    expect(lines).toEqual([
      expect.objectContaining({ level: "info", method: "POST", status: 201, requestId: "req-log-test-0001", userId: "log-reader" }),
    ]);
  });

  it("is written at info for a failed read", async () => {
    const { status, lines } = await logged("info", `/Categories/${crypto.randomUUID()}`);
    expect(status).toBe(404);
    expect(lines).toEqual([expect.objectContaining({ level: "info", method: "GET", status: 404 })]);
  });

  it("is written at info for a slow read", async () => {
    // A clock that moves on by the threshold at every reading: the answer took at least that long.
    let now = Date.parse("2026-11-26T10:00:00.000Z");
    const clock: Clock = { now: () => new Date((now += SLOW_REQUEST_MS)) };
    const { status, lines } = await logged("info", "/Categories", {}, clock);
    expect(status).toBe(200);
    expect(lines).toEqual([expect.objectContaining({ level: "info", method: "GET", status: 200 })]);
    expect(lines[0]!.ms).toBeGreaterThanOrEqual(SLOW_REQUEST_MS);
  });
});
