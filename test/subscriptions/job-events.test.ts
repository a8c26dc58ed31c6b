/**
 * A data processing job that ends writes its `job.updated` event with its status (issue 25: a
 * subscriber hears "a data processing job failed"), and so does every later job of a chain it fails.
 */
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { scriptGroup } from "../support/fake-host";
import { call } from "../support/http";
import { createConfig, owner, step } from "../dataprocessing/support";
import { eventually, received, receiver, subscribe } from "./support";

const group = (jobId: string) => `containergroup-${jobId}`;

async function jobEvents(jobId: string) {
  const { results } = await env.DB.prepare(
    "SELECT action, payload, actor_id FROM outbox WHERE entity_kind = 'job' AND entity_id = ?1 ORDER BY seq",
  )
    .bind(jobId)
    .all<{ action: string; payload: string; actor_id: string | null }>();
  return results.map((r): Record<string, unknown> => ({
    action: r.action,
    actorId: r.actor_id,
    ...(JSON.parse(r.payload) as Record<string, unknown>),
  }));
}

describe("job events", () => {
  it(
    "a chain whose second job fails: each job's status changes are events, and a subscriber to failed jobs hears " + "both failures",
    async () => {
      const target = receiver();
      const sub = await subscribe({ url: target.url, filters: [{ entityKind: "job", action: "updated", statuses: ["Failed"] }] });
      const [a, b, c] = [await createConfig(), await createConfig(), await createConfig()];
      const res = await call("/Jobs/ChainExecution", { method: "POST", body: { jobConfigIds: [a.id, b.id, c.id] }, user: owner });
      expect(res.status, res.text).toBe(201);
      const [first, second, third] = res.body.jobIds as string[];
      await step(res.body.chainId);
      await scriptGroup(group(first!), { phase: "succeeded", exitCode: 0 });
      await step(res.body.chainId);
      await step(res.body.chainId);
      await scriptGroup(group(second!), { phase: "failed", exitCode: 2, error: "bad input" });
      await step(res.body.chainId);

      const firstEvents = await jobEvents(first!);
      expect(firstEvents.map((e) => [e.action, e.status])).toEqual([
        ["created", "Started"],
        ["updated", "InProgress"],
        ["updated", "Success"],
      ]);
      expect(firstEvents.at(-1)).toMatchObject({
        id: first,
        chainId: res.body.chainId,
        configurationId: a.id,
        endedAt: expect.any(String),
      });
      expect((await jobEvents(second!)).at(-1)).toMatchObject({ status: "Failed", errorMessage: expect.stringContaining("bad input") });
      const thirdEvents = await jobEvents(third!);
      expect(thirdEvents.map((e) => [e.action, e.status])).toEqual([
        ["created", "Started"],
        ["updated", "Failed"],
      ]);
      expect(thirdEvents[1]!.errorMessage).toContain(second!);
      for (const event of [...firstEvents, ...thirdEvents]) expect(JSON.stringify(event)).not.toContain("hunter2");

      // No request follows the runner's writes: the runner relays its events itself after each step.
      const hooks = await eventually(async () => {
        const got = await received(target.path);
        expect(got).toHaveLength(2);
        return got;
      });
      const failed = hooks.map(
        (h) =>
          new Webhook(sub.secret).verify(h.body, h.headers) as { type: string; data: { entityId: string; entity: { status: string } } },
      );
      expect(failed.map((f) => f.data.entityId).sort()).toEqual([second!, third!].sort());
      for (const f of failed) expect(f).toMatchObject({ type: "job.updated", data: { entity: { status: "Failed" } } });
    },
  );

  it("a cancellation is an event naming who cancelled", async () => {
    const config = await createConfig();
    const run = await call(`/Jobs/Execution/${config.id}`, { method: "POST", user: owner });
    await step(run.body.chainId);
    const cancelled = await call(`/Jobs/${run.body.jobId}/Cancellation`, { method: "POST", user: { id: "canceller-1", name: "Ada" } });
    expect(cancelled.status, cancelled.text).toBeLessThan(300);
    const last = (await jobEvents(run.body.jobId)).at(-1)!;
    expect(last).toMatchObject({ action: "updated", status: "Failed", actorId: "canceller-1", cancelledAt: expect.any(String) });
  });
});
