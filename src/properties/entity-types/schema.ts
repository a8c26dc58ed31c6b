import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { APPLICATION_RULE_INPUTS, APPLICATION_RULES, FORMATS } from "../definitions/rules";
import { hexColor } from "../classifications/schema";

/** The default entity type, General, seeded by migrations/0001_defaults.sql: every entity naming no type gets it. */
export const DEFAULT_ENTITY_TYPE_ID = "00000000-0000-4000-8000-000000000001";

/** Most definitions one entity type links. */
export const MAX_LINKED_DEFINITIONS = 200;
/** Largest metadata object, in bytes of its JSON. */
export const MAX_METADATA_BYTES = 64 * 1024;

export const IconSchema = z
  .object({
    name: z.string().trim().min(1).max(100).openapi({ description: "The key of an icon agreed with the frontend.", example: "corrosion" }),
    color: hexColor,
  })
  .strict()
  .openapi("Icon");

export const LinkedDefinitionSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    format: z.enum(FORMATS),
    applicationRule: z.enum(APPLICATION_RULES),
    required: z.boolean(),
  })
  .openapi("EntityTypePropertyDefinition");

export type LinkedDefinition = z.infer<typeof LinkedDefinitionSchema>;

export const EntityTypeSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    appliesTo: z.enum(APPLICATION_RULES).nullable().openapi({
      description: "The application rule of the definitions this type may link; null (General) accepts every rule.",
    }),
    icon: IconSchema.nullable(),
    isDefault: z
      .boolean()
      .openapi({ description: "General is the default type: chosen when an entity names none. It can be renamed and stays the default." }),
    metadata: z.record(z.string(), z.unknown()).nullable().openapi({ description: "Free JSON object." }),
    propertyDefinitions: z.array(LinkedDefinitionSchema).openapi({ description: "The linked property definitions, in their order." }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("EntityType");

export type EntityType = z.infer<typeof EntityTypeSchema>;

/** A link in a request: only `id` counts; the other fields of a read are accepted and ignored. */
export const DefinitionLinkInputSchema = z
  .object({
    id: z.uuid(),
    name: z.string().optional(),
    format: z.string().optional(),
    applicationRule: z.string().optional(),
    required: z.boolean().optional(),
  })
  .strict()
  .openapi("EntityTypePropertyDefinitionLink");

/** Free metadata of an entity (entity types, deviations, templates, assets, ...), bounded in size. */
export const MetadataSchema = z
  .record(z.string(), z.unknown())
  .nullable()
  .default(null)
  .refine((value) => value === null || new TextEncoder().encode(JSON.stringify(value)).length <= MAX_METADATA_BYTES, {
    message: `metadata is limited to ${MAX_METADATA_BYTES} bytes of JSON.`,
    params: { rule: "maxSize" },
  })
  .openapi({ description: "Free JSON object, not validated." });

const fields = {
  name: z.string().trim().min(1).max(200).openapi({ description: "Unique (case-insensitive)." }),
  description: z.string().trim().max(2000).nullable().default(null),
  appliesTo: z
    .enum(APPLICATION_RULE_INPUTS)
    .nullable()
    .default(null)
    .openapi({
      description:
        "Null: definitions of any rule may be linked (only the default type, General, must keep null). deviatioType is " +
        "read as deviationType.",
    }),
  icon: IconSchema.nullable().default(null),
  metadata: MetadataSchema,
  propertyDefinitions: z
    .array(DefinitionLinkInputSchema)
    .max(MAX_LINKED_DEFINITIONS)
    .default([])
    .openapi({ description: "The definitions to link, in order, by id (the list replaces the current links). Each must fit appliesTo." }),
};

export const CreateEntityTypeSchema = z.object(fields).strict().openapi("CreateEntityType");
export const UpdateEntityTypeSchema = updateBodyOf(EntityTypeSchema, fields, "UpdateEntityType");

export type EntityTypeInput = z.infer<typeof CreateEntityTypeSchema>;
