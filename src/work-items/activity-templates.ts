/** GET /WorkItems/{id}/ActivityTemplates: the activity template revisions a work item used, as they were. */
import { z } from "@hono/zod-openapi";
import { notFound } from "../pkg/errors";
import { parseJson } from "../pkg/db";
import { PersonSchema } from "../work/common";
import { INPUT_FORMATS } from "./activities/schema";
import { readWorkItemActivityTemplates } from "./template-revisions";

// Named apart from the templates module's ActivityTemplate so the two OpenAPI components never clash.
export const UsedActivityTemplateSchema = z
  .object({
    id: z.uuid(),
    revision: z.number().int(),
    displayName: z.string(),
    referenceId: z.string().nullable(),
    status: z.string(),
    objectOwner: PersonSchema,
    activityType: z.object({ id: z.uuid(), name: z.string() }).nullable(),
    templateType: z.string().nullable(),
    description: z.string().nullable(),
    inputTemplates: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        displayName: z.string().nullable(),
        format: z.enum(INPUT_FORMATS),
        required: z.boolean(),
        order: z.number().int(),
        metadata: z.record(z.string(), z.unknown()).nullable(),
      }),
    ),
    inUse: z.boolean().openapi({ description: "Always true: the work item uses the revision." }),
    isLatest: z.boolean(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("WorkItemActivityTemplate");

export type UsedActivityTemplate = z.infer<typeof UsedActivityTemplateSchema>;

export async function usedActivityTemplates(db: D1Database, workItemId: string): Promise<UsedActivityTemplate[]> {
  const exists = await db.prepare("SELECT 1 AS found FROM work_items WHERE id = ?1").bind(workItemId).first();
  if (!exists) throw notFound("Work item", workItemId);
  const revisions = await readWorkItemActivityTemplates(db, workItemId);
  return revisions.map(({ row, inputs }) => ({
    id: row.id,
    revision: row.revision,
    displayName: row.display_name,
    referenceId: row.reference_id,
    status: row.status,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    activityType: row.activity_type_id === null ? null : { id: row.activity_type_id, name: row.activity_type_name ?? "" },
    templateType: row.template_type,
    description: row.description,
    inputTemplates: inputs.map((i) => ({
      id: i.id,
      name: i.name,
      displayName: i.display_name,
      format: i.format as (typeof INPUT_FORMATS)[number],
      required: i.required === 1,
      order: i.position,
      metadata: parseJson<Record<string, unknown>>(i.metadata),
    })),
    inUse: true,
    isLatest: row.is_latest === 1,
    metadata: parseJson<Record<string, unknown>>(row.metadata),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}
