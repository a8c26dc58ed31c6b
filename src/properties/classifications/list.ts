/** GET /Classifications: ids, excludeIds, searchText (name, description), order and paging. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { compileListQuery, defineList, listQueryShape, runListQuery, noProperties } from "../../pkg/query";
import type { Classification } from "./schema";
import { CLASSIFICATION_COLUMNS, loadElementRowsOf, toClassification, type ClassificationRow } from "./store";

const classificationList = defineList({
  table: "classifications",
  alias: "c",
  entityKind: "classification",
  idColumn: "id",
  fields: {
    name: { column: "lower(c.name)" },
    format: { column: "c.format" },
    createdAt: { column: "c.created_at", type: "datetime" },
    updatedAt: { column: "c.updated_at", type: "datetime" },
  },
  searchColumns: ["c.name", "c.description"],
  defaultOrder: "name asc",
  select: CLASSIFICATION_COLUMNS.split(", ")
    .map((column) => `c.${column}`)
    .join(", "),
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const ClassificationListQuery = z.object({
  ids,
  excludeIds,
  searchText,
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, format, createdAt, updatedAt. Default: name asc.",
    example: "name desc",
  }),
  skip,
  take,
  includeTotal,
});

export async function listClassifications(
  db: Database,
  query: z.infer<typeof ClassificationListQuery>,
): Promise<{ items: Classification[]; total: number | undefined }> {
  const compiled = await compileListQuery(classificationList, query, noProperties);
  const { items, total } = await runListQuery<ClassificationRow>(db, compiled);
  const elements = await loadElementRowsOf(
    db,
    items.map((row) => row.id),
  );
  return { items: items.map((row) => toClassification(row, elements.get(row.id) ?? []).value), total };
}
