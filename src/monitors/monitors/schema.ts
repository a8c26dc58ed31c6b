/** API shapes of monitors (spec 2.8): a model run on a schedule, an event or on demand, with controllers over its populations' items. */
import { z } from "@hono/zod-openapi";
import { resourceBody, updateBodyOf } from "../../pkg/resource";
import { PersonSchema } from "../../work/common";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import { GPU_SKUS, name, params, resources, STATUSES } from "../models/schema";
import { PopulationSchema } from "../populations/schema";
import { SEVERITIES } from "../alarms/severity";

/** A shift: how long an alarm may be shelved unless its monitor says otherwise (ISA-18.2 asks for a limit). */
export const DEFAULT_MAX_SHELVE_MINUTES = 480;

export const OPERATORS = ["LessThan", "LessThanOrEqual", "GreaterThen", "GreaterThanOrEqual", "Equal"] as const;
const ConditionSchema = z
  .object({
    variableName: z.string().trim().min(1).max(200),
    operator: z
      .enum([...OPERATORS, "GreaterThan"])
      .openapi({ description: "GreaterThen is the spec's spelling; GreaterThan is accepted and stored as GreaterThen." }),
    comparisonValue: z.number(),
    deadband: z
      .number()
      .min(0)
      .optional()
      .openapi({
        description:
          "Hysteresis on the limit (issue 33): once the alarm is active, the condition keeps holding until the value is past the " +
          "limit by more than this, towards normal (GreaterThen 7.1 with deadband 0.5 clears at 6.6 or below; Equal: within the " +
          "deadband of the value). Default 0.",
      }),
  })
  .strict();
const PropertyValueInput = z.object({ name: z.string().min(1).max(100), value: z.unknown().optional() }).strict();
/** What happens when a controller's alarm is entered; each action optional (issue 25). */
const ControllerActionsSchema = z
  .object({
    raiseDeviation: z
      .object({
        typeId: z
          .uuid()
          .optional()
          .openapi({ description: `A deviation type (GET /DeviationTypes). Default: General (${DEFAULT_ENTITY_TYPE_ID}).` }),
        status: z
          .string()
          .trim()
          .min(1)
          .max(100)
          .optional()
          .openapi({ description: "A system status name or a user status id. Default: new." }),
        properties: z
          .array(PropertyValueInput)
          .max(200)
          .optional()
          .openapi({ description: "Values of the Deviation properties linked to the type, checked as any deviation's." }),
      })
      .strict()
      .nullable()
      .optional()
      .openapi({ description: "Raise a deviation on the item's asset, its origin the monitor, the controller and the monitor job." }),
    createWorkItem: z
      .object({ workTemplateId: z.uuid().openapi({ description: "The work template (latest revision) the work item is based on." }) })
      .strict()
      .nullable()
      .optional()
      .openapi({
        description: "Create a work item from a work template on the item's asset; linked to the raised deviation when there is one.",
      }),
    setCriticality: z
      .object({ value: z.number().min(0).max(100) })
      .strict()
      .nullable()
      .optional()
      .openapi({ description: "Set the item's criticality (0 to 100); with several alarms entered at once, the highest." }),
  })
  .strict()
  .openapi("ControllerActions");
export const ControllerSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .openapi({ description: "Unique within the monitor: an alarm is kept per population item and controller name." }),
    conditions: z
      .array(ConditionSchema)
      .max(50)
      .openapi({
        description:
          "The controller holds for an item when every condition holds; a variable the model did not report makes its " +
          "condition not hold. No conditions: never holds.",
      }),
    alarmOnNoData: z
      .boolean()
      .optional()
      .openapi({ description: "When true, a condition variable the model did not report for an item is itself an alarm. Default false." }),
    severity: z
      .enum(SEVERITIES)
      .optional()
      .openapi({
        description:
          "The alarm's priority, as ISA-18.2's: critical, high, medium, low. Shown on every alarm, in lists, events and webhooks; " +
          "the board orders by it. Default medium.",
      }),
    pendingFor: z.number().int().min(1).max(100).optional().openapi({
      description:
        "Chattering: the controller must hold this many consecutive evaluations before the alarm is entered. Default 1 (the first).",
    }),
    clearAfter: z.number().int().min(1).max(100).optional().openapi({
      description: "Chattering: an active alarm is left after this many consecutive evaluations not holding. Default 1 (the first).",
    }),
    escalation: z
      .object({
        afterMinutes: z
          .number()
          .int()
          .min(1)
          .max(10_080)
          .openapi({ description: "An alarm still unacknowledged this long after it was entered emits `escalated`." }),
        repeatMinutes: z
          .number()
          .int()
          .min(1)
          .max(10_080)
          .optional()
          .openapi({ description: "Then again at this interval, until it is acknowledged or cleared. Default afterMinutes." }),
      })
      .strict()
      .nullable()
      .optional()
      .openapi({
        description:
          "Escalation (issue 33): `escalated` events for an unacknowledged alarm, so a webhook receiver can page the next person. " +
          "Checked by the minute cron; held while the alarm is shelved.",
      }),
    actions: ControllerActionsSchema.optional(),
    onLeave: z
      .object({
        deviationStatus: z
          .string()
          .trim()
          .min(1)
          .max(100)
          .optional()
          .openapi({ description: "Set on the deviation the alarm raised when the alarm is left; absent: the deviation stays as it is." }),
      })
      .strict()
      .optional(),
  })
  .strict()
  .openapi("Controller", {
    description:
      "The spec's Name and Conditions; alarmOnNoData, actions and onLeave are optional (issue 25), and so are severity, " +
      "pendingFor, clearAfter, escalation and a condition's deadband (issue 33).",
  });
