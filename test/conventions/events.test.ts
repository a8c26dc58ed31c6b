import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../src/events/outbox";
import worker from "../../src/index";
import { call } from "../support/http";

async function outboxRows(entityId: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, action, payload, actor_id, request_id, dispatched_at FROM outbox WHERE entity_id = ?1 ORDER BY seq",
  )
    .bind(entityId)
    .all<{ id: string; action: string; payload: string; actor_id: string; request_id: string; dispatched_at: string | null }>();
  return results;
}

describe("outbox", () => {
  it("records an event for each create, update and delete, with actor and request id", async () => {
    const created = await call("/Categories", {
      method: "POST",
      body: { name: `Events ${crypto.randomUUID()}` },
      headers: { "x-request-id": "req-events-1" },
      user: { id: "actor-1" },
    });
    const id = created.body.id as string;
    await call("/Categories", { method: "PUT", body: { id, name: `Events renamed ${id}` } });
    await call(`/Categories/${id}`, { method: "DELETE" });
    const rows = await outboxRows(id);
    expect(rows.map((r) => r.action)).toEqual(["created", "updated", "deleted"]);
    expect(rows[0]).toMatchObject({ actor_id: "actor-1", request_id: "req-events-1" });
    expect(JSON.parse(rows[0]!.payload)).toMatchObject({ id, name: created.body.name });
  });

  it("writes no event when the change is refused", async () => {
    const created = await call("/Categories", { method: "POST", body: { name: `Refused ${crypto.randomUUID()}` } });
    const id = created.body.id as string;
    await call("/Categories", { method: "PUT", body: { id, name: "whatever" }, headers: { "if-match": '"stale"' } });
    expect((await outboxRows(id)).map((r) => r.action)).toEqual(["created"]);
  });

  it("is relayed to the queue by the minute cron, which marks each row dispatched", async () => {
    const created = await call("/Categories", { method: "POST", body: { name: `Relay ${crypto.randomUUID()}` } });
    const id = created.body.id as string;
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), env, ctx);
    await waitOnExecutionContext(ctx);
    const rows = await outboxRows(id);
    expect(rows[0]?.dispatched_at).not.toBeNull();
    const pending = await env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE dispatched_at IS NULL").first<{ n: number }>();
    expect(pending?.n).toBe(0);
  });
});

describe("event consumer", () => {
  const event = (id: string): DomainEvent => ({
    id,
    entityKind: "category",
    entityId: crypto.randomUUID(),
    action: "created",
    occurredAt: new Date().toISOString(),
    actorId: "a",
    requestId: "r",
    payload: {},
  });

  it("acknowledges every event and records it once, also when redelivered", async () => {
    const id = crypto.randomUUID();
    for (let delivery = 0; delivery < 2; delivery++) {
      const batch = createMessageBatch<DomainEvent>("integrity-edge-events", [
        { id: `m-${delivery}`, timestamp: new Date(), attempts: delivery + 1, body: event(id) },
      ]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      const result = await getQueueResult(batch, ctx);
      expect(result.explicitAcks).toEqual([`m-${delivery}`]);
      expect(result.retryMessages).toEqual([]);
    }
    const seen = await env.DB.prepare("SELECT count(*) AS n FROM processed_events WHERE event_id = ?1").bind(id).first<{ n: number }>();
    expect(seen?.n).toBe(1);
  });
});
