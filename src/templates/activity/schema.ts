import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { PersonSchema, StatusSchema } from "../../work/common";
import { MetadataSchema } from "../../properties/entity-types/schema";
import { OrderSchema } from "../shared";
import { InputReadingInputSchema, InputReadingSchema } from "../../measurements/feed/targets";

export const MAX_INPUT_TEMPLATES = 1000;
export const INPUT_FORMATS = ["text", "boolean", "integer", "decimal", "date"] as const;

export const InputTemplateSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    displayName: z.string().nullable(),
    format: z.enum(INPUT_FORMATS),
    required: z.boolean(),
    order: z.number().int(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    reading: InputReadingSchema.nullable().openapi({
      description: "The channel its values feed as readings (issue 35), or null (docs/decisions.md, 'Inspection feeds the series').",
    }),
  })
  .openapi("InputTemplate");

export const ActivityTemplateSchema = z
  .object({
    id: z.uuid(),
    revision: z.number().int().openapi({ description: "1 for a new template; + 1 each time an edit copies a revision in use." }),
    displayName: z.string(),
    referenceId: z.string().nullable(),
    status: z.string(),
    objectOwner: PersonSchema,
    activityType: z.object({ id: z.uuid(), name: z.string() }).nullable(),
    templateType: z.string().nullable(),
    description: z.string().nullable(),
    inputTemplates: z.array(InputTemplateSchema),
    inUse: z
      .boolean()
      .openapi({ description: "An activity is based on this revision (or a work item used it): the next edit creates revision + 1." }),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime().openapi({ description: "When this revision was created." }),
    updatedAt: z.iso.datetime(),
  })
  .openapi("ActivityTemplate");

export type ActivityTemplate = z.infer<typeof ActivityTemplateSchema>;

export const InputTemplateInputSchema = z
  .object({
    id: z.uuid().optional().openapi({ description: "Keep this id (e.g. one read before); new when absent." }),
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .openapi({ description: "Unique within the activity template (ignoring case); names the input on each activity." }),
    displayName: z.string().trim().max(200).nullable().default(null),
    format: z.enum(INPUT_FORMATS),
    required: z.boolean().default(false),
    order: OrderSchema,
    metadata: MetadataSchema,
    reading: InputReadingInputSchema,
  })
  .strict()
  .openapi("InputTemplateInput");

export type InputTemplateInput = z.infer<typeof InputTemplateInputSchema>;
export const InputTemplateListInputSchema = z.array(InputTemplateInputSchema).max(MAX_INPUT_TEMPLATES).openapi("InputTemplateList");

const fields = {
  displayName: z.string().trim().min(1).max(200),
  referenceId: z.string().trim().min(1).max(100).nullable().default(null),
  status: StatusSchema.default("new"),
  objectOwner: PersonSchema.nullable().optional().openapi({ description: "Default: the caller on create, unchanged on update." }),
  activityType: z
    .object({ id: z.uuid(), name: z.string().optional().openapi({ description: "Read-only; ignored." }) })
    .strict()
    .nullable()
    .default(null)
    .openapi({ description: "The activity type (GET /ActivityTypes), by id; null for none." }),
  templateType: z.string().trim().min(1).max(100).nullable().default(null),
  description: z.string().trim().max(4000).nullable().default(null),
  metadata: MetadataSchema,
  inputTemplates: InputTemplateListInputSchema.optional().openapi({
    description: "When given, replaces the list; when absent, the list is kept (update) or empty (create).",
  }),
};

export const CreateActivityTemplateSchema = z.object(fields).strict().openapi("CreateActivityTemplate");
export const UpdateActivityTemplateSchema = updateBodyOf(ActivityTemplateSchema, fields, "UpdateActivityTemplate");

export type ActivityTemplateInput = z.infer<typeof CreateActivityTemplateSchema>;
export type UpdateActivityTemplateInput = z.infer<typeof UpdateActivityTemplateSchema>;
