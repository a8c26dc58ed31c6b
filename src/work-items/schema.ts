/** The work item shapes (design: issue 3, "Work item"); read-only fields of a read are accepted and ignored on PUT. */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../pkg/resource";
import { AssetRefSchema, DesignationsInputSchema } from "../assets/designations";
import { PersonSchema, StatusSchema, TagsSchema } from "../work/common";
import { MetadataSchema } from "../properties/entity-types/schema";

export const MAX_BASED_ON = 20;
export const MAX_PROPERTIES = 200;

const DateTimeInput = z.string().trim().max(40).nullable().default(null).openapi({
  description: "ISO 8601 date-time (UTC when no zone is given); returned as ISO 8601 UTC with milliseconds.",
  example: "2026-12-01T08:00:00Z",
});

const PropertyInput = z
  .object({ name: z.string().min(1).max(200), value: z.unknown().optional() })
  .strict()
  .openapi("LinkedPropertyInput");

const BasedOnInput = z
  .object({
    id: z.uuid(),
    revision: z.number().int().optional().openapi({ description: "Read-only; ignored (the latest revision is used and recorded)." }),
  })
  .strict();

export const WorkItemSchema = z
  .object({
    id: z.uuid(),
    displayName: z.string(),
    referenceId: z.string().nullable(),
    status: z.string(),
    dueDate: z.string().nullable().openapi({ description: "ISO 8601 UTC." }),
    objectOwner: PersonSchema,
    typeId: z.uuid().openapi({ description: "The work type (an entity type)." }),
    tags: z.array(z.string()),
    properties: z.array(z.object({ name: z.string(), value: z.unknown() })),
    basedOn: z
      .array(z.object({ id: z.uuid(), revision: z.number().int() }))
      .openapi({ description: "The work template revisions the work item was created from." }),
    designations: z.array(AssetRefSchema),
    deviationIds: z.array(z.uuid()).openapi({ description: "Read-only: linked deviations (linked through /WorkItems/{id}/Deviations)." }),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("WorkItem");

export type WorkItem = z.infer<typeof WorkItemSchema>;

const fields = {
  displayName: z.string().trim().min(1).max(500),
  referenceId: z.string().trim().max(200).nullable().default(null),
  status: StatusSchema.optional(),
  dueDate: DateTimeInput,
  objectOwner: PersonSchema.nullable().optional().openapi({ description: "Default on create: the logged-in user." }),
  typeId: z.uuid().optional().openapi({ description: "The work type (an entity type). Default: General." }),
  tags: TagsSchema,
  properties: z
    .array(PropertyInput)
    .max(MAX_PROPERTIES)
    .default([])
    .openapi({ description: "Values of WorkItem-rule definitions linked to the type." }),
  designations: DesignationsInputSchema,
  metadata: MetadataSchema,
};

export const CreateWorkItemSchema = z
  .object({
    ...fields,
    basedOn: z.array(BasedOnInput).max(MAX_BASED_ON).default([]).openapi({
      description:
        "Work templates to instantiate (their latest revisions): every activity with its inputs, the tags and the file references.",
    }),
  })
  .strict()
  .openapi("CreateWorkItem");

export const UpdateWorkItemSchema = updateBodyOf(
  WorkItemSchema,
  {
    ...fields,
    basedOn: z
      .array(BasedOnInput)
      .max(MAX_BASED_ON)
      .optional()
      .openapi({
        description:
          "Absent: unchanged. Otherwise the full list: templates not yet in it are instantiated; a template already " +
          "instantiated cannot be removed (400).",
      }),
  },
  "UpdateWorkItem",
);

export type CreateWorkItemInput = z.infer<typeof CreateWorkItemSchema>;
export type UpdateWorkItemInput = z.infer<typeof UpdateWorkItemSchema>;
