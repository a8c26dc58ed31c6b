/**
 * The WEBHOOKS queue's consumer: one attempt per message. It claims the delivery (a one-minute lease,
 * so two copies of a message never send at once), signs the stored body as Standard Webhooks specifies
 * (`webhook-id` = the event id, `webhook-timestamp` = now, `webhook-signature` = v1 HMAC-SHA256 with the
 * subscription's current secret), POSTs it without following redirects, and records the answer.
 *
 * A failure is retried on a backoff schedule (the one Standard Webhooks' reference service uses: 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; longer when the receiver's Retry-After asks for it) by retrying
 * the message with that delay; after {@link MAX_ATTEMPTS} attempts in a round the delivery is
 * dead-lettered. A subscription whose attempts have only failed for {@link DISABLE_AFTER_MS}, or whose
 * receiver answers 410 Gone, is disabled with its reason.
 *
 * While a subscription fails, its receiver gets one attempt at a time (the subscription's attempt lease):
 * its other deliveries are put off without an attempt ({@link failingDeferSeconds}), so a receiver that
 * is down or hangs for its whole timeout holds one of the consumer's slots, not all of them in front of
 * every other subscriber's deliveries (an import's thousand events to a dead receiver did that). The queue's own dead-letter queue receives
 * a message only when this consumer itself kept failing on it; {@link consumeDeadLetters} records that.
 *
 * Nothing secret is logged: log lines name the delivery, the subscription and the target's host,
 * never the URL (its path or query may be a credential), the body or the headers.
 */
import { platform } from "../platform/services";
import type { Bindings } from "../env";
import { guardedOutboxStatements, serviceEventContext } from "../events/outbox";
import { newEtagToken } from "../pkg/db";
import { errorFields, type Logger } from "../pkg/logger";
import {
  claimDeliveryStatement,
  deadLetterStatement,
  deferDeliveryStatement,
  recordAttemptStatement,
  type DeliveryMessage,
  type DeliveryRow,
} from "./deliveries";
import { openSecret, signedHeaders } from "./secret";
import {
  disableSubscriptionStatement,
  SUBSCRIPTION_KIND,
  subscriptionFailedStatement,
  subscriptionSucceededStatement,
  takeFailingAttemptLeaseStatement,
} from "./store";
import { checkTarget } from "./targets";

/** Seconds to wait after the n-th failed attempt of a round (index n - 1). */
export const BACKOFF_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;
export const MAX_ATTEMPTS = BACKOFF_SECONDS.length + 1;
/** A queue message can be delayed at most 12 hours. */
const MAX_DELAY_SECONDS = 12 * 3600;
export const DISABLE_AFTER_MS = 3 * 24 * 3600 * 1000;
export const ATTEMPT_TIMEOUT_MS = 15_000;
const LEASE_MS = 60_000;

/**
 * How long a delivery to a failing subscription waits when another attempt holds its receiver: half of
 * how long it has been failing, between a minute and an hour (with up to 10% more, so the waiting ones
 * do not all come back at once). Not an attempt: the delivery keeps its own backoff schedule.
 */
export function failingDeferSeconds(failingForMs: number, random: number = Math.random()): number {
  const base = Math.min(3600, Math.max(60, Math.round(failingForMs / 2000)));
  return Math.round(base * (1 + 0.1 * random));
}
export const EXCERPT_CHARS = 200;

/** Who carries the request: the internet, or (tests) a service binding standing in for the receivers. */
export interface WebhookTransport {
  fetch(request: Request): Promise<Response>;
}

export function transportOf(env: Bindings): WebhookTransport {
  return env.WEBHOOK_TRANSPORT ?? { fetch: (request) => fetch(request) };
}

type Outcome = { kind: "done" } | { kind: "retry"; delaySeconds: number };

interface AttemptRow extends DeliveryRow {
  url: string;
  enabled: number;
  failing_since: string | null;
  disabled_reason: string | null;
  secret_sealed: string;
  lease_until: string | null;
}

interface Answer {
  statusCode: number | null;
  excerpt: string | null;
  error: string | null;
  retryAfterSeconds: number | null;
}

export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, env: Bindings, log: Logger): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        const outcome = await attemptDelivery(env, message.body, platform().clock.now(), log);
        if (outcome.kind === "retry") message.retry({ delaySeconds: outcome.delaySeconds });
        else message.ack();
      } catch (error) {
        // The consumer itself failed (D1, the key ring): the queue tries the message again, and past
        // its max_retries hands it to the dead-letter queue. At least a lease long, so it is free again.
        log.error("webhook delivery could not be processed", {
          deliveryId: message.body?.deliveryId,
          attempts: message.attempts,
          ...errorFields(error),
        });
        message.retry({ delaySeconds: Math.min(3600, 60 * 2 ** Math.min(message.attempts, 6)) });
      }
    }),
  );
}

