/**
 * Every kind of entity the outbox carries, in one list: a store names its kind from here, the event
 * catalogue (src/subscriptions/catalogue.ts) describes each one, and TypeScript holds the two together.
 */
export const ENTITY_KINDS = [
  "activity",
  "activityTemplate",
  "activityType",
  "alarm",
  "asset",
  "category",
  "channel",
  "channelAnalysis",
  "channelAvailability",
  "channelType",
  "classification",
  "dataOrigin",
  "dataType",
  "deviation",
  "deviationType",
  "entityType",
  "file",
  "fileReference",
  "import",
  "inspectionPlan",
  "job",
  "jobOutput",
  "jobConfiguration",
  "media",
  "mediaReference",
  "model",
  "modelDefinition",
  "monitor",
  "monitorJob",
  "outputType",
  "propertyDefinition",
  "readings",
  "searchIndex",
  "searchQuery",
  "subscription",
  "userStatus",
  "workItem",
  "workTemplate",
] as const;

export type EntityKind = (typeof ENTITY_KINDS)[number];

/**
 * What happened to the entity; alarms are `entered` and `left` (issue 25), and worked (issue 33):
 * `acknowledged`, `assigned`, `unassigned`, `commented`, `shelved`, `unshelved`, `escalated`.
 */
export const EVENT_ACTIONS = [
  "created",
  "updated",
  "deleted",
  "entered",
  "left",
  "acknowledged",
  "assigned",
  "unassigned",
  "commented",
  "shelved",
  "unshelved",
  "escalated",
  // Readings (issue 35): a batch recorded, or one voided.
  "recorded",
  "voided",
  // Work items (issue 36): past their due date and not completed, announced once and again as reminders.
  "overdue",
] as const;

export type EventAction = (typeof EVENT_ACTIONS)[number];
