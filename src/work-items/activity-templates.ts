/**
 * GET /WorkItems/{id}/ActivityTemplates: the activity template revisions a work item used, as they
 * were, in the shape GET /ActivityTemplates/{id} returns (read by the templates module), plus
 * whether each is still the latest revision.
 */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { notFound } from "../pkg/errors";
import { ActivityTemplateSchema } from "../templates/activity/schema";
import { loadInputsOf, ROW_SELECT, toActivityTemplate, type ActivityTemplateRow } from "../templates/activity/store";

export const UsedActivityTemplateSchema = ActivityTemplateSchema.extend({
  isLatest: z.boolean().openapi({ description: "Whether this revision is still the template's latest." }),
}).openapi("UsedActivityTemplate");

export type UsedActivityTemplate = z.infer<typeof UsedActivityTemplateSchema>;

export async function usedActivityTemplates(db: Database, workItemId: string): Promise<UsedActivityTemplate[]> {
  const exists = await db.prepare("SELECT 1 AS found FROM work_items WHERE id = ?1").bind(workItemId).first();
  if (!exists) throw notFound("Work item", workItemId);
  const { results } = await db
    .prepare(
      `SELECT ${ROW_SELECT} FROM work_item_activity_templates u
         JOIN activity_templates a ON a.id = u.activity_template_id AND a.revision = u.activity_template_revision
        WHERE u.work_item_id = ?1 ORDER BY u.created_at, u.activity_template_id`,
    )
    .bind(workItemId)
    .all<ActivityTemplateRow>();
  const inputs = await loadInputsOf(db, results);
  return results.map((row) => ({
    ...toActivityTemplate({ row, inputs: inputs.get(`${row.id}:${row.revision}`) ?? [] }).value,
    isLatest: row.is_latest === 1,
  }));
}