/** One attempt of one delivery (what a message asks for), or nothing when the message is stale. */
export async function attemptDelivery(env: Bindings, message: DeliveryMessage, now: Date, log: Logger): Promise<Outcome> {
  const nowIso = now.toISOString();
  const row = await env.DB.prepare(
    `SELECT d.*, s.url, s.enabled, s.disabled_reason, s.secret_sealed, s.failing_since FROM webhook_deliveries d JOIN ` +
      `webhook_subscriptions s ON s.id = d.subscription_id WHERE d.id = ?1`,
  )
    .bind(message.deliveryId)
    .first<AttemptRow>();
  // Gone with its subscription, redelivered since (a newer round has its own message), or finished.
  if (!row || row.round !== message.round || (row.status !== "pending" && row.status !== "retrying")) return { kind: "done" };
  const at = { log: log.with({ deliveryId: row.id, subscriptionId: row.subscription_id }) };
  if (row.enabled !== 1) {
    await giveUp(env, row, nowIso, `Not sent: the subscription is disabled${row.disabled_reason ? ` (${row.disabled_reason})` : ""}.`);
    return { kind: "done" };
  }
  const claimed = await claimDeliveryStatement(env.DB, row, { until: new Date(now.getTime() + LEASE_MS).toISOString(), now: nowIso }).run();
  if (claimed.meta.changes !== 1) return { kind: "done" }; // another copy of the message holds it
  if (row.failing_since !== null) {
    // A failing receiver: one attempt at a time; this one waits its turn without an attempt.
    const lease = { until: new Date(now.getTime() + ATTEMPT_TIMEOUT_MS + 15_000).toISOString(), now: nowIso };
    const taken = await takeFailingAttemptLeaseStatement(env.DB, row.subscription_id, lease).run();
    if (taken.meta.changes !== 1) {
      const delaySeconds = failingDeferSeconds(now.getTime() - Date.parse(row.failing_since));
      const nextAttemptAt = new Date(now.getTime() + delaySeconds * 1000).toISOString();
      await deferDeliveryStatement(env.DB, row, { nextAttemptAt, now: nowIso }).run();
      at.log.debug("webhook delivery waits for its failing receiver", { delaySeconds });
      return { kind: "retry", delaySeconds };
    }
  }
  const target = checkTarget(row.url, env);
  if (!target.ok) {
    await giveUp(env, row, nowIso, `Not sent: the target is no longer allowed (url ${target.reason}).`);
    return { kind: "done" };
  }
  const secret = await openSecret(env, row.secret_sealed);
  const request = new Request(target.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "integrity-edge-webhooks/1",
      ...signedHeaders(secret, row.event_id, row.payload, now),
    },
    body: row.payload,
    redirect: "manual",
  });
  const host = new URL(target.url).host;
  const answer = await send(transportOf(env), request);
  const attempts = row.round_attempts + 1;
  if (answer.statusCode !== null && answer.statusCode >= 200 && answer.statusCode < 300) {
    await env.DB.batch([
      recordAttemptStatement(env.DB, row, { status: "succeeded", attempts, at: nowIso, answer, error: null, nextAttemptAt: null }),
      subscriptionSucceededStatement(env.DB, row.subscription_id, nowIso),
    ]);
    at.log.info("webhook delivered", { host, status: answer.statusCode, attempts });
    return { kind: "done" };
  }
  const exhausted = attempts >= MAX_ATTEMPTS;
  const delaySeconds = Math.min(
    MAX_DELAY_SECONDS,
    Math.max(BACKOFF_SECONDS[Math.min(attempts, BACKOFF_SECONDS.length) - 1]!, answer.retryAfterSeconds ?? 0),
  );
  const nextAttemptAt = exhausted ? null : new Date(now.getTime() + delaySeconds * 1000).toISOString();
  const error = answer.error ?? (exhausted ? `Given up after ${attempts} attempts.` : null);
  const [, , subscription] = await env.DB.batch([
    recordAttemptStatement(env.DB, row, {
      status: exhausted ? "deadLettered" : "retrying",
      attempts,
      at: nowIso,
      answer,
      error,
      nextAttemptAt,
    }),
    subscriptionFailedStatement(env.DB, row.subscription_id, nowIso),
    env.DB.prepare("SELECT failing_since FROM webhook_subscriptions WHERE id = ?1").bind(row.subscription_id),
  ]);
  at.log.warn("webhook attempt failed", { host, status: answer.statusCode, error: answer.error, attempts, exhausted });
  const failingSince = (subscription?.results[0] as { failing_since: string | null } | undefined)?.failing_since ?? nowIso;
  const reason =
    answer.statusCode === 410
      ? `The receiver answered 410 Gone at ${nowIso}: it no longer wants these deliveries.`
      : now.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_MS
        ? `Every attempt since ${failingSince} failed (three days or more); the last at ${nowIso}: ` +
          `${answer.statusCode !== null ? `HTTP ${answer.statusCode}` : answer.error}.`
        : null;
  if (reason) {
    const disabled = await disableSubscription(env, row.subscription_id, reason, nowIso);
    if (disabled) at.log.warn("webhook subscription disabled", { host, reason });
    if (!exhausted) await giveUp(env, row, nowIso, `Not retried: the subscription was disabled (${reason})`, true);
    return { kind: "done" };
  }
  return exhausted ? { kind: "done" } : { kind: "retry", delaySeconds };
}

