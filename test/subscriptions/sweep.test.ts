/**
 * The minute sweep (src/subscriptions/deliveries.ts sweepDeliveries, run by the cron) and what an
 * attempt records when no answer comes.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { send } from "../../src/subscriptions/sender";
import { DELIVERY_RETENTION_MS, STUCK_AFTER_MS } from "../../src/subscriptions/deliveries";
import { deliveryRows, eventually, insertDelivery, received, receiver, subscribe } from "./support";

async function fireCron(at = Date.now()) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: at }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("the minute sweep", () => {
  it("hands over again a delivery whose message was lost, and one a fan-out never sent; prunes old ones", async () => {
    const target = receiver();
    const sub = await subscribe({ url: target.url, filters: [{ entityKind: "outputType", action: "deleted" }] });
    const lost = await insertDelivery(sub.id);
    const longAgo = new Date(Date.now() - STUCK_AFTER_MS - 60_000).toISOString();
    await env.DB.prepare(
      "UPDATE webhook_deliveries SET status = 'retrying', attempts = 1, round_attempts = 1, next_attempt_at = ?1 WHERE id = ?2",
    )
      .bind(longAgo, lost.id)
      .run();
    const unsent = await insertDelivery(sub.id);
    await env.DB.prepare("UPDATE webhook_deliveries SET enqueued_at = NULL, created_at = ?1 WHERE id = ?2")
      .bind(new Date(Date.now() - 120_000).toISOString(), unsent.id)
      .run();
    const fresh = await insertDelivery(sub.id);
    const old = await insertDelivery(sub.id);
    await env.DB.prepare("UPDATE webhook_deliveries SET status = 'succeeded', created_at = ?1 WHERE id = ?2")
      .bind(new Date(Date.now() - DELIVERY_RETENTION_MS - 60_000).toISOString(), old.id)
      .run();

    await fireCron();
    const rows = await deliveryRows(sub.id);
    expect(rows.map((r) => r.id).sort()).toEqual([lost.id, unsent.id, fresh.id].sort());
    // The two handed over are sent by the queue's consumer; the fresh one (its message is not lost) is left alone.
    const hooks = await eventually(async () => {
      const got = await received(target.path);
      expect(got, JSON.stringify(await deliveryRows(sub.id))).toHaveLength(2);
      return got;
    });
    expect(hooks.map((h) => h.headers["webhook-id"]).sort()).toEqual([lost.eventId, unsent.eventId].sort());
    expect((await deliveryRows(sub.id)).find((r) => r.id === fresh.id)).toMatchObject({ status: "pending", attempts: 0 });
  });
});

describe("an attempt with no answer", () => {
  it("records a timeout or a network failure without the URL", async () => {
    const request = new Request("https://hooks.example.com/T0/B0/secret-path", { method: "POST", body: "{}" });
    const timeout = await send(
      { fetch: () => Promise.reject(new DOMException("The operation timed out.", "TimeoutError")) },
      request.clone(),
    );
    expect(timeout).toMatchObject({ statusCode: null, excerpt: null, error: "No answer within 15 seconds." });
    const refused = await send(
      { fetch: () => Promise.reject(new TypeError("connect ECONNREFUSED for https://hooks.example.com/T0/B0/secret-path")) },
      request.clone(),
    );
    expect(refused.error).toContain("The request failed");
    expect(refused.error).not.toContain("secret-path");
  });
});