export type Controller = z.infer<typeof ControllerSchema>;
const TriggerEventSchema = z
  .discriminatedUnion("kind", [
    z.object({ kind: z.literal("fileProcessed"), dataTypeId: z.string().min(1).max(100) }).strict(),
    z.object({ kind: z.literal("deviationChanged") }).strict(),
  ])
  .nullable()
  .openapi("TriggerEvent", {
    description:
      "`fileProcessed`: a file of `dataTypeId` reached status processed. `deviationChanged`: a deviation on an asset " +
      "of one of the monitor's populations was created or changed.",
  });

export const MonitorSchema = z
  .object({
    id: z.uuid(),
    monitorId: z.string().openapi({ example: "MON-3" }),
    name: z.string(),
    modelId: z.uuid().openapi({ description: "The model's id (its MOD number is `model.modelId`)." }),
    model: z.object({ id: z.uuid(), modelId: z.string(), name: z.string() }),
    status: z.enum(STATUSES),
    triggerSchedule: z.string().nullable(),
    timeZone: z.string().nullable(),
    nextRunAt: z.string().nullable(),
    triggerEvent: TriggerEventSchema,
    instructions: z.string().nullable(),
    cpuCores: z.number(),
    memory: z.number(),
    gpuCores: z.number().nullable(),
    gpuSku: z.string().nullable(),
    configurableParameters: z.record(z.string(), z.string()),
    inherited: z
      .object({
        cpuCores: z.boolean(),
        memory: z.boolean(),
        gpuCores: z.boolean(),
        gpuSku: z.boolean(),
        configurableParameters: z.boolean(),
      })
      .openapi({
        description: "Which effective values come from the model (true) or are overridden by the monitor (false).",
      }),
    controllers: z.array(ControllerSchema),
    maxShelveMinutes: z.number().int().openapi({
      description: "The longest a person may shelve one of this monitor's alarms, in minutes (issue 33). Default 480 (a shift).",
    }),
    objectOwner: PersonSchema,
    populations: z.array(PopulationSchema),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Monitor");
const monitorFields = {
  name,
  modelId: z.uuid(),
  status: z.enum(STATUSES).default("Draft"),
  triggerSchedule: z.string().trim().min(1).max(200).nullable().default(null),
  timeZone: z.string().trim().min(1).max(64).nullable().default(null),
  triggerEvent: TriggerEventSchema.default(null),
  instructions: z.string().max(10_000).nullable().default(null),
  cpuCores: resources.cpuCores.nullable().default(null).openapi({ description: "Null: inherited from the model." }),
  memory: resources.memory.nullable().default(null),
  gpuCores: z.number().int().min(0).max(16).nullable().default(null),
  gpuSku: z.enum(GPU_SKUS).nullable().default(null),
  configurableParameters: params
    .nullable()
    .default(null)
    .openapi({ description: "Null: inherited from the model; an object overrides it whole." }),
  staticParameters: z
    .unknown()
    .optional()
    .openapi({ description: "Never accepted: static parameters come from the model and cannot be overridden." }),
  controllers: z.array(ControllerSchema).max(200).default([]).openapi({ description: "At most 200; names unique." }),
  maxShelveMinutes: z
    .number()
    .int()
    .min(1)
    .max(43_200)
    .default(DEFAULT_MAX_SHELVE_MINUTES)
    .openapi({ description: "The longest a person may shelve one of this monitor's alarms: 1 minute to 30 days. Default 480 (a shift)." }),
  objectOwner: PersonSchema.nullable().optional(),
};
/**
 * Other spellings a monitor takes: the spec's `GPUSKU`, and its `Model*` (2.8): the model as an object
 * with its id (what a GET answers in `model`) or as the id itself. Answers say `gpuSku` and `modelId`.
 */
const monitorSpellings = {
  GPUSKU: { of: "gpuSku", schema: monitorFields.gpuSku },
  model: {
    of: "modelId",
    schema: z
      .union([z.uuid(), z.object({ id: z.uuid() }).loose()])
      .openapi({ description: "The model: its id, or an object with its id." }),
    convert: (value: unknown) => (typeof value === "string" ? value : (value as { id: string }).id),
  },
};
export const CreateMonitorSchema = resourceBody(monitorFields, "CreateMonitor", { spellings: monitorSpellings });
export const UpdateMonitorSchema = updateBodyOf(
  MonitorSchema,
  monitorFields,
  "UpdateMonitor",
  { monitorId: "the MON number", inherited: "send a value to override the model's" },
  monitorSpellings,
);
