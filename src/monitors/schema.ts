/** API shapes of models and monitors (spec 2.8). */
import { z } from "@hono/zod-openapi";
import { resourceBody, updateBodyOf } from "../pkg/resource";
import { PersonSchema } from "../work/common";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";

export const LOCATIONS = ["ACR", "External"] as const;
export const STATUSES = ["Draft", "Active", "Deprecated"] as const;
export const ASSET_TYPES = ["Plant", "MainSystem", "Organization", "Equipment"] as const;
export type AssetType = (typeof ASSET_TYPES)[number];
/** The asset catalogue's kind of each population asset type. */
export const ASSET_KIND_OF: Record<AssetType, string> = { Plant: "plant", MainSystem: "mainSystem", Organization: "organization", Equipment: "equipment" };
export const GPU_SKUS = ["K80"] as const;
export const OPERATORS = ["LessThan", "LessThanOrEqual", "GreaterThen", "GreaterThanOrEqual", "Equal"] as const;
export const MONITOR_JOB_STATUSES = ["Unknown", "Started", "InProgress", "Failed", "Succeeded"] as const;
export type MonitorJobStatus = (typeof MONITOR_JOB_STATUSES)[number];

const params = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "an environment variable name"), z.string().max(8192));
const name = z.string().trim().min(1).max(200);

export const ModelDefinitionSchema = z
  .object({ id: z.uuid(), name: z.string(), version: z.string(), uri: z.string().nullable(), location: z.enum(LOCATIONS), createdDate: z.string() })
  .openapi("ModelDefinition");
const definitionFields = {
  name: z.string().trim().min(1).max(200).regex(/^[^:\s]+$/, "an image name without a tag"),
  version: z.string().trim().min(1).max(128).regex(/^[^:\s]+$/, "an image tag"),
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

export const PopulationItemSchema = z
  .object({
    id: z.uuid(),
    populationId: z.uuid(),
    assetReference: z.object({ id: z.string(), name: z.string().nullable() }),
    criticality: z.number().nullable(),
    band: z.enum(["green", "yellow", "red"]).nullable().openapi({ description: "0–59 green, 60–79 yellow, 80–100 red; null without a criticality." }),
    lastMonitorJobId: z.uuid().nullable(),
  })
  .openapi("PopulationItem");
export const PopulationSchema = z
  .object({ id: z.uuid(), name: z.string(), description: z.string().nullable(), assetType: z.enum(ASSET_TYPES), items: z.array(PopulationItemSchema) })
  .openapi("Population");
export const CreatePopulationSchema = z.object({ name, description: z.string().max(4000).nullable().default(null), assetType: z.enum(ASSET_TYPES) }).strict().openapi("CreatePopulation");
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
    typeId: z.uuid().openapi({ description: "The entity type whose linked property definitions (application rule Model) the properties follow." }),
    properties: z.array(z.object({ name: z.string(), value: z.unknown() })).openapi({ description: "Values of the Model properties linked to the type." }),
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
  typeId: z.uuid().optional().openapi({ description: `An entity type for Model (or every kind). Default: General (${DEFAULT_ENTITY_TYPE_ID}).` }),
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
    operator: z.enum([...OPERATORS, "GreaterThan"]).openapi({ description: "GreaterThen is the spec's spelling; GreaterThan is accepted and stored as GreaterThen." }),
    comparisonValue: z.number(),
  })
  .strict();
export const ControllerSchema = z.object({ name: z.string().trim().min(1).max(200), conditions: z.array(ConditionSchema).max(50) }).strict().openapi("Controller");
export const TriggerEventSchema = z
  .discriminatedUnion("kind", [
    z.object({ kind: z.literal("fileProcessed"), dataTypeId: z.string().min(1).max(100) }).strict(),
    z.object({ kind: z.literal("deviationChanged") }).strict(),
  ])
  .nullable()
  .openapi("TriggerEvent", {
    description: "`fileProcessed`: a file of `dataTypeId` reached status processed. `deviationChanged`: a deviation on an asset of one of the monitor's populations was created or changed.",
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
    inherited: z.object({ cpuCores: z.boolean(), memory: z.boolean(), gpuCores: z.boolean(), gpuSku: z.boolean(), configurableParameters: z.boolean() }).openapi({
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
  configurableParameters: params.nullable().default(null).openapi({ description: "Null: inherited from the model; an object overrides it whole." }),
  staticParameters: z.unknown().optional().openapi({ description: "Never accepted: static parameters come from the model and cannot be overridden." }),
  controllers: z.array(ControllerSchema).max(50).default([]),
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
    schema: z.union([z.uuid(), z.object({ id: z.uuid() }).loose()]).openapi({ description: "The model: its id, or an object with its id." }),
    convert: (value: unknown) => (typeof value === "string" ? value : (value as { id: string }).id),
  },
};
export const CreateMonitorSchema = resourceBody(monitorFields, "CreateMonitor", { spellings: monitorSpellings });
export const UpdateMonitorSchema = updateBodyOf(MonitorSchema, monitorFields, "UpdateMonitor", { monitorId: "the MON number", inherited: "send a value to override the model's" }, monitorSpellings);

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
    statusToken: z.string().optional().openapi({ description: "External models only, in the answer of the execution: the bearer token that may set this monitor's job statuses." }),
  })
  .openapi("MonitorJob");

export function bandOf(criticality: number | null): "green" | "yellow" | "red" | null {
  if (criticality === null) return null;
  return criticality >= 80 ? "red" : criticality >= 60 ? "yellow" : "green";
}
