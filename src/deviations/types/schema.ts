/**
 * Deviation types (spec 2.3): entity types whose appliesTo is deviationType, plus the default type
 * General, which every deviation without a type gets.
 */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import {
  DefinitionLinkInputSchema,
  IconSchema,
  LinkedDefinitionSchema,
  MAX_LINKED_DEFINITIONS,
  MetadataSchema,
} from "../../properties/entity-types/schema";

const LinkedPropertySchema = z.object({ name: z.string(), value: z.unknown() }).openapi("DeviationTypeProperty");

export const DeviationTypeSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    icon: IconSchema.nullable(),
    isDefault: z
      .boolean()
      .openapi({ description: "General: chosen when a deviation names no type. It accepts definitions of every rule." }),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    propertyDefinitions: z.array(LinkedDefinitionSchema).openapi({
      description:
        "Linked definitions in order: deviationType definitions (the type's own properties) and Deviation definitions " +
        "(the properties its deviations carry).",
    }),
    properties: z
      .array(LinkedPropertySchema)
      .openapi({ description: "The values of the linked deviationType definitions, in link order." }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("DeviationType");

export type DeviationType = z.infer<typeof DeviationTypeSchema>;

const PropertyInput = z.object({ name: z.string().min(1).max(100), value: z.unknown().optional() }).strict();

const fields = {
  name: z.string().trim().min(1).max(200).openapi({ description: "Unique among all entity types (case-insensitive)." }),
  description: z.string().trim().max(2000).nullable().default(null),
  icon: IconSchema.nullable().default(null).openapi({ description: "name: an icon key agreed with the frontend; color: #RGB or #RRGGBB." }),
  metadata: MetadataSchema,
  propertyDefinitions: z
    .array(DefinitionLinkInputSchema)
    .max(MAX_LINKED_DEFINITIONS)
    .default([])
    .openapi({
      description:
        "Definitions to link, by id, in order (replaces the links). Accepted application rules: deviationType (also " +
        "spelled deviatioType) and Deviation; " +
        "General accepts every rule. At most one may have metadata.displayNameField = true.",
    }),
  properties: z.array(PropertyInput).max(MAX_LINKED_DEFINITIONS).default([]).openapi({
    description: "Values of the linked deviationType definitions: [{name, value}]. Missing ones take their default (or null).",
  }),
};

export const CreateDeviationTypeSchema = z.object(fields).strict().openapi("CreateDeviationType");
export const UpdateDeviationTypeSchema = updateBodyOf(DeviationTypeSchema, fields, "UpdateDeviationType", {
  appliesTo: "always deviationType; null for General",
});

export type DeviationTypeInput = z.infer<typeof CreateDeviationTypeSchema>;
