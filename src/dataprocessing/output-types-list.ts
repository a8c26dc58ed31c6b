/** GET /OutputTypes on the query engine: ids, excludeIds, searchText (name), order and paging. */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { compileListQuery, defineList, listQueryShape, noProperties, runListQuery } from "../pkg/query";
import { toOutputType, type OutputTypeRow } from "./output-types";
import type { OutputType } from "./schema";

const outputTypeList = defineList({
  table: "output_types",
  alias: "ot",
  entityKind: "outputType",
  idColumn: "id",
  fields: {
    name: { column: "lower(ot.name)", displayColumn: "ot.name" },
    createdAt: { column: "ot.created_at", type: "datetime" },
    updatedAt: { column: "ot.updated_at", type: "datetime" },
  },
  searchColumns: ["ot.name"],
  defaultOrder: "name asc",
  select: "ot.id, ot.name, ot.schema, ot.etag, ot.created_at, ot.updated_at",
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const OutputTypeListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name.", example: "scores" }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, createdAt, updatedAt. Default: name asc.",
    example: "createdAt desc",
  }),
  skip,
  take,
  includeTotal,
});

export async function listOutputTypes(
  db: Database,
  query: z.infer<typeof OutputTypeListQuery>,
): Promise<{ items: OutputType[]; total: number | undefined }> {
  const { items, total } = await runListQuery<OutputTypeRow>(db, await compileListQuery(outputTypeList, query, noProperties));
  return { items: items.map(toOutputType), total };
}
