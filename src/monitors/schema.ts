/** API shapes of models and monitors (spec 2.8). */
import { z } from "@hono/zod-openapi";
import { resourceBody, updateBodyOf } from "../pkg/resource";
import { PersonSchema } from "../work/common";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";
import { variableProblems, VARIABLE_NAME } from "../dataprocessing/environment";

export const LOCATIONS = ["ACR", "External"] as const;
export const STATUSES = ["Draft", "Active", "Deprecated"] as const;
export const ASSET_TYPES = ["Plant", "MainSystem", "Organization", "Equipment"] as const;
export type AssetType = (typeof ASSET_TYPES)[number];
/** The asset catalogue's kind of each population asset type. */
export const ASSET_KIND_OF: Record<AssetType, string> = {
  Plant: "plant",
  MainSystem: "mainSystem",
  Organization: "organization",
  Equipment: "equipment",
};
export const GPU_SKUS = ["K80"] as const;
export const OPERATORS = ["LessThan", "LessThanOrEqual", "GreaterThen", "GreaterThanOrEqual", "Equal"] as const;
export const MONITOR_JOB_STATUSES = ["Unknown", "Started", "InProgress", "Failed", "Succeeded"] as const;
export type MonitorJobStatus = (typeof MONITOR_JOB_STATUSES)[number];

/**
 * The variables the service adds to a monitor job's environment besides a job's own (`jobId`,
 * `INTEGRITY_EDGE_*`): the monitor's number and its population (src/monitors/jobs.ts).
 */
export const MONITOR_JOB_VARIABLES = {
  monitorId: "monitorId",
  populationAssetCount: "populationAssetCount",
  populationAssetIdsPath: "populationAssetIdsPath",
  populationAssetIds: "populationAssetIds",
} as const;

/**
 * Model and monitor parameters become the environment of the monitor's jobs: the rule of job configs'
 * run options (src/dataprocessing/environment.ts), and the names a monitor job gets from the service
 * are refused too, so a parameter is never silently replaced.
 */
const params = z
  .record(z.string().regex(VARIABLE_NAME, "an environment variable name"), z.string().max(8192))
  .superRefine((variables, ctx) => {
    for (const { name, rule, message } of variableProblems(variables, "a parameter", Object.values(MONITOR_JOB_VARIABLES))) {
      // A name that is no variable name is the key schema's own issue.
      if (rule !== "pattern") ctx.addIssue({ code: "custom", path: [name], message, params: { rule } });
    }
  });
const name = z.string().trim().min(1).max(200);

export const ModelDefinitionSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    version: z.string(),
    uri: z.string().nullable(),
    location: z.enum(LOCATIONS),
    createdDate: z.string(),
  })
  .openapi("ModelDefinition");
const definitionFields = {
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[^:\s]+$/, "an image name without a tag"),
  version: z
    .string()
    .trim()
    .min(1)
    .max(128)
    .regex(/^[^:\s]+$/, "an image tag"),
  uri: z.url().max(2000).nullable().default(null),
  location: z.enum(LOCATIONS),
};
export const CreateModelDefinitionSchema = z.object(definitionFields).strict().openapi("CreateModelDefinition");
export const UpdateModelDefinitionSchema = updateBodyOf(ModelDefinitionSchema, definitionFields, "UpdateModelDefinition");

const resources = {
  cpuCores: z.number().positive().max(64),
  memory: z.number().positive().max(1024).openapi({ description: "GiB." }),
  gpuCores: z.number().int().min(0).max(16).nullable().default(null),
  gpuSku: z.enum(GPU_SKUS).nullable().default(null),
};

/** An alarm a population item is in now (issue 25): entered by a monitor job, not left yet. */
export const ActiveAlarmSchema = z
  .object({
    id: z.uuid(),
    controller: z.string(),
    enteredAt: z.string(),
    monitorJobId: z.uuid().openapi({ description: "The monitor job that entered it." }),
    deviationId: z.uuid().nullable().openapi({ description: "The deviation its controller raised, if any." }),
    workItemId: z.uuid().nullable().openapi({ description: "The work item its controller created, if any." }),
  })
  .openapi("ActiveAlarm");
export const PopulationItemSchema = z
  .object({
    id: z.uuid(),
    populationId: z.uuid(),
    assetReference: z.object({ id: z.string(), name: z.string().nullable() }),
    criticality: z.number().nullable(),
    band: z
      .enum(["green", "yellow", "red"])
      .nullable()
      .openapi({ description: "0–59 green, 60–79 yellow, 80–100 red; null without a criticality." }),
    lastMonitorJobId: z.uuid().nullable(),
    alarms: z.array(ActiveAlarmSchema).openapi({
      description: "The controllers in alarm for this item now (a monitor's items; always empty for a model's). Empty: normal.",
    }),
  })
  .openapi("PopulationItem");
export const AlarmHistoryEntrySchema = z
  .object({
    id: z.uuid(),
    alarmId: z.uuid(),
    controller: z.string(),
    action: z.enum(["entered", "left"]),
    monitorJobId: z.uuid(),
    conditions: z
      .array(
        z.object({
          variableName: z.string(),
          operator: z.string(),
          comparisonValue: z.number(),
          value: z.number().nullable(),
          holds: z.boolean(),
        }),
      )
      .openapi({ description: "The controller's conditions with the values the job reported (null: not reported): what decided it." }),
    recordedAt: z.string(),
    deviationId: z.uuid().nullable(),
    workItemId: z.uuid().nullable(),
  })
  .openapi("AlarmHistoryEntry");
