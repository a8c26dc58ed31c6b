import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IdempotencyStore } from "../../durable-objects/idempotency-store";
import { withClockAhead } from "../support/clock";

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
    await s.begin("crash", "f", 60_000);
    // Its lease has passed: the clock every Durable Object reads, moved on a minute (no sleep).
    expect(await withClockAhead(61_000, async () => await s.begin("crash", "f", 60_000))).toEqual({ outcome: "proceed" });
  });

  it("sweeps expired entries with its alarm", async () => {
    const s = store();
    await s.begin("old", "f", 60_000);
    await s.begin("fresh", "f", 600_000);
    expect(await withClockAhead(61_000, () => runDurableObjectAlarm(s))).toBe(true);
    const keys = await runInDurableObject(s, async (_instance, state) => [...(await state.storage.list()).keys()]);
    expect(keys).toEqual(["fresh"]);
    // The next sweep is scheduled for the remaining entry.
    const alarm = await runInDurableObject(s, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
  });

  describe("claims of requests whose bodies stream (src/pkg/body-fingerprint.ts)", () => {
    it("reserves the key before the body is read, and tells a retry to check its body", async () => {
      const s = store();
      const claimed = await s.claim("k", "head", 60_000);
      expect(claimed.outcome).toBe("proceed");
      expect(await s.claim("k", "head", 60_000)).toEqual({ outcome: "check" });
      expect(await s.claim("k", "other route", 60_000)).toEqual({ outcome: "mismatch" });
      // While the first body is still arriving, any body is only "in progress"...
      expect(await s.resolve("k", "f2")).toEqual({ outcome: "inProgress" });
      // ... and a request whose body was small enough to hash first too.
      expect(await s.begin("k", "f2", 60_000, "head")).toEqual({ outcome: "inProgress" });
      expect(await s.begin("k", "f2", 60_000, "other route")).toEqual({ outcome: "mismatch" });
      // Once its fingerprint is recorded, another body is a mismatch and the same one in progress.
      await s.fingerprinted("k", claimed.outcome === "proceed" ? claimed.token : "", "f1");
      expect(await s.resolve("k", "f2")).toEqual({ outcome: "mismatch" });
      expect(await s.resolve("k", "f1")).toEqual({ outcome: "inProgress" });
      await s.complete("k", "f1", response, "head");
      expect(await s.resolve("k", "f1")).toEqual({ outcome: "replay", response });
      expect(await s.resolve("k", "f2")).toEqual({ outcome: "mismatch" });
      expect(await s.begin("k", "f1", 60_000, "head")).toEqual({ outcome: "replay", response });
    });

    it("only the claim's own token extends, records or releases it; an expired claim is taken over", async () => {
      const s = store();
      const first = await s.claim("k", "head", 60_000);
      const token = first.outcome === "proceed" ? first.token : "";
      await s.extend("k", "someone else", 60_000);
      const second = await withClockAhead(61_000, async () => await s.claim("k", "head", 60_000));
      expect(second.outcome).toBe("proceed");
      await s.releaseClaim("k", token);
      expect(await s.claim("k", "head", 60_000)).toEqual({ outcome: "check" });
      await s.releaseClaim("k", second.outcome === "proceed" ? second.token : "");
      expect((await s.claim("k", "head", 60_000)).outcome).toBe("proceed");
    });

    it("keeps a claim alive while it is extended", async () => {
      const s = store();
      const claimed = await s.claim("k", "head", 60_000);
      await s.extend("k", claimed.outcome === "proceed" ? claimed.token : "", 600_000);
      expect(await withClockAhead(61_000, async () => await s.claim("k", "head", 60_000))).toEqual({ outcome: "check" });
    });
  });
});
