/** GET /ActivityTemplates (latest revisions) and its unique values. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  compileUniqueValues,
  csvInList,
  defineList,
  listQueryShape,
  parseUuidList,
  runListQuery,
  runUniqueValues,
  type Condition,
  type UniqueValuesInput,
  type UniqueValuesResult,
  noProperties,
} from "../../pkg/query";
import { statusesCondition } from "../../work/common";
import type { ActivityTemplate } from "./schema";
import { ENTITY_KIND, loadInputsOf, ROW_SELECT, toActivityTemplate, type ActivityTemplateRow } from "./store";

export const activityTemplateList = defineList({
  table: "activity_templates",
  alias: "a",
  entityKind: ENTITY_KIND,
  idColumn: "id",
  select: ROW_SELECT,
  fields: {
    displayName: { column: "lower(a.display_name)", displayColumn: "a.display_name", indexed: true },
    referenceId: { column: "a.reference_id" },
    status: { column: "a.status" },
    objectOwner: { column: "a.owner_id", displayColumn: "coalesce(a.owner_name, a.owner_id)", orderable: false },
    "objectOwner.id": { column: "a.owner_id" },
    "objectOwner.name": { column: "a.owner_name" },
    activityType: {
      column: "a.activity_type_id",
      displayColumn: "(SELECT name FROM activity_types WHERE id = a.activity_type_id)",
      orderable: false,
    },
    "activityType.name": { column: "(SELECT lower(name) FROM activity_types WHERE id = a.activity_type_id)", uniqueValues: false },
    templateType: { column: "a.template_type" },
    revision: { column: "a.revision", type: "number" },
    createdAt: { column: "a.created_at", type: "datetime", uniqueValues: false },
    updatedAt: { column: "a.updated_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["a.display_name", "a.reference_id"],
  defaultOrder: "displayName asc",
});

const latestOnly: Condition = () => "a.is_latest = 1";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const ActivityTemplateListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of displayName or referenceId." }),
  statuses: z.string().optional().openapi({ description: "Comma-separated statuses (system status names or user status ids)." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated object owner ids." }),
  activityTypeIds: z.string().optional().openapi({ description: "Comma-separated activity type ids." }),
  templateTypes: z.string().optional().openapi({ description: "Comma-separated templateType values (exact)." }),
  workItemIds: z
    .string()
    .optional()
    .openapi({
      description:
        "Comma-separated work item ids: the activity templates those work items used (listed at their latest revision; " +
        "GET /WorkItems/{id}/ActivityTemplates gives the revisions used).",
    }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over displayName, referenceId, status, objectOwner.id, objectOwner.name, " +
      "activityType.name, templateType, revision, createdAt, updatedAt. Default: displayName asc.",
    example: "displayName asc",
  }),
  skip,
  take,
  includeTotal,
});

export type ActivityTemplateListParams = z.infer<typeof ActivityTemplateListQuery>;

function conditions(params: ActivityTemplateListParams): Condition[] {
  const list: Condition[] = [
    latestOnly,
    ...statusesCondition("a.status", params.statuses),
    ...csvInList("a.owner_id", params.objectOwnerIds),
    ...csvInList("a.template_type", params.templateTypes),
  ];
  const typeIds = parseUuidList(params.activityTypeIds, "query.activityTypeIds");
  if (typeIds.length > 0) list.push((v) => v.oneOf("a.activity_type_id", typeIds));
  const workItemIds = parseUuidList(params.workItemIds, "query.workItemIds");
  if (workItemIds.length > 0)
    list.push(
      (v) => `a.id IN (SELECT activity_template_id FROM work_item_activity_templates WHERE work_item_id IN ${v.list(workItemIds)})`,
    );
  return list;
}

export async function listActivityTemplates(
  db: Database,
  params: ActivityTemplateListParams,
): Promise<{ items: ActivityTemplate[]; total: number | undefined }> {
  const query = await compileListQuery(activityTemplateList, params, noProperties, conditions(params));
  const { items, total } = await runListQuery<ActivityTemplateRow>(db, query);
  const inputs = await loadInputsOf(db, items);
  return { items: items.map((row) => toActivityTemplate({ row, inputs: inputs.get(`${row.id}:${row.revision}`) ?? [] }).value), total };
}

export async function activityTemplateUniqueValues(db: Database, params: UniqueValuesInput): Promise<UniqueValuesResult[]> {
  return runUniqueValues(db, await compileUniqueValues(activityTemplateList, params, noProperties, [latestOnly]));
}
