/** GET /Categories on the query engine: ids, excludeIds, searchText (name), order and paging. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { compileListQuery, defineList, listQueryShape, noProperties, runListQuery } from "../../pkg/query";
import type { Category } from "./schema";
import { CATEGORY_COLUMNS, toCategory, type CategoryRow } from "./store";

const categoryList = defineList({
  table: "categories",
  alias: "c",
  entityKind: "category",
  idColumn: "id",
  fields: {
    isDefault: { column: "c.is_default", type: "boolean" },
    name: { column: "lower(c.name)", displayColumn: "c.name" },
    createdAt: { column: "c.created_at", type: "datetime" },
    updatedAt: { column: "c.updated_at", type: "datetime" },
  },
  searchColumns: ["c.name"],
  // The default (Ungrouped) first, then by name.
  defaultOrder: "isDefault desc, name asc",
  select: CATEGORY_COLUMNS.split(", ")
    .map((column) => `c.${column}`)
    .join(", "),
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const CategoryListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name.", example: "corrosion" }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over isDefault, name, createdAt, updatedAt. Default: isDefault desc, name " +
      "asc (the default category first).",
    example: "name desc",
  }),
  skip,
  take,
  includeTotal,
});

export async function listCategories(
  db: Database,
  query: z.infer<typeof CategoryListQuery>,
): Promise<{ items: Category[]; total: number | undefined }> {
  const { items, total } = await runListQuery<CategoryRow>(db, await compileListQuery(categoryList, query, noProperties));
  return { items: items.map((row) => toCategory(row).value), total };
}
