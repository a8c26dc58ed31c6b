/**
 * How one delivery is tried: backoff, Retry-After, dead-lettering, the queue's dead-letter queue,
 * redelivery, rotation, disabling, redirects. Deliveries here are written straight into D1 and their
 * attempts run by hand through the queue handler (deliverNow), so nothing in the background races them.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/subscriptions/deliveries";
import { BACKOFF_SECONDS, failingDeferSeconds, MAX_ATTEMPTS } from "../../src/subscriptions/sender";
import { call } from "../support/http";
import {
  deliverBatchNow,
  deliverNow,
  deliveryRows,
  eventually,
  insertDelivery,
  received,
  receiver,
  scriptReceiver,
  subscribe,
} from "./support";

/** Output types are never deleted in this file: the background fan-out makes no delivery for these subscriptions. */
const QUIET = [{ entityKind: "outputType", action: "deleted" }];

async function newSubscription(filters: unknown[] = QUIET) {
  const target = receiver();
  const subscription = await subscribe({ url: target.url, filters });
  return { ...target, ...subscription };
}

async function delivery(subscriptionId: string, deliveryId: string) {
  const res = await call(`/Subscriptions/${subscriptionId}/Deliveries/${deliveryId}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe("retries and backoff", () => {
  it("retries a failed attempt after 5 s, then 5 min, 30 min, ... and dead-letters after the last", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    await scriptReceiver(
      sub.path,
      Array.from({ length: MAX_ATTEMPTS }, () => ({ status: 503, body: "down for maintenance" })),
    );
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const result = await deliverNow({ deliveryId: d.id, round: 0 }, attempt);
      const read = await delivery(sub.id, d.id);
      expect(read.attempts).toBe(attempt);
      expect(read.lastResponse).toMatchObject({ statusCode: 503, excerpt: "down for maintenance" });
      if (attempt < MAX_ATTEMPTS) {
        expect(result.retryMessages).toEqual([{ msgId: expect.any(String), delaySeconds: BACKOFF_SECONDS[attempt - 1] }]);
        expect(result.explicitAcks).toEqual([]);
        expect(read.status).toBe("retrying");
        const wait = (Date.parse(read.nextAttemptAt) - Date.parse(read.lastAttemptAt)) / 1000;
        expect(wait).toBe(BACKOFF_SECONDS[attempt - 1]);
      } else {
        expect(result.retryMessages).toEqual([]);
        expect(result.explicitAcks).toHaveLength(1);
        expect(read).toMatchObject({ status: "deadLettered", nextAttemptAt: null });
        expect(read.lastResponse.error).toContain("HTTP 503");
      }
    }
    expect(await received(sub.path)).toHaveLength(MAX_ATTEMPTS);
    expect(BACKOFF_SECONDS).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    // A stale copy of the message does nothing more.
    await deliverNow({ deliveryId: d.id, round: 0 });
    expect(await received(sub.path)).toHaveLength(MAX_ATTEMPTS);
  });

  it("waits longer when the receiver's Retry-After asks for it, and succeeds on a later attempt", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    await scriptReceiver(sub.path, [
      { status: 429, headers: { "retry-after": "120" } },
      { status: 202, body: "accepted" },
    ]);
    const first = await deliverNow({ deliveryId: d.id, round: 0 });
    expect(first.retryMessages[0]?.delaySeconds).toBe(120);
    const second = await deliverNow({ deliveryId: d.id, round: 0 }, 2);
    expect(second.explicitAcks).toHaveLength(1);
    expect(await delivery(sub.id, d.id)).toMatchObject({
      status: "succeeded",
      attempts: 2,
      lastResponse: { statusCode: 202, excerpt: "accepted", error: null },
    });
    const failing = await env.DB.prepare("SELECT failing_since, last_success_at FROM webhook_subscriptions WHERE id = ?1")
      .bind(sub.id)
      .first<{ failing_since: string | null; last_success_at: string }>();
    expect(failing).toMatchObject({ failing_since: null, last_success_at: expect.any(String) });
  });

  it("does not follow redirects: a 3xx is a failure that says so", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    await scriptReceiver(sub.path, [{ status: 307, headers: { location: "https://169.254.169.254/" } }]);
    await deliverNow({ deliveryId: d.id, round: 0 });
    const read = await delivery(sub.id, d.id);
    expect(read).toMatchObject({ status: "retrying", lastResponse: { statusCode: 307 } });
    expect(read.lastResponse.error).toContain("redirects are not followed");
    expect(await received(sub.path)).toHaveLength(1);
  });

  it("marks a message the consumer kept failing on dead-lettered when it reaches the dead-letter queue", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    const batch = createMessageBatch<DeliveryMessage>("integrity-edge-webhooks-dlq", [
      { id: "dlq-1", timestamp: new Date(), attempts: 1, body: { deliveryId: d.id, round: 0 } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["dlq-1"]);
    const read = await delivery(sub.id, d.id);
    expect(read.status).toBe("deadLettered");
    expect(
      read.lastResponse?.error ??
        (await env.DB.prepare("SELECT last_error FROM webhook_deliveries WHERE id = ?1").bind(d.id).first<{ last_error: string }>())!
          .last_error,
    ).toContain("redeliver");
  });

  it("retries a message whose processing failed (the queue's retries, then its dead-letter queue)", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    // A sealed secret the key ring cannot open: the consumer itself fails.
    await env.DB.prepare("UPDATE webhook_subscriptions SET secret_sealed = 'v9.AAAA.AAAA' WHERE id = ?1").bind(sub.id).run();
    const result = await deliverNow({ deliveryId: d.id, round: 0 });
    expect(result.retryMessages).toHaveLength(1);
    expect(result.retryMessages[0]!.delaySeconds).toBeGreaterThanOrEqual(60);
    expect(await received(sub.path)).toHaveLength(0);
  });
});

describe("redelivery", () => {
  it("sends a delivery again with the same body and webhook-id, a new signature, and a fresh schedule", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    await deliverNow({ deliveryId: d.id, round: 0 });
    expect((await delivery(sub.id, d.id)).status).toBe("succeeded");

    const redelivered = await call(`/Subscriptions/${sub.id}/Deliveries/${d.id}/Redelivery`, { method: "POST" });
    expect(redelivered.status, redelivered.text).toBe(202);
    expect(redelivered.body).toMatchObject({ id: d.id, status: "pending", attempts: 1, redeliveredAt: expect.any(String) });
    const rows = await deliveryRows(sub.id);
    expect(rows[0]).toMatchObject({ round: 1, round_attempts: 0, status: "pending" });
    // Round 0's stale copies do nothing; round 1's message is in the queue, whose consumer runs in the background.
    await deliverNow({ deliveryId: d.id, round: 0 });
    const hooks = await eventually(async () => {
      const got = await received(sub.path);
      expect(got).toHaveLength(2);
      return got;
    });
    const [first, second] = hooks;
    expect(second!.body).toBe(first!.body);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.headers["webhook-id"]).toBe(d.eventId);
    expect(new Webhook(sub.secret).verify(second!.body, second!.headers)).toBeTruthy();
    await eventually(async () => expect(await delivery(sub.id, d.id)).toMatchObject({ status: "succeeded", attempts: 2 }));
    // Another copy of round 1's message (the queue delivers at least once) sends nothing more.
    await deliverNow({ deliveryId: d.id, round: 1 });
    expect(await received(sub.path)).toHaveLength(2);

    expect((await call(`/Subscriptions/${sub.id}/Deliveries/${crypto.randomUUID()}/Redelivery`, { method: "POST" })).status).toBe(404);
    const other = await newSubscription();
    expect((await call(`/Subscriptions/${other.id}/Deliveries/${d.id}/Redelivery`, { method: "POST" })).status).toBe(404);
    expect(
      (
        await call(`/Subscriptions/${sub.id}/Deliveries/${d.id}/Redelivery`, {
          method: "POST",
          user: { permissions: ["subscriptions_read"] },
        })
      ).status,
    ).toBe(403);
  });

  it("brings a dead-lettered delivery back, with the backoff schedule from its start", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    await env.DB.prepare("UPDATE webhook_deliveries SET status = 'deadLettered', attempts = 8, round_attempts = 8 WHERE id = ?1")
      .bind(d.id)
      .run();
    await scriptReceiver(
      sub.path,
      Array.from({ length: 8 }, () => ({ status: 500 })),
    );
    const res = await call(`/Subscriptions/${sub.id}/Deliveries/${d.id}/Redelivery`, { method: "POST" });
    expect(res.status).toBe(202);
    // The queue's consumer tries it in the background; the new round starts the schedule again.
    const row = await eventually(async () => {
      const [found] = await deliveryRows(sub.id);
      expect(found).toMatchObject({ status: "retrying", round: 1 });
      return found!;
    });
    const read = await delivery(sub.id, d.id);
    expect(read.attempts).toBe(8 + row.round_attempts);
    const wait = (Date.parse(read.nextAttemptAt) - Date.parse(read.lastAttemptAt)) / 1000;
    expect(wait).toBe(BACKOFF_SECONDS[row.round_attempts - 1]);
  });
});

describe("secret rotation", () => {
  it("signs every attempt after a rotation with the new secret only: the old one no longer verifies", async () => {
    const sub = await newSubscription();
    const before = await insertDelivery(sub.id);
    await deliverNow({ deliveryId: before.id, round: 0 });
    const rotated = await call(`/Subscriptions/${sub.id}/SecretRotation`, { method: "POST" });
    expect(rotated.status).toBe(200);
    const after = await insertDelivery(sub.id);
    await deliverNow({ deliveryId: after.id, round: 0 });
    const [old, fresh] = await received(sub.path);
    expect(new Webhook(sub.secret).verify(old!.body, old!.headers)).toBeTruthy();
    expect(() => new Webhook(sub.secret).verify(fresh!.body, fresh!.headers)).toThrow(/No matching signature/);
    expect(new Webhook(rotated.body.secret).verify(fresh!.body, fresh!.headers)).toBeTruthy();
    // A tampered body fails with the right secret too.
    expect(() => new Webhook(rotated.body.secret).verify(fresh!.body.replace("deviation", "deviatiom"), fresh!.headers)).toThrow();
  });
});

describe("disabling", () => {
  it("disables a subscription whose attempts have only failed for three days, with its reason; enabling clears it", async () => {
    const sub = await newSubscription([{ entityKind: "deviation", action: "created" }]);
    const d = await insertDelivery(sub.id);
    const fourDaysAgo = new Date(Date.now() - 4 * 24 * 3600 * 1000).toISOString();
    await env.DB.prepare("UPDATE webhook_subscriptions SET failing_since = ?1 WHERE id = ?2").bind(fourDaysAgo, sub.id).run();
    await scriptReceiver(sub.path, [{ status: 500, body: "still broken" }]);
    const result = await deliverNow({ deliveryId: d.id, round: 0 });
    expect(result.retryMessages).toEqual([]);
    const read = await call(`/Subscriptions/${sub.id}`);
    expect(read.body.enabled).toBe(false);
    expect(read.body.disabledReason).toContain(`since ${fourDaysAgo}`);
    expect(read.body.disabledReason).toContain("HTTP 500");
    expect(read.headers.get("etag")).not.toBe(sub.etag);
    expect(await delivery(sub.id, d.id)).toMatchObject({ status: "deadLettered" });
    const event = await env.DB.prepare("SELECT payload FROM outbox WHERE entity_id = ?1 AND action = 'updated' ORDER BY seq DESC")
      .bind(sub.id)
      .first<{ payload: string }>();
    expect(JSON.parse(event!.payload)).toMatchObject({ enabled: false });

    // Disabled: new events make no delivery, and redelivery is refused until it is enabled again.
    const deviation = await call("/Deviations", { method: "POST", body: { description: "while disabled" } });
    const outboxEvent = await env.DB.prepare(
      "SELECT id, entity_kind, entity_id, action, payload, occurred_at FROM outbox WHERE entity_id = ?1",
    )
      .bind(deviation.body.id)
      .first<Record<string, string>>();
    const { fanOutEvent } = await import("../../src/subscriptions/deliveries");
    await fanOutEvent(
      {
        id: outboxEvent!.id!,
        entityKind: "deviation",
        entityId: deviation.body.id,
        action: "created",
        occurredAt: outboxEvent!.occurred_at!,
        actorId: null,
        requestId: null,
        payload: {},
      },
      env,
      {
        debug() {},
        info() {},
        warn() {},
        error() {},
        with() {
          return this;
        },
      },
    );
    expect((await deliveryRows(sub.id)).map((r) => r.id)).toEqual([d.id]);
    const refused = await call(`/Subscriptions/${sub.id}/Deliveries/${d.id}/Redelivery`, { method: "POST" });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("disabled");

    const enabled = await call("/Subscriptions", {
      method: "PUT",
      body: { ...read.body, enabled: true },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
    const streak = await env.DB.prepare("SELECT failing_since FROM webhook_subscriptions WHERE id = ?1")
      .bind(sub.id)
      .first<{ failing_since: string | null }>();
    expect(streak!.failing_since).toBeNull();
    expect((await call(`/Subscriptions/${sub.id}/Deliveries/${d.id}/Redelivery`, { method: "POST" })).status).toBe(202);
  });

  it("keeps a subscription that failed for less than three days, or that succeeded since", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000).toISOString();
    await env.DB.prepare("UPDATE webhook_subscriptions SET failing_since = ?1 WHERE id = ?2").bind(twoDaysAgo, sub.id).run();
    await scriptReceiver(sub.path, [{ status: 500 }]);
    await deliverNow({ deliveryId: d.id, round: 0 });
    expect((await call(`/Subscriptions/${sub.id}`)).body.enabled).toBe(true);
    const streak = await env.DB.prepare("SELECT failing_since FROM webhook_subscriptions WHERE id = ?1")
      .bind(sub.id)
      .first<{ failing_since: string }>();
    expect(streak!.failing_since).toBe(twoDaysAgo);
  });

  it("disables at once when the receiver answers 410 Gone", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    await scriptReceiver(sub.path, [{ status: 410 }]);
    const result = await deliverNow({ deliveryId: d.id, round: 0 });
    expect(result.retryMessages).toEqual([]);
    const read = await call(`/Subscriptions/${sub.id}`);
    expect(read.body).toMatchObject({ enabled: false, disabledReason: expect.stringContaining("410 Gone") });
  });

  it("a disabled subscription's pending deliveries are dead-lettered, not sent", async () => {
    const sub = await newSubscription();
    const d = await insertDelivery(sub.id);
    await call("/Subscriptions", { method: "PUT", body: { ...sub.body, secret: undefined, enabled: false } });
    await deliverNow({ deliveryId: d.id, round: 0 });
    expect(await received(sub.path)).toHaveLength(0);
    expect(await delivery(sub.id, d.id)).toMatchObject({ status: "deadLettered" });
  });
});

describe("nothing secret in a delivery log", () => {
  it("masks a secret the receiver echoes, and logs neither the URL, the body nor the signature", async () => {
    const target = receiver();
    const secretPath = `${target.path}/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX`;
    const sub = await subscribe({ url: `https://hooks.example.com${secretPath}`, filters: QUIET });
    const d = await insertDelivery(sub.id, {
      body: JSON.stringify({ type: "deviation.created", data: { entity: { description: "confidential finding 7731" } } }),
    });
    await scriptReceiver(secretPath, [{ status: 500, body: `bad signature for ${sub.secret}` }]);
    const lines: string[] = [];
    const spies = (["log", "warn", "error", "info", "debug"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" "))),
    );
    try {
      await deliverNow({ deliveryId: d.id, round: 0 }, 1, "debug");
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const read = await delivery(sub.id, d.id);
    expect(read.lastResponse.excerpt).toContain("whsec_[redacted]");
    expect(read.lastResponse.excerpt).not.toContain(sub.secret);
    const [hook] = await received(secretPath);
    const all = lines.join("\n");
    expect(lines.length).toBeGreaterThan(0);
    expect(all).toContain("hooks.example.com");
    for (const secret of [
      sub.secret,
      sub.secret.slice(6),
      "XXXXXXXXXXXXXXXXXXXXXXXX",
      "confidential finding 7731",
      hook!.headers["webhook-signature"]!,
    ])
      expect(all).not.toContain(secret);
  });
});

