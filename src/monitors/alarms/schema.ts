/**
 * API shapes of alarms: an item's active alarms and its alarm history (issue 25), and the alarm as a
 * resource people work (issue 33): its state, severity, acknowledgement, assignee, shelving,
 * escalation and history, and the bodies of the actions on it.
 */
import { z } from "@hono/zod-openapi";
import { ASSET_TYPES } from "../populations/schema";
import { SEVERITIES } from "./severity";
import { ConditionSeenSchema } from "./active";

/** The asset types an alarm names: a population's, or a channel's asset's (a design object too). */
export const ALARM_ASSET_TYPES = [...ASSET_TYPES, "DesignObject"] as const;
export type AlarmAssetType = (typeof ALARM_ASSET_TYPES)[number];

/** The four states of ISA-18.2: acknowledgement is separate from whether the alarm is active. */
export const ALARM_STATUSES = ["activeUnacknowledged", "activeAcknowledged", "clearedUnacknowledged", "clearedAcknowledged"] as const;
export type AlarmStatus = (typeof ALARM_STATUSES)[number];

/** What the history of an alarm records. */
export const HISTORY_ACTIONS = [
  "entered",
  "left",
  "acknowledged",
  "assigned",
  "unassigned",
  "commented",
  "shelved",
  "unshelved",
  "escalated",
  "released",
  "onLeaveSkipped",
] as const;

export const AlarmHistoryEntrySchema = z
  .object({
    id: z.uuid(),
    alarmId: z.uuid(),
    controller: z.string(),
    action: z.enum(["entered", "left"]),
    monitorJobId: z.uuid(),
    conditions: z
      .array(ConditionSeenSchema)
      .openapi({ description: "The controller's conditions with the values the job reported (null: not reported): what decided it." }),
    recordedAt: z.string(),
    deviationId: z.uuid().nullable(),
    workItemId: z.uuid().nullable(),
  })
  .openapi("AlarmHistoryEntry");

const Actor = z.object({ id: z.string(), name: z.string().nullable() });

/** One entry of an alarm's own history: what the loop, people and the clock did, with who and when. */
export const AlarmEventSchema = z
  .object({
    id: z.uuid(),
    action: z.enum(HISTORY_ACTIONS),
    at: z.string(),
    by: Actor.nullable().openapi({ description: "Who did it; null for the monitoring loop and the clock." }),
    comment: z.string().nullable().openapi({ description: "The person's comment, or why the loop or the clock did it." }),
    monitorJobId: z.uuid().nullable().openapi({ description: "The monitor job of an entry, an exit or a skipped onLeave." }),
    conditions: z.array(ConditionSeenSchema).nullable().openapi({ description: "An entry's or exit's conditions with the values seen." }),
    details: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: "What the action set: the assignee, the shelving, the escalation's number, the deviation onLeave left." }),
  })
  .openapi("AlarmEvent");
export type AlarmEvent = z.infer<typeof AlarmEventSchema>;