/** Dead-letters a delivery of this round with a reason (keeping the last answer when `keepAnswer`). */
async function giveUp(
  env: Bindings,
  row: Pick<DeliveryRow, "id" | "round">,
  nowIso: string,
  reason: string,
  keepAnswer = false,
): Promise<void> {
  await deadLetterStatement(env.DB, row, { reason, now: nowIso, keepAnswer, onlyIfActive: false }).run();
}

/** Disables a subscription with the service's reason (a new version, with its event); false if it already was. */
async function disableSubscription(env: Bindings, id: string, reason: string, nowIso: string): Promise<boolean> {
  const etag = newEtagToken();
  const event = serviceEventContext("webhook deliveries: failing for three days", nowIso);
  const [update] = await env.DB.batch([
    disableSubscriptionStatement(env.DB, id, { reason, now: nowIso, etag }),
    ...guardedOutboxStatements(
      env.DB,
      event,
      {
        entityKind: SUBSCRIPTION_KIND,
        entityId: id,
        action: "updated",
        payload: { id, enabled: false, disabledReason: reason },
        partial: true,
      },
      { table: "webhook_subscriptions", etag },
    ),
  ]);
  return update?.meta.changes === 1;
}

/** POSTs one attempt and reads what came back: the status, a short excerpt, or why nothing came. */
export async function send(transport: WebhookTransport, request: Request): Promise<Answer> {
  let response: Response;
  try {
    response = await transport.fetch(new Request(request, { signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) }));
  } catch (error) {
    const name = error instanceof Error ? error.name : "";
    const timedOut = name === "TimeoutError" || name === "AbortError";
    return {
      statusCode: null,
      excerpt: null,
      error: timedOut
        ? `No answer within ${ATTEMPT_TIMEOUT_MS / 1000} seconds.`
        : `The request failed: ${withoutUrls(error instanceof Error ? error.message : String(error))}`,
      retryAfterSeconds: null,
    };
  }
  const excerpt = await readExcerpt(response);
  const statusCode = response.status;
  const redirected = statusCode >= 300 && statusCode < 400;
  const retryAfter = Number(response.headers.get("retry-after"));
  return {
    statusCode,
    excerpt,
    error: redirected
      ? `The receiver answered a redirect (${statusCode}); redirects are not followed: subscribe the final URL.`
      : statusCode >= 300
        ? `The receiver answered HTTP ${statusCode}.`
        : null,
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  };
}

/** The start of an answer's body (at most 4 KiB read), secrets that look like ours masked. */
async function readExcerpt(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < 4096) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body that breaks off still leaves what came.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const text = new TextDecoder().decode(bytes.slice(0, 4096)).slice(0, EXCERPT_CHARS);
  return text ? text.replace(/whsec_[A-Za-z0-9+/=]+/g, "whsec_[redacted]") : null;
}

const withoutUrls = (text: string) => text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "[url]").slice(0, 300);

/**
 * The dead-letter queue's consumer: the delivery consumer gave up on these messages after the queue's
 * retries (it kept failing itself, not the receiver). The delivery is dead-lettered with that reason;
 * a redelivery starts it again.
 */
export async function consumeDeadLetters(batch: MessageBatch<DeliveryMessage>, env: Bindings, log: Logger): Promise<void> {
  const nowIso = platform().clock.now().toISOString();
  for (const message of batch.messages) {
    try {
      const { deliveryId, round } = message.body;
      const reason =
        "Dead-lettered by the queue: the service failed to process this delivery after its retries (see the service's " +
        "logs); redeliver it to try again.";
      await deadLetterStatement(env.DB, { id: deliveryId, round }, { reason, now: nowIso, keepAnswer: true, onlyIfActive: true }).run();
      log.error("webhook delivery dead-lettered by the queue", { deliveryId, round, attempts: message.attempts });
      message.ack();
    } catch (error) {
      log.error("dead-lettered webhook delivery could not be recorded", errorFields(error));
      message.retry();
    }
  }
}
