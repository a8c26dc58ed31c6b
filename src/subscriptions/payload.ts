/**
 * The body of a webhook, in the shape Standard Webhooks recommends (`type`, `timestamp`, `data`), built
 * once per event and stored with each delivery so a retry or a redelivery sends the same bytes:
 *
 *   { "type": "deviation.created", "timestamp": "...", "data": { "eventId", "entityKind", "entityId",
 *     "action", "occurredAt", "actorId", "entity": { ...the event's payload } } }
 *
 * No secret leaves: keys that name secrets, tokens, passwords, credentials or run options are
 * replaced by "[redacted]" at any depth, and so are values that look like a signing secret
 * (`whsec_...`) or a JWT. A body over {@link MAX_PAYLOAD_BYTES} is cut to a reference: `entity` is
 * left out, `truncated` is true and `link` says where to read the entity.
 */
import type { DomainEvent } from "../events/outbox";
import { entityLink, eventType } from "./catalogue";

export const MAX_PAYLOAD_BYTES = 64 * 1024;

export const REDACTED = "[redacted]";

const SECRET_KEY = /secret|password|passwd|token|api[-_]?key|authori[sz]ation|credential|private[-_]?key|run[-_]?options|cookie/i;
const SECRET_VALUE = /^(whsec_[A-Za-z0-9+/=]{8,}|eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*|Bearer\s+\S+)$/;
const MAX_DEPTH = 64;

/** A copy of `value` with every secret-looking key or value replaced by "[redacted]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (typeof value === "string") return SECRET_VALUE.test(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? REDACTED : redact(item, depth + 1);
    return out;
  }
  return value;
}

export interface WebhookBody {
  text: string;
  truncated: boolean;
}

export function webhookBody(event: DomainEvent, publicApiUrl: string): WebhookBody {
  const data = {
    eventId: event.id,
    entityKind: event.entityKind,
    entityId: event.entityId,
    action: event.action,
    occurredAt: event.occurredAt,
    actorId: event.actorId,
  };
  const envelope = (body: Record<string, unknown>) =>
    JSON.stringify({ type: eventType(event.entityKind, event.action), timestamp: event.occurredAt, data: body });
  const full = envelope({ ...data, entity: redact(event.payload ?? null) });
  if (new TextEncoder().encode(full).byteLength <= MAX_PAYLOAD_BYTES) return { text: full, truncated: false };
  return {
    text: envelope({ ...data, truncated: true, link: entityLink(event.entityKind, event.entityId, publicApiUrl) }),
    truncated: true,
  };
}
