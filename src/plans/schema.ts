/**
 * Inspection plans (issue 36): recurring work generated from a work template, exactly once per plan,
 * asset and due date. When an item is due is any combination of a calendar rule, an interval from the
 * last completion and a condition (a channel's next inspection date, or its readings passing a value
 * again); the earliest wins.
 */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../pkg/resource";
import { PersonSchema, TagsSchema } from "../work/common";

export const INTERVAL_UNITS = ["days", "weeks", "months", "years"] as const;

export const IntervalSchema = z
  .object({
    count: z.number().int().min(1).max(1000).openapi({ description: "How many units; at least 1.", example: 1 }),
    unit: z.enum(INTERVAL_UNITS),
  })
  .strict()
  .openapi("PlanInterval");
export type Interval = z.infer<typeof IntervalSchema>;

export const CalendarRuleSchema = z
  .object({
    cron: z.string().trim().min(1).max(200).nullable().default(null).openapi({
      description: "A 5-field CRON expression read in the plan's time zone (the rules jobs and monitors use). Or `every`.",
      example: "0 8 1 1,7 *",
    }),
    every: IntervalSchema.nullable()
      .default(null)
      .openapi({ description: "An interval counted in the plan's time zone from its startDate (months keep the day of month)." }),
  })
  .strict()
  .openapi("PlanCalendarRule");

export const FromCompletionRuleSchema = z
  .object({
    every: IntervalSchema.openapi({
      description: "Counted from when the previous generated work item reached `completed` (not from when it was due).",
    }),
  })
  .strict()
  .openapi("PlanFromCompletionRule");

export const ConditionRuleSchema = z
  .discriminatedUnion("kind", [
    z
      .object({
        kind: z.literal("nextInspection"),
        channelId: z.uuid().openapi({ description: "A thickness channel: due at its analysis's next inspection date." }),
      })
      .strict(),
    z
      .object({
        kind: z.literal("readingPasses"),
        channelId: z.uuid(),
        every: z.number().positive().openapi({
          description: "Meter-style: due when the channel's latest reading has grown by this much since the last generated item.",
          example: 5000,
        }),
      })
      .strict(),
  ])
  .openapi("PlanConditionRule");
export type ConditionRule = z.infer<typeof ConditionRuleSchema>;

export const DUE_REASONS = ["calendar", "completion", "condition"] as const;
export type DueReason = (typeof DUE_REASONS)[number];

const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?$/;

export const PlanTargetSchema = z
  .object({
    assetId: z.uuid().nullable().openapi({ description: "The asset; null for a plan that makes one work item for all its assets." }),
    nextDueAt: z.string().nullable().openapi({ description: "The next due date (null: none, e.g. waiting for a completion)." }),
    nextReason: z.enum(DUE_REASONS).nullable(),
    generateAt: z.string().nullable().openapi({ description: "When its work item is generated: the due date minus the lead time." }),
    openWorkItemId: z.uuid().nullable(),
    lastGenerated: z.object({ workItemId: z.uuid(), dueAt: z.string(), generatedAt: z.string() }).nullable(),
    lastCompleted: z.object({ workItemId: z.uuid(), completedAt: z.string() }).nullable(),
  })
  .openapi("InspectionPlanTarget");
export type PlanTarget = z.infer<typeof PlanTargetSchema>;

export const InspectionPlanSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    workTemplateId: z.uuid(),
    assetIds: z.array(z.uuid()),
    itemPer: z.enum(["asset", "plan"]),
    objectOwner: PersonSchema,
    responsible: PersonSchema.nullable(),
    tags: z.array(z.string()),
    properties: z.array(z.object({ name: z.string(), value: z.unknown() })),
    status: z.enum(["active", "suspended"]),
    timeZone: z.string(),
    startDate: z.string(),
    calendar: CalendarRuleSchema.nullable(),
    fromCompletion: FromCompletionRuleSchema.nullable(),
    condition: ConditionRuleSchema.nullable(),
    leadTimeDays: z.number().int(),
    stack: z.boolean(),
    reminderIntervalDays: z.number().int().nullable(),
    targets: z.array(PlanTargetSchema).openapi({ description: "Per asset: the last generated and completed items and the next due date." }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("InspectionPlan");
export type InspectionPlan = z.infer<typeof InspectionPlanSchema>;

export const planFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().trim().max(2000).nullable().default(null),
  workTemplateId: z.uuid().openapi({ description: "The work template; each generated item uses its latest revision at generation time." }),
  assetIds: z.array(z.uuid()).min(1).max(500).openapi({ description: "The assets designated (plants, systems, equipment...)." }),
  itemPer: z
    .enum(["asset", "plan"])
    .default("asset")
    .openapi({ description: "asset: one work item per asset (default); plan: one work item designating all the assets." }),
  objectOwner: PersonSchema.nullable().optional().openapi({ description: "Owner of the plan and its work items. Default: the caller." }),
  responsible: PersonSchema.nullable().default(null).openapi({ description: "Responsible, put in the generated items' metadata." }),
  tags: TagsSchema.openapi({ description: "Tags of the generated items (besides the template's)." }),
  properties: z
    .array(z.object({ name: z.string().min(1).max(200), value: z.unknown().optional() }).strict())
    .max(200)
    .default([])
    .openapi({ description: "Property values of the generated work items (WorkItem-rule definitions of the General type)." }),
  status: z.enum(["active", "suspended"]).default("active").openapi({ description: "suspended: nothing is generated." }),
  timeZone: z.string().trim().min(1).max(100).default("UTC").openapi({ description: "IANA time zone of the calendar and intervals." }),
  startDate: z
    .string()
    .trim()
    .regex(LOCAL_DATE_TIME)
    .optional()
    .openapi({
      description:
        "Local date (or date-time, default 00:00) in timeZone the calendar counts from; the first due date of a from-completion " +
        "plan. Default: the creation day.",
      example: "2027-01-04T08:00",
    }),
  calendar: CalendarRuleSchema.nullable().default(null),
  fromCompletion: FromCompletionRuleSchema.nullable().default(null),
  condition: ConditionRuleSchema.nullable().default(null),
  leadTimeDays: z.number().int().min(0).max(3650).default(0).openapi({
    description: "The work item is generated this many days before its due date (dueDate stays the due date).",
  }),
  stack: z
    .boolean()
    .default(false)
    .openapi({
      description:
        "Calendar plans: true lets a new due date generate while the previous item is open; false (default): at most one open item " +
        "per asset, the next generated when it is completed or cancelled.",
    }),
  reminderIntervalDays: z.number().int().min(1).max(365).nullable().default(null).openapi({
    description: "An overdue generated item is announced again (`overdue` event) at this interval until it is completed.",
  }),
};

export const CreateInspectionPlanSchema = z.object(planFields).strict().openapi("CreateInspectionPlan");
export const UpdateInspectionPlanSchema = updateBodyOf(InspectionPlanSchema, planFields, "UpdateInspectionPlan", {
  targets: "kept by generation",
});
export type PlanInput = z.infer<typeof CreateInspectionPlanSchema>;