export const AlarmSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(ALARM_STATUSES).openapi({
      description:
        "ISA-18.2's states: activeUnacknowledged, activeAcknowledged, clearedUnacknowledged (it cleared before anyone acknowledged " +
        "it: it stays on the board until someone does), clearedAcknowledged.",
    }),
    active: z.boolean().openapi({ description: "The controller still holds for the item (the alarm was not left)." }),
    acknowledged: z.boolean(),
    severity: z.enum(SEVERITIES).openapi({ description: "ISA-18.2's priority, from the controller (critical, high, medium, low)." }),
    source: z.enum(["monitor", "channel"]).openapi({ description: "What raised it: a monitor's job, or a channel's readings (issue 35)." }),
    monitor: z
      .object({ id: z.uuid(), monitorId: z.string(), name: z.string() })
      .nullable()
      .openapi({ description: "The monitor (null for a channel's alarm)." }),
    channel: z
      .object({ id: z.uuid(), channelNumber: z.number().int(), name: z.string() })
      .nullable()
      .openapi({ description: "The channel (null for a monitor's alarm)." }),
    controller: z.string(),
    populationItem: z
      .object({ id: z.uuid(), populationId: z.uuid() })
      .nullable()
      .openapi({ description: "The monitor's population item (null for a channel's alarm)." }),
    asset: z.object({ id: z.string(), name: z.string().nullable(), type: z.enum(ALARM_ASSET_TYPES) }),
    plantId: z.string().nullable().openapi({ description: "The asset's plant (the asset itself for a plant; null for an organization)." }),
    enteredAt: z.string(),
    enteredMonitorJobId: z.uuid().nullable().openapi({ description: "The monitor job that entered it (null for a channel's alarm)." }),
    enteredReadingsBatchId: z
      .uuid()
      .nullable()
      .openapi({ description: "The batch of readings that entered a channel's alarm (its `readings` event's batchId)." }),
    leftAt: z.string().nullable(),
    leftMonitorJobId: z.uuid().nullable(),
    leftReadingsBatchId: z.uuid().nullable(),
    conditions: z.array(ConditionSeenSchema).openapi({ description: "What decided the entry: the conditions with the values seen." }),
    deviationId: z.uuid().nullable(),
    workItemId: z.uuid().nullable(),
    acknowledgement: z
      .object({ at: z.string(), by: Actor.nullable(), comment: z.string().nullable() })
      .nullable()
      .openapi({ description: "Who acknowledged it and when; `by` null: it cleared before alarms could be acknowledged." }),
    assignee: z
      .object({ id: z.string(), name: z.string().nullable(), assignedAt: z.string() })
      .nullable()
      .openapi({ description: "The user (of GET /Users) working on it." }),
    shelving: z
      .object({
        mode: z.enum(["timed", "oneShot"]),
        at: z.string(),
        until: z.string(),
        by: Actor,
        comment: z.string().nullable(),
      })
      .nullable()
      .openapi({
        description:
          "Shelved: its escalations are held; `timed` until `until`, `oneShot` until it clears (at most until `until`). The minute " +
          "cron ends it at `until`.",
      }),
    held: z.boolean().openapi({
      description:
        "Entered while its controller and item were shelved: its actions (deviation, work item, criticality) and its events wait " +
        "for the shelving to end, and run then if it is still active.",
    }),
    escalation: z
      .object({ count: z.number().int(), nextAt: z.string().nullable() })
      .openapi({ description: "How many `escalated` events it has had, and when the next is due (null: none due)." }),
    updatedAt: z.string(),
  })
  .openapi("Alarm");
export type Alarm = z.infer<typeof AlarmSchema>;

export const AlarmWithHistorySchema = AlarmSchema.extend({
  history: z.array(AlarmEventSchema).openapi({
    description:
      "Oldest first: the latest 100 entries (entered, acknowledged, shelved, comments, left...); GET /Alarms/{id}/History pages all.",
  }),
  historyCount: z.number().int().openapi({ description: "How many entries the history has in all." }),
}).openapi("AlarmWithHistory");
export type AlarmWithHistory = z.infer<typeof AlarmWithHistorySchema>;

const comment = z.string().trim().min(1).max(10_000);

export const AcknowledgeBodySchema = z
  .object({ comment: comment.optional().openapi({ description: "Recorded with the acknowledgement in the alarm's history." }) })
  .strict()
  .openapi("AlarmAcknowledgement");

export const AssignBodySchema = z
  .object({
    userId: z.string().trim().min(1).max(200).openapi({ description: "A user of the directory (GET /Users)." }),
    comment: comment.optional(),
  })
  .strict()
  .openapi("AlarmAssignment");

export const CommentBodySchema = z
  .object({ text: comment.openapi({ description: "1 to 10,000 characters." }) })
  .strict()
  .openapi("AlarmComment");

export const UnshelveBodySchema = z.object({ comment: comment.optional() }).strict().openapi("AlarmUnshelving");
export const UnassignBodySchema = z.object({ comment: comment.optional() }).strict().openapi("AlarmUnassignment");

export const ShelveBodySchema = z
  .object({
    until: z.iso.datetime({ offset: true }).optional().openapi({
      description: "Shelved until this time (in the future, at most the monitor's maxShelveMinutes from now).",
      example: "2026-11-28T18:00:00Z",
    }),
    durationMinutes: z.number().int().min(1).optional().openapi({ description: "Or for this many minutes (at most maxShelveMinutes)." }),
    oneShot: z
      .boolean()
      .optional()
      .openapi({
        description:
          "Until the alarm clears (then the shelving ends with it), never longer than `until`, `durationMinutes` or, without either, the " +
          "monitor's maxShelveMinutes. Default false: timed, and an alarm its controller enters again for the item meanwhile is held.",
      }),
    comment: comment.optional().openapi({ description: "Why (recorded in the history)." }),
  })
  .strict()
  .openapi("AlarmShelving");
