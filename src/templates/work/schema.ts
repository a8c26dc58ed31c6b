import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { PersonSchema, StatusSchema, TagsSchema } from "../../work/common";
import { MetadataSchema } from "../../properties/entity-types/schema";
import { OrderSchema } from "../shared";

export const MAX_ACTIVITY_TEMPLATES = 500;
export const MAX_SECTION_TEMPLATES = 200;
export const MAX_PROPERTIES = 200;

export const SectionTemplateSchema = z
  .object({
    id: z.uuid(),
    displayName: z.string(),
    description: z.string().nullable(),
    order: z.number().int(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("SectionTemplate");

export const WorkTemplateActivityTemplateSchema = z
  .object({
    id: z.uuid(),
    activityTemplateId: z.uuid().openapi({
      description: "The activity template; a work item instantiates its latest revision (or the one the work item already used).",
    }),
    sectionTemplateId: z.uuid().nullable().openapi({ description: "The section of this work template it belongs to, or null." }),
    order: z.number().int(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("WorkTemplateActivityTemplate");

const LinkedPropertySchema = z.object({ name: z.string(), value: z.unknown() }).openapi("LinkedProperty");

export const WorkTemplateSchema = z
  .object({
    id: z.uuid(),
    revision: z.number().int().openapi({ description: "1 for a new template; + 1 each time an edit copies a revision in use." }),
    displayName: z.string(),
    referenceId: z.string().nullable(),
    status: z.string(),
    objectOwner: PersonSchema,
    typeId: z.uuid().openapi({ description: "The work type (an entity type); General by default." }),
    tags: z.array(z.string()),
    properties: z.array(LinkedPropertySchema),
    activityTemplates: z.array(WorkTemplateActivityTemplateSchema),
    sectionTemplates: z.array(SectionTemplateSchema),
    inUse: z.boolean().openapi({ description: "A work item is based on this revision: the next edit creates revision + 1." }),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime().openapi({ description: "When this revision was created." }),
    updatedAt: z.iso.datetime(),
  })
  .openapi("WorkTemplate");

export type WorkTemplate = z.infer<typeof WorkTemplateSchema>;

export const SectionTemplateInputSchema = z
  .object({
    id: z.uuid().optional().openapi({ description: "Keep this id (e.g. one read before); new when absent." }),
    displayName: z.string().trim().min(1).max(200),
    description: z.string().trim().max(4000).nullable().default(null),
    order: OrderSchema,
    metadata: MetadataSchema,
  })
  .strict()
  .openapi("SectionTemplateInput");

export const WorkTemplateActivityTemplateInputSchema = z
  .object({
    id: z.uuid().optional().openapi({ description: "Keep this id (e.g. one read before); new when absent." }),
    activityTemplateId: z.uuid(),
    sectionTemplateId: z.uuid().nullable().default(null),
    order: OrderSchema,
    metadata: MetadataSchema,
  })
  .strict()
  .openapi("WorkTemplateActivityTemplateInput");

export type SectionTemplateInput = z.infer<typeof SectionTemplateInputSchema>;
export type WorkTemplateActivityTemplateInput = z.infer<typeof WorkTemplateActivityTemplateInputSchema>;

export const SectionTemplateListInputSchema = z.array(SectionTemplateInputSchema).max(MAX_SECTION_TEMPLATES).openapi("SectionTemplateList");
export const ActivityTemplateLinkListInputSchema = z
  .array(WorkTemplateActivityTemplateInputSchema)
  .max(MAX_ACTIVITY_TEMPLATES)
  .openapi("WorkTemplateActivityTemplateList");

const fields = {
  displayName: z.string().trim().min(1).max(200),
  referenceId: z.string().trim().min(1).max(100).nullable().default(null),
  status: StatusSchema.default("new"),
  objectOwner: PersonSchema.nullable().optional().openapi({ description: "Default: the caller on create, unchanged on update." }),
  typeId: z
    .uuid()
    .optional()
    .openapi({ description: "The work type: an entity type whose appliesTo is WorkTemplate or null. Default General." }),
  tags: TagsSchema,
  properties: z
    .array(z.object({ name: z.string().min(1).max(100), value: z.unknown() }).strict())
    .max(MAX_PROPERTIES)
    .default([])
    .openapi({ description: "Linked values of WorkTemplate property definitions linked to the work type." }),
  metadata: MetadataSchema,
  activityTemplates: ActivityTemplateLinkListInputSchema.optional().openapi({
    description: "When given, replaces the list; when absent, the list is kept (update) or empty (create).",
  }),
  sectionTemplates: SectionTemplateListInputSchema.optional().openapi({
    description: "When given, replaces the list; when absent, the list is kept (update) or empty (create).",
  }),
};

export const CreateWorkTemplateSchema = z.object(fields).strict().openapi("CreateWorkTemplate");
export const UpdateWorkTemplateSchema = updateBodyOf(WorkTemplateSchema, fields, "UpdateWorkTemplate");

export type WorkTemplateInput = z.infer<typeof CreateWorkTemplateSchema>;
export type UpdateWorkTemplateInput = z.infer<typeof UpdateWorkTemplateSchema>;
