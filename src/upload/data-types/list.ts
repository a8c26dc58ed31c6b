/** GET /DataTypes on the query engine: ids, excludeIds (data type ids are slugs), searchText (name or id), order and paging. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { compileListQuery, defineList, listQueryShape, noProperties, runListQuery } from "../../pkg/query";
import type { DataType } from "./schema";
import { DATA_TYPE_COLUMNS, toDataType, type DataTypeRow } from "./store";

const dataTypeList = defineList({
  table: "data_types",
  alias: "dt",
  entityKind: "dataType",
  idColumn: "id",
  idFormat: "text",
  fields: {
    id: { column: "dt.id" },
    name: { column: "lower(dt.name)", displayColumn: "dt.name" },
    createdAt: { column: "dt.created_at", type: "datetime" },
    updatedAt: { column: "dt.updated_at", type: "datetime" },
  },
  searchColumns: ["dt.name", "dt.id"],
  defaultOrder: "name asc",
  select: DATA_TYPE_COLUMNS.split(", ")
    .map((column) => `dt.${column}`)
    .join(", "),
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const DataTypeListQuery = z.object({
  ids: ids.openapi({
    description: "Only these data types: comma-separated ids (the slugs, e.g. inspection-report).",
    example: "inspection-report,thickness-measurements",
  }),
  excludeIds: excludeIds.openapi({ description: "Leave these data types out: comma-separated ids.", example: "inspection-report" }),
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or id.", example: "report" }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over id, name, createdAt, updatedAt. Default: name asc.",
    example: "createdAt desc",
  }),
  skip,
  take,
  includeTotal,
});

export async function listDataTypes(
  db: Database,
  query: z.infer<typeof DataTypeListQuery>,
): Promise<{ items: DataType[]; total: number | undefined }> {
  const { items, total } = await runListQuery<DataTypeRow>(db, await compileListQuery(dataTypeList, query, noProperties));
  return { items: items.map((row) => toDataType(row).value), total };
}
