/** GET /WorkTemplates (latest revisions) and its unique values, on the shared list query engine. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  compileUniqueValues,
  csvInList,
  defineList,
  listQueryShape,
  runListQuery,
  runUniqueValues,
  type Condition,
  type UniqueValuesInput,
  type UniqueValuesResult,
} from "../../pkg/query";
import { statusesCondition, tagsCondition } from "../../work/common";
import { catalogFor } from "../../properties/definitions/catalog";
import type { WorkTemplate } from "./schema";
import { ENTITY_KIND, loadDependentsOf, ROW_SELECT, toWorkTemplate, type WorkTemplateRow } from "./store";

export const workTemplateList = defineList({
  table: "work_templates",
  alias: "t",
  entityKind: ENTITY_KIND,
  idColumn: "id",
  select: ROW_SELECT,
  fields: {
    displayName: { column: "lower(t.display_name)", displayColumn: "t.display_name", indexed: true },
    referenceId: { column: "t.reference_id" },
    status: { column: "t.status" },
    objectOwner: { column: "t.owner_id", displayColumn: "coalesce(t.owner_name, t.owner_id)", orderable: false },
    "objectOwner.id": { column: "t.owner_id" },
    "objectOwner.name": { column: "t.owner_name" },
    typeId: { column: "t.type_id" },
    revision: { column: "t.revision", type: "number" },
    createdAt: { column: "t.created_at", type: "datetime", uniqueValues: false },
    updatedAt: { column: "t.updated_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["t.display_name", "t.reference_id"],
  defaultOrder: "displayName asc",
});

/** Only the latest revision of each template is listed. */
const latestOnly: Condition = () => "t.is_latest = 1";

const { ids, excludeIds, searchText, properties, order, skip, take, includeTotal } = listQueryShape;
export const WorkTemplateListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of displayName or referenceId." }),
  statuses: z
    .string()
    .optional()
    .openapi({ description: "Comma-separated statuses (system status names or user status ids).", example: "new,active" }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated object owner ids." }),
  tags: z
    .string()
    .optional()
    .openapi({ description: "Comma-separated tags: templates carrying any of them (exact match).", example: "pump,annual" }),
  properties,
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over displayName, referenceId, status, objectOwner.id, objectOwner.name, " +
      "typeId, revision, createdAt, updatedAt or properties.{name}. Default: displayName asc.",
    example: "referenceId desc",
  }),
  skip,
  take,
  includeTotal,
});

export type WorkTemplateListParams = z.infer<typeof WorkTemplateListQuery>;

function conditions(params: WorkTemplateListParams): Condition[] {
  return [
    latestOnly,
    ...statusesCondition("t.status", params.statuses),
    ...csvInList("t.owner_id", params.objectOwnerIds),
    ...tagsCondition(ENTITY_KIND, "t.id", params.tags),
  ];
}

export async function listWorkTemplates(
  db: Database,
  params: WorkTemplateListParams,
): Promise<{ items: WorkTemplate[]; total: number | undefined }> {
  const query = await compileListQuery(workTemplateList, params, catalogFor(db, "WorkTemplate"), conditions(params));
  const { items, total } = await runListQuery<WorkTemplateRow>(db, query);
  const dependents = await loadDependentsOf(db, items);
  return {
    items: items.map(
      (row) => toWorkTemplate({ row, ...(dependents.get(`${row.id}:${row.revision}`) ?? { sections: [], links: [] }) }).value,
    ),
    total,
  };
}

export async function workTemplateUniqueValues(db: Database, params: UniqueValuesInput): Promise<UniqueValuesResult[]> {
  return runUniqueValues(db, await compileUniqueValues(workTemplateList, params, catalogFor(db, "WorkTemplate"), [latestOnly]));
}