describe("a failing receiver", () => {
  it("gets one attempt at a time: its other deliveries wait without an attempt, another subscriber's go at once", async () => {
    const down = await newSubscription();
    const healthy = await newSubscription();
    // The receiver fails twice (the first delivery, then the one attempt of the batch below), then answers.
    await scriptReceiver(down.path, [{ status: 503 }, { status: 503 }]);
    const first = await insertDelivery(down.id);
    await deliverNow({ deliveryId: first.id, round: 0 });
    // Three more of its deliveries and one of another subscriber's, handed to the consumer at once.
    const waiting = [await insertDelivery(down.id), await insertDelivery(down.id), await insertDelivery(down.id)];
    const other = await insertDelivery(healthy.id);
    const result = await deliverBatchNow([...waiting, other].map((d) => ({ deliveryId: d.id, round: 0 })));
    // One of the three is tried (and fails again); the other two are put off, not tried, by at least a minute.
    expect(await received(down.path)).toHaveLength(2);
    const rows = (await deliveryRows(down.id)).filter((r) => waiting.some((w) => w.id === r.id));
    expect(rows.map((r) => r.attempts).sort()).toEqual([0, 0, 1]);
    const putOff = rows.filter((r) => r.attempts === 0);
    for (const row of putOff) {
      expect(row).toMatchObject({ status: "pending", lease_until: null });
      expect(Date.parse(row.next_attempt_at!) - Date.now()).toBeGreaterThan(55_000);
    }
    expect(result.retryMessages).toHaveLength(3);
    expect(result.retryMessages.filter((r: { delaySeconds?: number }) => (r.delaySeconds ?? 0) >= 60)).toHaveLength(2);
    // The other subscriber's delivery went at once.
    expect(await received(healthy.path)).toHaveLength(1);
    expect(await delivery(healthy.id, other.id)).toMatchObject({ status: "succeeded", attempts: 1 });
    // When the receiver answers again, a put-off delivery is sent on its turn and the subscription is no longer failing.
    const again = await deliverNow({ deliveryId: putOff[0]!.id, round: 0 });
    expect(again.explicitAcks).toHaveLength(1);
    expect(await delivery(down.id, putOff[0]!.id)).toMatchObject({ status: "succeeded", attempts: 1 });
    const last = await deliverBatchNow([{ deliveryId: putOff[1]!.id, round: 0 }]);
    expect(last.explicitAcks).toHaveLength(1);
    expect(await received(down.path)).toHaveLength(4);
  });

  it("waits half as long as the receiver has been failing, between a minute and an hour", () => {
    expect(failingDeferSeconds(0, 0)).toBe(60);
    expect(failingDeferSeconds(30 * 60_000, 0)).toBe(900);
    expect(failingDeferSeconds(3 * 24 * 3600_000, 0)).toBe(3600);
    expect(failingDeferSeconds(30 * 60_000, 1)).toBe(990);
  });
});
