/** API shapes of model definitions (spec 2.8): an image by name and version, in the container registry or external. */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";

export const LOCATIONS = ["ACR", "External"] as const;
export type Location = (typeof LOCATIONS)[number];

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
