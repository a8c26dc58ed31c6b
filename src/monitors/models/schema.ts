/**
 * API shapes of models (spec 2.8), and the fields a monitor shares with its model: the statuses,
 * the resources and the parameters (names checked as the environment of the monitor's jobs).
 */
import { z } from "@hono/zod-openapi";
import { resourceBody, updateBodyOf } from "../../pkg/resource";
import { PersonSchema } from "../../work/common";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import { variableProblems, VARIABLE_NAME } from "../../dataprocessing/environment";
import { MONITOR_JOB_VARIABLES } from "../monitor-jobs/schema";
import { PopulationSchema } from "../populations/schema";

/** The statuses of models and monitors. */
export const STATUSES = ["Draft", "Active", "Deprecated"] as const;
export type Status = (typeof STATUSES)[number];
export const GPU_SKUS = ["K80"] as const;

/**
 * Model and monitor parameters become the environment of the monitor's jobs: the rule of job configs'
 * run options (src/dataprocessing/environment.ts), and the names a monitor job gets from the service
 * are refused too, so a parameter is never silently replaced.
 */
export const params = z
  .record(z.string().regex(VARIABLE_NAME, "an environment variable name"), z.string().max(8192))
  .superRefine((variables, ctx) => {
    for (const { name, rule, message } of variableProblems(variables, "a parameter", Object.values(MONITOR_JOB_VARIABLES))) {
      // A name that is no variable name is the key schema's own issue.
      if (rule !== "pattern") ctx.addIssue({ code: "custom", path: [name], message, params: { rule } });
    }
  });
/** The name of a model or monitor. */
export const name = z.string().trim().min(1).max(200);

/** The resources a model gives its monitors' jobs (a monitor may override them). */
export const resources = {
  cpuCores: z.number().positive().max(64),
  memory: z.number().positive().max(1024).openapi({ description: "GiB." }),
  gpuCores: z.number().int().min(0).max(16).nullable().default(null),
  gpuSku: z.enum(GPU_SKUS).nullable().default(null),
};

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
