/** Webhook subscriptions and their deliveries (issue 25): shapes and list queries. */
import { z } from "@hono/zod-openapi";
import { listQueryShape } from "../pkg/query";
import { updateBodyOf } from "../pkg/resource";
import { EVENT_KINDS } from "./catalogue";

export const MAX_FILTERS = 50;

const KINDS = Object.keys(EVENT_KINDS).sort();

export const FilterSchema = z
  .object({
    entityKind: z
      .string()
      .min(1)
      .max(64)
      .openapi({
        description: `The entity kind: one of ${KINDS.join(", ")} (GET /Subscriptions/EventTypes lists them with their actions).`,
        example: "deviation",
      }),
    action: z
      .string()
      .min(1)
      .max(32)
      .nullable()
      .optional()
      .openapi({
        description:
          "The action (created, updated, deleted; an alarm's entered, left, acknowledged... as GET /Subscriptions/EventTypes " +
          "lists them). " +
          "Absent or null: any action of the kind.",
        example: "created",
      }),
    statuses: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(20)
      .nullable()
      .optional()
      .openapi({
        description:
          "Only events whose entity carries one of these `status` values (a job `Failed`, a file `processed`). Absent or null: any.",
        example: ["Failed"],
      }),
  })
  .strict()
  .openapi("SubscriptionFilter");

export type Filter = z.infer<typeof FilterSchema>;

/** A filter as stored and shown: every key present. */
export interface StoredFilter {
  entityKind: string;
  action: string | null;
  statuses: string[] | null;
}

const StoredFilterSchema = z
  .object({
    entityKind: z.string(),
    action: z.string().nullable().openapi({ description: "null: any action." }),
    statuses: z.array(z.string()).nullable().openapi({ description: "null: any status." }),
  })
  .openapi("SubscriptionFilterRead");

export const SubscriptionSchema = z
  .object({
    id: z.uuid(),
    url: z
      .string()
      .openapi({ description: "Where deliveries are POSTed (https to a public host).", example: "https://hooks.example.com/integrity" }),
    description: z.string().nullable(),
    filters: z.array(StoredFilterSchema).openapi({ description: "The events wanted: an event is delivered when any filter matches it." }),
    enabled: z.boolean().openapi({
      description:
        "false: no event is delivered. The service sets it false after three days of only failed attempts, or when the " +
        "receiver answers 410 Gone.",
    }),
    disabledReason: z
      .string()
      .nullable()
      .openapi({ description: "Why the service disabled the subscription (null when enabled, or disabled by a person)." }),
    disabledAt: z.string().nullable(),
    secretRotatedAt: z.string().openapi({ description: "When the current signing secret was made (creation or the last rotation)." }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Subscription");

export type Subscription = z.infer<typeof SubscriptionSchema>;

export const SubscriptionWithSecretSchema = SubscriptionSchema.extend({
  secret: z.string().openapi({
    description:
      "The signing secret (`whsec_...`), shown this once: keep it to verify the `webhook-signature` header. It is " +
      "never shown again; rotate it to get a new one.",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  }),
}).openapi("SubscriptionWithSecret");

const url = z.string().min(1).max(2048).openapi({
  description: 'https URL of a public host (README, "Webhooks": what is refused).',
  example: "https://hooks.example.com/integrity",
});
const filters = z.array(FilterSchema).min(1).max(MAX_FILTERS);
const description = z.string().trim().max(1000).nullable().default(null);
const enabled = z.boolean().default(true).openapi({ description: "Default true. Setting it true again clears disabledReason." });

export const CreateSubscriptionSchema = z.object({ url, filters, description, enabled }).strict().openapi("CreateSubscription");
export const UpdateSubscriptionSchema = updateBodyOf(SubscriptionSchema, { url, filters, description, enabled }, "UpdateSubscription", {
  secretRotatedAt: "rotate with POST /Subscriptions/{id}/SecretRotation",
  disabledReason: "set by the service",
});

export type SubscriptionInput = z.infer<typeof CreateSubscriptionSchema>;

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

export const SubscriptionListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the URL or the description." }),
  enabled: z.enum(["true", "false"]).optional().openapi({ description: "Only enabled (true) or disabled (false) subscriptions." }),
  entityKinds: z.string().optional().openapi({
    description: "Only subscriptions with a filter on one of these entity kinds (comma-separated).",
    example: "deviation,alarm",
  }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over url, description, enabled, createdAt, updatedAt. Default: createdAt desc; ties by id.",
  }),
  skip,
  take,
  includeTotal,
});

export const DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "deadLettered"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DeliverySchema = z
  .object({
    id: z.uuid(),
    subscriptionId: z.uuid(),
    eventId: z.string().openapi({ description: "The outbox event's id; also the `webhook-id` header, for the receiver to deduplicate." }),
    eventType: z.string().openapi({ example: "deviation.created" }),
    entityKind: z.string(),
    entityId: z.string(),
    occurredAt: z.string(),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description:
        "pending (queued, not tried yet), retrying (failed; nextAttemptAt says when it is tried again), succeeded (a " +
        "2xx answer), deadLettered (given up: every attempt failed, or the subscription was disabled).",
    }),
    attempts: z.number().int().openapi({ description: "Attempts so far, redeliveries included." }),
    nextAttemptAt: z.string().nullable(),
    lastAttemptAt: z.string().nullable(),
    lastResponse: z
      .object({
        statusCode: z
          .number()
          .int()
          .nullable()
          .openapi({ description: "The receiver's HTTP status; null when no answer came (see error)." }),
        excerpt: z.string().nullable().openapi({ description: "The first 200 characters of the answer's body." }),
        error: z.string().nullable().openapi({ description: "Why the attempt failed, when it did." }),
      })
      .nullable()
      .openapi({ description: "The last attempt's answer; null before the first attempt." }),
    deliveredAt: z.string().nullable(),
    redeliveredAt: z.string().nullable().openapi({ description: "When a redelivery was last asked for." }),
    truncated: z.boolean().openapi({ description: "The event's entity was over 64 KiB: the body carries a link instead." }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Delivery");

export type Delivery = z.infer<typeof DeliverySchema>;

export const DeliveryDetailSchema = DeliverySchema.extend({
  payload: z.unknown().openapi({ description: "The body as sent (secrets redacted)." }),
}).openapi("DeliveryDetail");

export const DeliveryListQuery = z.object({
  ids,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the event type, the entity id or the event id." }),
  statuses: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated: ${DELIVERY_STATUSES.join(", ")}.`, example: "retrying,deadLettered" }),
  eventTypes: z
    .string()
    .optional()
    .openapi({ description: "Comma-separated event types (`deviation.created`).", example: "deviation.created" }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over createdAt, updatedAt, status, attempts, eventType, lastAttemptAt. " +
      "Default: createdAt desc; ties by id.",
  }),
  skip,
  take,
  includeTotal,
});

export const EventTypeSchema = z
  .object({
    entityKind: z.string(),
    actions: z.array(z.string()),
    eventTypes: z.array(z.string()).openapi({ example: ["deviation.created", "deviation.updated", "deviation.deleted"] }),
    permission: z.string().openapi({ description: "The permission a subscription's author needs to subscribe to these events." }),
    description: z.string(),
  })
  .openapi("SubscriptionEventType");
