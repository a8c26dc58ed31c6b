/**
 * From the outbox to deliveries: which subscriptions an event reaches, once each however often it is
 * handled, and what its body carries (bounded, nothing secret).
 */
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { DomainEvent, EntityKind } from "../../src/events/outbox";
import { createLogger } from "../../src/pkg/logger";
import { fanOutEvent } from "../../src/subscriptions/deliveries";
import { MAX_PAYLOAD_BYTES } from "../../src/subscriptions/payload";
import { createConfig } from "../dataprocessing/support";
import { call } from "../support/http";
import { deliveryRows, eventually, received, receiver, subscribe } from "./support";

const log = createLogger("error");

function event(entityKind: EntityKind, action: DomainEvent["action"], payload: unknown, entityId = crypto.randomUUID()): DomainEvent {
  return {
    id: crypto.randomUUID(),
    entityKind,
    entityId,
    action,
    occurredAt: new Date().toISOString(),
    actorId: "someone",
    requestId: "r-1",
    payload,
  };
}

async function storedBody(subscriptionId: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT payload FROM webhook_deliveries WHERE subscription_id = ?1 ORDER BY created_at")
    .bind(subscriptionId)
    .all<{ payload: string }>();
  return results.map((r) => r.payload);
}

describe("fan-out", () => {
  it("makes one delivery per subscription for an event handled twice, and sends it once", async () => {
    const a = receiver();
    const b = receiver();
    // Alarms: the events the monitors' controllers write (issue 25); nothing else in this file makes one.
    const subA = await subscribe({ url: a.url, filters: [{ entityKind: "alarm", action: "entered" }] });
    const subB = await subscribe({ url: b.url, filters: [{ entityKind: "alarm" }] });
    const entered = event("alarm", "entered", { monitorId: "m", controller: "Vibration high" });
    await fanOutEvent(entered, env, log);
    await fanOutEvent(entered, env, log);
    expect(await deliveryRows(subA.id)).toHaveLength(1);
    expect(await deliveryRows(subB.id)).toHaveLength(1);
    const hooks = await eventually(async () => {
      const got = [...(await received(a.path)), ...(await received(b.path))];
      expect(got).toHaveLength(2);
      return got;
    });
    for (const hook of hooks) expect(hook.headers["webhook-id"]).toBe(entered.id);
    // Still one each a moment later: no second message was sent.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await received(a.path)).toHaveLength(1);
    expect(await received(b.path)).toHaveLength(1);

    // `left` reaches only the subscription that wants any alarm action.
    await fanOutEvent(event("alarm", "left", {}), env, log);
    expect(await deliveryRows(subA.id)).toHaveLength(1);
    expect(await deliveryRows(subB.id)).toHaveLength(2);
  });

  it("a redelivered outbox message makes no second delivery (the consumer and the unique key)", async () => {
    const target = receiver();
    const sub = await subscribe({ url: target.url, filters: [{ entityKind: "alarm", action: "left" }] });
    const left = event("alarm", "left", { value: 1 });
    const { createExecutionContext, createMessageBatch, getQueueResult } = await import("cloudflare:test");
    const worker = (await import("../../src/index")).default;
    for (let delivery = 0; delivery < 2; delivery++) {
      const batch = createMessageBatch<DomainEvent>("integrity-edge-events", [
        { id: `m-${delivery}`, timestamp: new Date(), attempts: delivery + 1, body: left },
      ]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual([`m-${delivery}`]);
    }
    // Even when the consumer forgot it handled the event (its handlers run again), the key holds.
    await env.DB.prepare("DELETE FROM processed_events WHERE event_id = ?1").bind(left.id).run();
    const batch = createMessageBatch<DomainEvent>("integrity-edge-events", [
      { id: "m-again", timestamp: new Date(), attempts: 3, body: left },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    await getQueueResult(batch, ctx);
    expect(await deliveryRows(sub.id)).toHaveLength(1);
    await eventually(async () => expect(await received(target.path)).toHaveLength(1));
  });

  it("matches on the entity's status when a filter names statuses (a job that failed, a file processed)", async () => {
    const target = receiver();
    const sub = await subscribe({
      url: target.url,
      filters: [
        { entityKind: "job", action: "updated", statuses: ["Failed"] },
        { entityKind: "file", statuses: ["processed"] },
      ],
    });
    await fanOutEvent(event("job", "updated", { status: "Succeeded" }), env, log);
    await fanOutEvent(event("job", "created", { status: "Failed" }), env, log);
    await fanOutEvent(event("file", "updated", { status: "uploaded" }), env, log);
    expect(await deliveryRows(sub.id)).toHaveLength(0);
    await fanOutEvent(event("job", "updated", { status: "Failed" }), env, log);
    await fanOutEvent(event("file", "updated", { status: "processed" }), env, log);
    const rows = await env.DB.prepare("SELECT event_type FROM webhook_deliveries WHERE subscription_id = ?1 ORDER BY event_type")
      .bind(sub.id)
      .all<{ event_type: string }>();
    expect(rows.results.map((r) => r.event_type)).toEqual(["file.updated", "job.updated"]);
  });

  it("cuts a body over 64 KiB to a reference with the entity id and a link", async () => {
    const target = receiver();
    const sub = await subscribe({ url: target.url, filters: [{ entityKind: "deviation", action: "updated" }] });
    const big = event("deviation", "updated", { description: "x".repeat(100 * 1024) });
    await fanOutEvent(big, env, log);
    const [body] = await storedBody(sub.id);
    expect(new TextEncoder().encode(body).byteLength).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    const parsed = JSON.parse(body!);
    expect(parsed).toMatchObject({
      type: "deviation.updated",
      data: { eventId: big.id, entityId: big.entityId, truncated: true, link: `/Deviations/${big.entityId}` },
    });
    expect(parsed.data.entity).toBeUndefined();
    const listed = await call(`/Subscriptions/${sub.id}/Deliveries`);
    expect(listed.body[0].truncated).toBe(true);
    // Just under the bound: sent whole.
    await fanOutEvent(event("deviation", "updated", { description: "y".repeat(60 * 1024) }), env, log);
    const [, whole] = await storedBody(sub.id);
    expect(JSON.parse(whole!).data.entity.description).toHaveLength(60 * 1024);
  });

  it("never puts a secret, token or run option in a body", async () => {
    const target = receiver();
    const sub = await subscribe({ url: target.url, filters: [{ entityKind: "jobConfiguration" }] });
    const jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
    await fanOutEvent(
      event("jobConfiguration", "updated", {
        name: "nightly",
        runOptions: { THRESHOLD: "thr-0.8731", API_KEY: "sk-live-123" },
        nested: {
          clientSecret: "cs-456",
          list: [{ statusToken: "tok-789" }, { password: "pw-000" }],
          note: jwt,
          hook: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0",
        },
      }),
      env,
      log,
    );
    const [body] = await storedBody(sub.id);
    for (const secret of ["sk-live-123", "cs-456", "tok-789", "pw-000", jwt, "whsec_c2Vj", "thr-0.8731"])
      expect(body).not.toContain(secret);
    expect(JSON.parse(body!).data.entity).toMatchObject({
      name: "nightly",
      runOptions: "[redacted]",
      nested: { clientSecret: "[redacted]", list: [{ statusToken: "[redacted]" }, { password: "[redacted]" }], note: "[redacted]" },
    });

    // A real job configuration with run options, end to end: they never reach the receiver.
    const config = await createConfig();
    const hooks = await eventually(async () => {
      const got = await received(target.path);
      expect(got.some((h) => h.body.includes(config.id))).toBe(true);
      return got;
    });
    for (const hook of hooks) {
      expect(hook.body).not.toContain("hunter2-do-not-leak");
      expect(Object.values(hook.headers).join(" ")).not.toContain("hunter2");
      expect(new Webhook(sub.secret).verify(hook.body, hook.headers)).toBeTruthy();
    }
  });

  it("lists a subscription's deliveries on the query engine", async () => {
    const target = receiver();
    const sub = await subscribe({ url: target.url, filters: [{ entityKind: "category" }] });
    for (const action of ["created", "updated", "deleted"] as const)
      await fanOutEvent(event("category", action, { name: "Corrosion" }), env, log);
    const all = await call(`/Subscriptions/${sub.id}/Deliveries?includeTotal=true`);
    expect(all.status).toBe(200);
    expect(all.headers.get("x-total-count")).toBe("3");
    const deleted = await call(`/Subscriptions/${sub.id}/Deliveries?eventTypes=category.deleted`);
    expect(deleted.body.map((d: { eventType: string }) => d.eventType)).toEqual(["category.deleted"]);
    const ordered = await call(`/Subscriptions/${sub.id}/Deliveries?order=eventType asc&take=2`);
    expect(ordered.body.map((d: { eventType: string }) => d.eventType)).toEqual(["category.created", "category.deleted"]);
    const single = await call(`/Subscriptions/${sub.id}/Deliveries/${deleted.body[0].id}`);
    expect(single.body.payload).toMatchObject({ type: "category.deleted" });
    expect((await call(`/Subscriptions/${sub.id}/Deliveries?statuses=lost`)).status).toBe(400);
    expect((await call(`/Subscriptions/${crypto.randomUUID()}/Deliveries`)).status).toBe(404);
    expect((await call(`/Subscriptions/${sub.id}/Deliveries`, { user: { permissions: ["assets_read"] } })).status).toBe(403);
  });
});
