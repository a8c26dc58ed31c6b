/** The activity shapes (design: issue 3, "Activity"). */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { AssetRefSchema, DesignationsInputSchema } from "../../assets/designations";
import { PersonSchema, StatusSchema } from "../../work/common";
import { MetadataSchema } from "../../properties/entity-types/schema";

export const INPUT_FORMATS = ["text", "boolean", "integer", "decimal", "date"] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

export const ActivityInputSchema = z
  .object({
    id: z.string().openapi({ description: "The input template id." }),
    name: z.string(),
    displayName: z.string().nullable(),
    format: z.enum(INPUT_FORMATS),
    required: z.boolean(),
    value: z.union([z.string(), z.number(), z.boolean()]).nullable(),
  })
  .openapi("ActivityInput");

export const ActivitySchema = z
  .object({
    id: z.uuid(),
    workItemId: z.uuid().nullable(),
    basedOn: z.object({ id: z.uuid(), revision: z.number().int() }).openapi({ description: "The activity template revision." }),
    displayName: z.string(),
    referenceId: z.string().nullable(),
    status: z.string(),
    dateOfActivity: z.string().nullable(),
    objectOwner: PersonSchema,
    responsible: PersonSchema.nullable(),
    type: z.object({ id: z.uuid(), name: z.string() }).nullable().openapi({ description: "The activity type." }),
    designations: z.array(AssetRefSchema),
    inputs: z.array(ActivityInputSchema),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Activity");

export type Activity = z.infer<typeof ActivitySchema>;

/** An input value in a request: only id and value count. */
const InputValueSchema = z
  .object({
    id: z.string().min(1).max(200),
    value: z.union([z.string().max(10_000), z.number(), z.boolean()]).nullable(),
    name: z.string().optional(),
    displayName: z.string().nullable().optional(),
    format: z.string().optional(),
    required: z.boolean().optional(),
  })
  .strict()
  .openapi("ActivityInputValue");

const fields = {
  displayName: z.string().trim().min(1).max(500).optional().openapi({ description: "Default on create: the activity template's." }),
  referenceId: z.string().trim().max(200).nullable().optional().openapi({ description: "Default on create: the activity template's." }),
  status: StatusSchema.optional(),
  dateOfActivity: z
    .string()
    .trim()
    .max(40)
    .nullable()
    .default(null)
    .openapi({ description: "ISO 8601 date-time; returned as ISO 8601 UTC." }),
  objectOwner: PersonSchema.nullable().optional(),
  responsible: PersonSchema.nullable().default(null),
  typeId: z.uuid().nullable().optional().openapi({ description: "The activity type. Default on create: the activity template's." }),
  designations: DesignationsInputSchema,
  inputs: z.array(InputValueSchema).max(500).default([]).openapi({
    description: "Values by input template id; inputs not listed keep their value. A required input that has a value cannot be cleared.",
  }),
  metadata: MetadataSchema,
};

const BasedOnSchema = z.object({ id: z.uuid(), revision: z.number().int().min(1).optional() }).strict();

export const CreateActivitySchema = z
  .object({
    basedOn: BasedOnSchema.openapi({
      description: "The activity template; without revision the latest (or, in a work item, the revision the work item used).",
    }),
    workItemId: z.uuid().nullable().default(null),
    ...fields,
  })
  .strict()
  .openapi("CreateActivity");

export const UpdateActivitySchema = updateBodyOf(
  ActivitySchema,
  {
    basedOn: z
      .object({ id: z.uuid(), revision: z.number().int() })
      .partial()
      .optional()
      .openapi({ description: "Cannot change; a different value is a 400." }),
    workItemId: z.uuid().nullable().optional().openapi({ description: "Cannot change; a different value is a 400." }),
    ...fields,
  },
  "UpdateActivity",
  { type: "use typeId" },
);

export type CreateActivityInput = z.infer<typeof CreateActivitySchema>;
export type UpdateActivityInput = z.infer<typeof UpdateActivitySchema>;