export const PopulationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    assetType: z.enum(ASSET_TYPES),
    items: z.array(PopulationItemSchema),
  })
  .openapi("Population");
export const CreatePopulationSchema = z
  .object({ name, description: z.string().max(4000).nullable().default(null), assetType: z.enum(ASSET_TYPES) })
  .strict()
  .openapi("CreatePopulation");
export const CreatePopulationItemSchema = z
  .object({ assetReference: z.object({ id: z.string().trim().min(1).max(200), name: z.string().max(200).nullable().optional() }).strict() })
  .strict()
  .openapi("CreatePopulationItem");

export const ModelSchema = z
  .object({
    id: z.uuid(),
    modelId: z.string().openapi({ example: "MOD-12" }),
    name: z.string(),
    description: z.string().nullable(),
    modelDefinitionName: z.string(),
    modelDefinitionVersion: z.string(),
    status: z.enum(STATUSES),
    cpuCores: z.number(),
    memory: z.number(),
    gpuCores: z.number().nullable(),
    gpuSku: z.string().nullable(),
    configurableParameters: z.record(z.string(), z.string()),
    staticParameters: z.record(z.string(), z.string()),
    objectOwner: PersonSchema,
    typeId: z
      .uuid()
      .openapi({ description: "The entity type whose linked property definitions (application rule Model) the properties follow." }),
    properties: z
      .array(z.object({ name: z.string(), value: z.unknown() }))
      .openapi({ description: "Values of the Model properties linked to the type." }),
    populations: z.array(PopulationSchema),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Model");
const modelFields = {
  name,
  description: z.string().max(4000).nullable().default(null),
  modelDefinitionName: z.string().trim().min(1).max(200),
  modelDefinitionVersion: z.string().trim().min(1).max(128),
  status: z.enum(STATUSES).default("Draft"),
  ...resources,
  configurableParameters: params.default({}),
  staticParameters: params.default({}),
  objectOwner: PersonSchema.nullable().optional(),
  typeId: z
    .uuid()
    .optional()
    .openapi({ description: `An entity type for Model (or every kind). Default: General (${DEFAULT_ENTITY_TYPE_ID}).` }),
  properties: z
    .array(z.object({ name: z.string().min(1).max(100), value: z.unknown().optional() }).strict())
    .max(200)
    .default([])
    .openapi({ description: "Values of the Model properties linked to the type: [{name, value}] (the property model, spec 2.1)." }),
};
/** The spec (2.8) spells the SKU `GPUSKU`; answers say `gpuSku`. */
const gpuSkuSpelling = { GPUSKU: { of: "gpuSku", schema: resources.gpuSku } };
export const CreateModelSchema = resourceBody(modelFields, "CreateModel", { spellings: gpuSkuSpelling });
export const UpdateModelSchema = updateBodyOf(ModelSchema, modelFields, "UpdateModel", { modelId: "the MOD number" }, gpuSkuSpelling);

const ConditionSchema = z
  .object({
    variableName: z.string().trim().min(1).max(200),
    operator: z
      .enum([...OPERATORS, "GreaterThan"])
      .openapi({ description: "GreaterThen is the spec's spelling; GreaterThan is accepted and stored as GreaterThen." }),
    comparisonValue: z.number(),
  })
  .strict();
const PropertyValueInput = z.object({ name: z.string().min(1).max(100), value: z.unknown().optional() }).strict();
/** What happens when a controller's alarm is entered; each action optional (issue 25). */
export const ControllerActionsSchema = z
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
  .openapi("Controller", { description: "The spec's Name and Conditions; alarmOnNoData, actions and onLeave are optional (issue 25)." });
export type Controller = z.infer<typeof ControllerSchema>;
export const TriggerEventSchema = z
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

export const MonitorJobSchema = z
  .object({
    id: z.uuid(),
    monitor: z.object({ id: z.uuid(), monitorId: z.string(), name: z.string() }),
    jobId: z.uuid().nullable().openapi({ description: "The data processing job (ACR models)." }),
    modelDefinitionName: z.string(),
    modelDefinitionVersion: z.string(),
    status: z.enum(MONITOR_JOB_STATUSES),
    parameters: z.record(z.string(), z.string()),
    errorMessage: z.string().nullable(),
    output: z.string().nullable(),
    trigger: z.string(),
    createdDate: z.string(),
    completedDate: z.string().nullable(),
    statusToken: z
      .string()
      .optional()
      .openapi({
        description:
          "External models only, in the answer of the execution: the bearer token that may set this run's status (and read " +
          "the assets it scores), valid until the run ends or is cancelled.",
      }),
  })
  .openapi("MonitorJob");

export function bandOf(criticality: number | null): "green" | "yellow" | "red" | null {
  if (criticality === null) return null;
  return criticality >= 80 ? "red" : criticality >= 60 ? "yellow" : "green";
}
