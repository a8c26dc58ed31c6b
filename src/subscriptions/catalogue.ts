/**
 * The events a subscription can ask for: every entity kind the outbox carries, the actions it has,
 * where a reader finds the entity (the link of a payload cut to a reference) and the permission that
 * reads it (a subscriber must hold it: a subscription must not read more than its author may).
 *
 * test/subscriptions/catalogue.test.ts holds this list to the source: every entity kind written to the
 * outbox is here, and every path and permission is the one the OpenAPI document gives its GET.
 */
import type { EntityKind } from "../events/kinds";
import { PERMISSIONS, type Permission } from "../pkg/permissions";

export interface EventKind {
  /** The actions the outbox writes for this kind. */
  actions: readonly string[];
  /** `GET` path of one entity (`{id}` replaced by the entity id), or null when it has none of its own. */
  path: string | null;
  /** What reading the entity takes; subscribing to its events takes the same. */
  permission: Permission;
  description: string;
}

const CRUD = ["created", "updated", "deleted"] as const;

export const EVENT_KINDS: Readonly<Record<EntityKind, EventKind>> = {
  activity: { actions: CRUD, path: "/Activities/{id}", permission: PERMISSIONS.workRead, description: "An activity of a work item." },
  activityTemplate: {
    actions: CRUD,
    path: "/ActivityTemplates/{id}",
    permission: PERMISSIONS.workRead,
    description: "An activity template (a new revision is `updated`).",
  },
  activityType: { actions: CRUD, path: "/ActivityTypes/{id}", permission: PERMISSIONS.workRead, description: "An activity type." },
  alarm: {
    actions: ["entered", "left", "acknowledged", "assigned", "unassigned", "commented", "shelved", "unshelved", "escalated"],
    path: "/Alarms/{id}",
    permission: PERMISSIONS.monitorsRead,
    description:
      "A monitor's controller entered or left its alarm state for a population item (or a channel's, after a batch of its " +
      "readings: `source` channel), and what people and the clock did to the " +
      "alarm: acknowledged, assigned, unassigned, commented, shelved, unshelved, escalated (repeated until acknowledged or " +
      "cleared). Every payload names the alarm's severity.",
  },
  asset: {
    actions: CRUD,
    path: "/Assets/{id}",
    permission: PERMISSIONS.assetsRead,
    description: "An asset (plant, main system, equipment, organization...).",
  },
  category: { actions: CRUD, path: "/Categories/{id}", permission: PERMISSIONS.propertiesRead, description: "A property category." },
  channel: {
    actions: CRUD,
    path: "/Channels/{id}",
    permission: PERMISSIONS.measurementsRead,
    description: "A channel: a place measured again and again on an asset (a thickness location, a pressure, a vibration).",
  },
  channelAnalysis: {
    actions: ["updated"],
    path: "/Channels/{id}/Analysis",
    permission: PERMISSIONS.measurementsRead,
    description:
      "A thickness channel's analysis changed (a reading recorded or voided): its rates, remaining life, retirement and next " +
      "inspection dates. The entity id is the channel's.",
  },
  channelAvailability: {
    actions: CRUD,
    path: "/ChannelAvailabilities/{id}",
    permission: PERMISSIONS.measurementsRead,
    description: "A channel availability (whether its channels accept readings).",
  },
  channelType: { actions: CRUD, path: "/ChannelTypes/{id}", permission: PERMISSIONS.measurementsRead, description: "A channel type." },
  classification: {
    actions: CRUD,
    path: "/Classifications/{id}",
    permission: PERMISSIONS.propertiesRead,
    description: "A classification.",
  },
  dataOrigin: { actions: CRUD, path: "/DataOrigins/{id}", permission: PERMISSIONS.measurementsRead, description: "A data origin." },
  dataType: { actions: CRUD, path: "/DataTypes/{id}", permission: PERMISSIONS.filesRead, description: "A data type of uploaded files." },
  deviation: {
    actions: CRUD,
    path: "/Deviations/{id}",
    permission: PERMISSIONS.workRead,
    description: "A deviation (damage found during inspection or by monitoring).",
  },
  deviationType: { actions: CRUD, path: "/DeviationTypes/{id}", permission: PERMISSIONS.workRead, description: "A deviation type." },
  entityType: { actions: CRUD, path: "/EntityTypes/{id}", permission: PERMISSIONS.propertiesRead, description: "An entity type." },
  file: {
    actions: CRUD,
    path: "/Files/{id}",
    permission: PERMISSIONS.filesRead,
    description: "An uploaded file (its `status` says when it is processed).",
  },
  fileReference: {
    actions: ["created", "deleted"],
    path: null,
    permission: PERMISSIONS.workRead,
    description: "A file linked to or unlinked from a work entity.",
  },
  import: {
    actions: ["created", "updated"],
    path: "/Imports/{id}",
    permission: PERMISSIONS.workRead,
    description:
      "A spreadsheet import: `created` when committed (queued), `updated` once when it ends, with its `status` (completed or " +
      "failed) and its counts (created, skipped, failed). Progress in between is read from GET /Imports/{id} or its events stream. " +
      "Reading an import takes its kind's read permission; subscribing to imports' events takes work_read.",
  },
  inspectionPlan: {
    actions: CRUD,
    path: "/InspectionPlans/{id}",
    permission: PERMISSIONS.workRead,
    description:
      "An inspection plan: recurring work generated from a work template by calendar, from completion or by condition. Its " +
      "generated work items are workItem events.",
  },
  job: {
    actions: CRUD,
    path: "/Jobs/{id}",
    permission: PERMISSIONS.dataProcessingRead,
    description: "A data processing job (`updated` with its `status` at each change: InProgress, Success, Failed).",
  },
  jobOutput: {
    actions: ["created", "deleted"],
    path: "/JobOutputs/{id}",
    permission: PERMISSIONS.dataProcessingRead,
    description: "A job output (`created` with the output a running job posted).",
  },
  jobConfiguration: {
    actions: CRUD,
    path: "/JobConfigurations/{id}",
    permission: PERMISSIONS.dataProcessingRead,
    description: "A job configuration (never with its run options).",
  },
  media: { actions: CRUD, path: "/Medias/{id}", permission: PERMISSIONS.mediaRead, description: "A media file." },
  mediaReference: { actions: CRUD, path: "/MediaReferences/{id}", permission: PERMISSIONS.workRead, description: "A media reference." },
  model: { actions: CRUD, path: "/Models/{id}", permission: PERMISSIONS.monitorsRead, description: "A model." },
  modelDefinition: {
    actions: CRUD,
    path: "/ModelDefinitions/{id}",
    permission: PERMISSIONS.monitorsRead,
    description: "A model definition.",
  },
  monitor: { actions: CRUD, path: "/Monitors/{id}", permission: PERMISSIONS.monitorsRead, description: "A monitor." },
  monitorJob: {
    actions: CRUD,
    path: "/MonitorJobs/{id}",
    permission: PERMISSIONS.monitorsRead,
    description: "A monitor job (`updated` with its `status` when it ends).",
  },
  outputType: { actions: CRUD, path: "/OutputTypes/{id}", permission: PERMISSIONS.dataProcessingRead, description: "A job output type." },
  propertyDefinition: {
    actions: CRUD,
    path: "/PropertyDefinitions/{id}",
    permission: PERMISSIONS.propertiesRead,
    description: "A property definition.",
  },
  readings: {
    actions: ["recorded", "voided"],
    path: null,
    permission: PERMISSIONS.measurementsRead,
    description:
      "Readings recorded in one request (one event per request, however many readings: the payload names each channel with its " +
      "count, first and last timestamp and latest value), or one reading voided (with its reason). The entity id is the batch's. " +
      "`source`: `signals` (the API) or `activity:{activityId}:{inputTemplateId}` (an inspection value an activity fed); a " +
      "voided reading's is its own (null for the API's).",
  },
  searchIndex: { actions: CRUD, path: "/Indices/{id}", permission: PERMISSIONS.indexReadOwned, description: "A search index." },
  searchQuery: { actions: CRUD, path: "/Queries/{id}", permission: PERMISSIONS.queryReadOwned, description: "A saved search query." },
  subscription: {
    actions: CRUD,
    path: "/Subscriptions/{id}",
    permission: PERMISSIONS.subscriptionsRead,
    description: "A webhook subscription (never with its secret).",
  },
  userStatus: { actions: CRUD, path: "/UserStatuses/{id}", permission: PERMISSIONS.propertiesRead, description: "A user status." },
  workItem: {
    actions: [...CRUD, "overdue"],
    path: "/WorkItems/{id}",
    permission: PERMISSIONS.workRead,
    description:
      "A work item. `overdue`: past its due date and not completed, announced once, and again at the reminder interval of the " +
      "inspection plan that generated it until it is completed (the payload names the due date and the reminder's number).",
  },
  workTemplate: {
    actions: CRUD,
    path: "/WorkTemplates/{id}",
    permission: PERMISSIONS.workRead,
    description: "A work template (a new revision is `updated`).",
  },
};

/** The catalogue's entry of a kind named in a request or a row, or undefined when it is none. */
export function eventKindOf(name: string): EventKind | undefined {
  return Object.hasOwn(EVENT_KINDS, name) ? EVENT_KINDS[name as EntityKind] : undefined;
}

/** The Standard Webhooks event type of an outbox event: `{entityKind}.{action}`, e.g. `deviation.created`. */
export const eventType = (entityKind: string, action: string) => `${entityKind}.${action}`;

/** Where one entity is read, under `base` (PUBLIC_API_URL, or nothing: a path relative to the API). */
export function entityLink(entityKind: string, entityId: string, base: string): string | null {
  const path = eventKindOf(entityKind)?.path;
  return path ? `${base.replace(/\/+$/, "")}${path.replace("{id}", encodeURIComponent(entityId))}` : null;
}
