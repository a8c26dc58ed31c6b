import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IdempotencyStore } from "../../durable-objects/idempotency-store";

function store(name = crypto.randomUUID()): DurableObjectStub<IdempotencyStore> {
  return env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(name)) as unknown as DurableObjectStub<IdempotencyStore>;
}

const response = { status: 201, headers: { "content-type": "application/json" }, body: '{"ok":true}' };

describe("IdempotencyStore", () => {
  it("tells a retry that arrives while the first request runs that it is in progress", async () => {
    const s = store();
    expect(await s.begin("k", "f1", 60_000)).toEqual({ outcome: "proceed" });
    expect(await s.begin("k", "f1", 60_000)).toEqual({ outcome: "inProgress" });
    expect(await s.begin("k", "f2", 60_000)).toEqual({ outcome: "mismatch" });
  });

  it("replays a completed response and lets a released key run again", async () => {
    const s = store();
    await s.begin("done", "f", 60_000);
    await s.complete("done", "f", response);
    expect(await s.begin("done", "f", 60_000)).toEqual({ outcome: "replay", response });

    await s.begin("failed", "f", 60_000);
    await s.release("failed", "f");
    expect(await s.begin("failed", "f", 60_000)).toEqual({ outcome: "proceed" });
  });

  it("hands a key over when the first request's lease expired (it crashed)", async () => {
    const s = store();
    await s.begin("crash", "f", 1);
    await new Promise((r) => setTimeout(r, 5));
    expect(await s.begin("crash", "f", 60_000)).toEqual({ outcome: "proceed" });
  });

  it("sweeps expired entries with its alarm", async () => {
    const s = store();
    await s.begin("old", "f", 1);
    await s.begin("fresh", "f", 60_000);
    await new Promise((r) => setTimeout(r, 5));
    expect(await runDurableObjectAlarm(s)).toBe(true);
    const keys = await runInDurableObject(s, async (_instance, state) => [...(await state.storage.list()).keys()]);
    expect(keys).toEqual(["fresh"]);
    // The next sweep is scheduled for the remaining entry.
    const alarm = await runInDurableObject(s, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
  });
});
