/**
 * Test-side handles for webhooks: the fake receivers (test/support/fake-webhook-receiver.ts), a
 * subscription maker, and driving the WEBHOOKS queue's consumer by hand.
 */
import { insertDeliveryStatement } from "../../src/subscriptions/deliveries";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/subscriptions/deliveries";
import { call, type TestUser } from "../support/http";

export interface ReceivedWebhook {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

const control = (path: string, init?: RequestInit) => env.WEBHOOK_TRANSPORT.fetch(`https://receiver.test/__control${path}`, init);

/** A fresh receiver path, and its URL as a subscription names it (a public https host: the fake answers). */
export function receiver(): { path: string; url: string } {
  const path = `/hooks/${crypto.randomUUID()}`;
  return { path, url: `https://hooks.example.com${path}` };
}

/** What the receiver at `path` answers next, in order (then 200 "ok"). */
export async function scriptReceiver(
  path: string,
  responses: { status: number; body?: string; headers?: Record<string, string> }[],
): Promise<void> {
  await control(`/script?path=${encodeURIComponent(path)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(responses),
  });
}

export async function received(path: string): Promise<ReceivedWebhook[]> {
  return (await (await control(`/received?path=${encodeURIComponent(path)}`)).json()) as ReceivedWebhook[];
}

/** Polls until `check` passes or `ms` elapse (the outbox relay and the queues run in the background). */
export async function eventually<T>(check: () => Promise<T>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export async function subscribe(
  body: Record<string, unknown>,
  user?: Partial<TestUser>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
): Promise<{ id: string; secret: string; etag: string; body: any }> {
  const res = await call("/Subscriptions", { method: "POST", body, user });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, secret: res.body.secret, etag: res.headers.get("etag")!, body: res.body };
}

/**
 * Runs the WEBHOOKS consumer on one message, as the queue would: what it did with the message, with
 * the delay it asked for on a retry (the harness's result does not carry it). `logLevel` overrides the
 * tests' LOG_LEVEL (error) to see every line.
 */
export async function deliverNow(message: DeliveryMessage, attempts = 1, logLevel?: string) {
  return deliverBatchNow([message], attempts, logLevel);
}

/** {@link deliverNow} for several messages in one batch, as the queue hands them to the consumer (at once). */
export async function deliverBatchNow(messages: DeliveryMessage[], attempts = 1, logLevel?: string) {
  const batch = createMessageBatch<DeliveryMessage>(
    "integrity-edge-webhooks",
    messages.map((body) => ({ id: `m-${crypto.randomUUID()}`, timestamp: new Date(), attempts, body })),
  );
  const delays = new Map<string, number | undefined>();
  for (const m of batch.messages) {
    const retry = m.retry.bind(m);
    m.retry = (options?: QueueRetryOptions) => {
      delays.set(m.id, options?.delaySeconds);
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, logLevel ? { ...env, LOG_LEVEL: logLevel } : env, ctx);
  const result = await getQueueResult(batch, ctx);
  return {
    ...result,
    retryMessages: (result.retryMessages as { msgId: string }[]).map((r) => ({ ...r, delaySeconds: delays.get(r.msgId) })),
  };
}

export interface DeliveryRowView {
  id: string;
  status: string;
  attempts: number;
  round: number;
  round_attempts: number;
  next_attempt_at: string | null;
  enqueued_at: string | null;
  lease_until: string | null;
}

export async function deliveryRows(subscriptionId: string): Promise<DeliveryRowView[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, status, attempts, round, round_attempts, next_attempt_at, enqueued_at, lease_until FROM " +
      "webhook_deliveries WHERE subscription_id = ?1 ORDER BY created_at",
  )
    .bind(subscriptionId)
    .all<DeliveryRowView>();
  return results;
}

/**
 * A pending delivery written straight into D1 and handed to no queue, so a test drives its attempts
 * alone with {@link deliverNow} (the background consumer never sees it).
 */
export async function insertDelivery(
  subscriptionId: string,
  options: { eventId?: string; body?: string } = {},
): Promise<{ id: string; eventId: string; body: string }> {
  const id = crypto.randomUUID();
  const eventId = options.eventId ?? crypto.randomUUID();
  const body =
    options.body ??
    JSON.stringify({
      type: "deviation.created",
      timestamp: new Date().toISOString(),
      data: { eventId, entityKind: "deviation", entityId: "d-1", action: "created" },
    });
  const now = new Date().toISOString();
  await insertDeliveryStatement(env.DB, {
    id,
    subscriptionId,
    eventId,
    eventType: "deviation.created",
    entityKind: "deviation",
    entityId: "d-1",
    occurredAt: now,
    payload: body,
    truncated: false,
    status: "pending",
    attempts: 0,
    round: 0,
    roundAttempts: 0,
    nextAttemptAt: now,
    enqueuedAt: now,
    createdAt: now,
    updatedAt: now,
  }).run();
  return { id, eventId, body };
}
