/** GET /DeviationTypes: the default type General and every entity type with appliesTo deviationType. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { compileListQuery, defineList, listQueryShape, runListQuery, noProperties } from "../../pkg/query";
import type { EntityTypeRow } from "../../properties/entity-types/store";
import { ENTITY_TYPE_COLUMNS } from "../../properties/entity-types/store";
import type { DeviationType } from "./schema";
import { IS_DEVIATION_TYPE, toDeviationTypes } from "./store";

const deviationTypeList = defineList({
  table: "entity_types",
  alias: "t",
  entityKind: "deviationType",
  idColumn: "id",
  fields: {
    name: { column: "lower(t.name)" },
    isDefault: { column: "t.is_default", type: "boolean" },
    createdAt: { column: "t.created_at", type: "datetime" },
    updatedAt: { column: "t.updated_at", type: "datetime" },
  },
  searchColumns: ["t.name", "t.description"],
  defaultOrder: "isDefault desc, name asc",
  select: ENTITY_TYPE_COLUMNS.split(", ")
    .map((column) => `t.${column}`)
    .join(", "),
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const DeviationTypeListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or description." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, isDefault, createdAt, updatedAt. Default: isDefault desc, name asc.",
  }),
  skip,
  take,
  includeTotal,
});

export async function listDeviationTypes(
  db: Database,
  query: z.infer<typeof DeviationTypeListQuery>,
): Promise<{ items: DeviationType[]; total: number | undefined }> {
  const compiled = await compileListQuery(deviationTypeList, query, noProperties, [() => IS_DEVIATION_TYPE]);
  const { items, total } = await runListQuery<EntityTypeRow>(db, compiled);
  return { items: (await toDeviationTypes(db, items)).map((t) => t.value), total };
}
