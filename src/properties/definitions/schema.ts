import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { listQueryShape } from "../../pkg/query";
import { APPLICATION_RULE_INPUTS, APPLICATION_RULES, ENTITY_TYPES, FORMATS, LIMITS, UNITS } from "./rules";

const Reference = z.object({ id: z.uuid(), name: z.string() });

export const PropertyDefinitionSchema = z
  .object({
    id: z.uuid(),
    name: z.string().openapi({
      description: "Unique and immutable. Entities and value expressions refer to the property by it.",
      example: "wallThickness",
    }),
    format: z.enum(FORMATS),
    regex: z
      .string()
      .nullable()
      .openapi({
        description:
          "Text format only. JavaScript syntax, tested unanchored, without flags (use ^ and $ for a full match), in " +
          "linear time on RE2: backreferences and lookaround are refused (400).",
      }),
    regexErrorMessage: z.string().nullable().openapi({ description: "Shown as the error message when a text value does not match regex." }),
    unit: z.enum(UNITS).nullable().openapi({ description: "Set exactly for the integer and decimal formats." }),
    classification: Reference.nullable().openapi({ description: "Set exactly for the classification format." }),
    entityType: z
      .enum(ENTITY_TYPES)
      .nullable()
      .openapi({ description: "Set exactly for the entity format; only identity (object owners) exists." }),
    isMultiselect: z.boolean().openapi({ description: "Entity format only: the value is an array of object owners." }),
    applicationRule: z.enum(APPLICATION_RULES),
    required: z.boolean(),
    defaultValue: z
      .unknown()
      .openapi({ description: "The value used when a linked value is null, in the property's format; null when none." }),
    valueExpression: z
      .string()
      .nullable()
      .openapi({ description: "Body of a JavaScript function (with a return) computing the value from the entity's other properties." }),
    instruction: z.string().nullable(),
    hasInstructionImage: z.boolean().openapi({ description: "Whether an instruction image was set (separate endpoints)." }),
    metadata: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: "Free JSON. Known keys: visibleByDefault, isMultiLine, displayNameField." }),
    category: Reference,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("PropertyDefinition");

export type PropertyDefinition = z.infer<typeof PropertyDefinitionSchema>;

/** A reference in a request; `name` is read-only and ignored, so a read object can be sent back as is. */
const ReferenceInput = z.object({ id: z.uuid(), name: z.string().optional().openapi({ description: "Read-only; ignored." }) }).strict();

const writableFields = {
  name: z.string().min(1).max(LIMITS.nameLength).openapi({
    description: "A letter or _, then letters, digits or _ (it is a variable name in value expressions and a term in filters).",
    example: "wallThickness",
  }),
  format: z.enum(FORMATS),
  regex: z.string().max(LIMITS.regexLength).nullish(),
  regexErrorMessage: z.string().max(LIMITS.regexErrorMessageLength).nullish(),
  unit: z.enum(UNITS).nullish(),
  classification: ReferenceInput.nullish(),
  entityType: z.enum(ENTITY_TYPES).nullish(),
  isMultiselect: z.boolean().nullish(),
  applicationRule: z
    .enum(APPLICATION_RULE_INPUTS)
    .openapi({ description: "The spelling deviatioType is accepted and stored as deviationType." }),
  required: z.boolean().nullish(),
  defaultValue: z
    .unknown()
    .optional()
    .openapi({ description: "In the property's format; null or absent for none. Not allowed with required = true." }),
  valueExpression: z
    .string()
    .nullish()
    .openapi({ description: `At most ${LIMITS.valueExpressionBytes} bytes; must contain a return statement.` }),
  instruction: z.string().max(LIMITS.instructionLength).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  category: ReferenceInput.nullish().openapi({ description: "Null or absent: the default category (Ungrouped)." }),
};

export const CreatePropertyDefinitionSchema = z.object(writableFields).strict().openapi("CreatePropertyDefinition");

export const UpdatePropertyDefinitionSchema = updateBodyOf(PropertyDefinitionSchema, writableFields, "UpdatePropertyDefinition");

export type CreatePropertyDefinition = z.infer<typeof CreatePropertyDefinitionSchema>;
export type UpdatePropertyDefinition = z.infer<typeof UpdatePropertyDefinitionSchema>;

const csv = (description: string) =>
  z
    .string()
    .optional()
    .openapi({ description: `${description} Comma-separated.` });

const { ids, excludeIds, skip, take, includeTotal } = listQueryShape;

export const ListPropertyDefinitionsQuery = z.object({
  ids,
  excludeIds,
  searchText: z.string().optional().openapi({ description: "Case-insensitive (ASCII) substring of the name." }),
  applicationRules: csv("Only these application rules (deviatioType is read as deviationType)."),
  formats: csv("Only these formats."),
  categoryIds: csv("Only definitions in these categories."),
  order: z
    .string()
    .optional()
    .openapi({
      description:
        "Comma-separated `{field} [asc|desc]` terms over name, format, applicationRule, createdAt, updatedAt and category.name. " +
        "Default: name asc; ties are broken by id.",
      example: "category.name asc, name desc",
    }),
  skip,
  take,
  includeTotal,
});

export type ListPropertyDefinitionsParams = z.infer<typeof ListPropertyDefinitionsQuery>;
