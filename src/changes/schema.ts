/** GET /Changes: the kinds in the feed with the permission that reads each, the entry and the query. */
import { z } from "@hono/zod-openapi";
import { type Permission } from "../pkg/permissions";
import { EVENT_KINDS } from "../subscriptions/catalogue";

/** The entity kinds in the feed. */
const FEED_KINDS = [
  "deviation",
  "deviationType",
  "workItem",
  "activity",
  "workTemplate",
  "activityTemplate",
  "activityType",
  "asset",
  "category",
  "classification",
  "propertyDefinition",
  "entityType",
  "userStatus",
  "jobConfiguration",
  "job",
  "outputType",
  "model",
  "monitor",
  "modelDefinition",
] as const;

/**
 * Each kind of the feed and the permission that reads it: the event catalogue's, which its test holds
 * to the permission of the kind's own GET in the OpenAPI document, so the feed shows a change to
 * exactly the callers who may read the entity.
 */
export const CHANGE_KINDS: Readonly<Record<string, Permission>> = Object.fromEntries(
  FEED_KINDS.map((kind) => [kind, EVENT_KINDS[kind]!.permission]),
);

const MAX_TAKE = 500;

export const ChangeSchema = z
  .object({
    cursor: z.string().openapi({ description: "This change's position; send it as `since` to continue after it." }),
    type: z.string().openapi({ example: "deviation" }),
    id: z.string(),
    action: z.enum(["created", "updated", "deleted", "overdue"]).openapi({
      description:
        "overdue (work items, issue 36): past its due date and not completed; `data` is the announcement " +
        "({ id, displayName, dueDate, overdue: { at, reminder, inspectionPlanId } }), not the whole work item.",
    }),
    occurredAt: z.string(),
    data: z.unknown().openapi({ description: "The entity as the change left it; null for a deletion (a tombstone)." }),
  })
  .openapi("Change");

export const ChangesQuery = z.object({
  since: z
    .string()
    .regex(/^\d{1,18}$/, "a cursor from an earlier answer (digits)")
    .optional()
    .openapi({ description: "Changes after this cursor; absent: from the oldest kept." }),
  types: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated kinds (default: every kind the caller may read): ${Object.keys(CHANGE_KINDS).join(", ")}.` }),
  take: z.coerce.number().int().min(1).max(MAX_TAKE).default(100),
});
