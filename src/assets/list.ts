/** GET /Assets: ids, excludeIds, searchText (name), kinds, parentIds, plantNames, order and paging. */
import type { Database } from "../db/statements";
import { nameKey } from "../pkg/unicode";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  defineList,
  enumCondition,
  inList,
  listQueryShape,
  parseUuidList,
  runListQuery,
  splitCsv,
  type Condition,
  type ListPage,
  noProperties,
} from "../pkg/query";
import { ASSET_KINDS } from "./designations";
import type { Asset } from "./schema";
import { ASSET_JOINS, ASSET_SELECT, toAsset, type AssetRow } from "./store";

const assetList = defineList({
  table: "assets",
  alias: "a",
  entityKind: "asset",
  idColumn: "id",
  select: ASSET_SELECT,
  joins: ASSET_JOINS,
  fields: {
    name: { column: "lower(a.name)" },
    kind: { column: "a.kind" },
    "plant.name": { column: "lower(pl.name)" },
    createdAt: { column: "a.created_at", type: "datetime" },
    updatedAt: { column: "a.updated_at", type: "datetime" },
  },
  searchColumns: ["a.name"],
  defaultOrder: "name asc",
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const AssetListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name." }),
  kinds: z
    .string()
    .optional()
    .openapi({ description: `Only these kinds (comma-separated: ${ASSET_KINDS.join(", ")}).`, example: "plant,mainSystem" }),
  parentIds: z.string().optional().openapi({ description: "Only children of these assets (comma-separated ids)." }),
  plantNames: z
    .string()
    .optional()
    .openapi({ description: "Only assets of these plants (the plants themselves included; comma-separated names, case-insensitive)." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, kind, plant.name, createdAt, updatedAt. Default: name asc.",
    example: "kind asc, name asc",
  }),
  skip,
  take,
  includeTotal,
});

function listConditions(query: z.infer<typeof AssetListQuery>): Condition[] {
  const conditions: Condition[] = [];
  conditions.push(...enumCondition(query.kinds, ASSET_KINDS, "query.kinds", "a.kind", "an asset kind"));
  const parentIds = parseUuidList(query.parentIds, "query.parentIds");
  if (parentIds.length > 0) conditions.push(inList("a.parent_id", parentIds));
  const plantNames = splitCsv(query.plantNames).map(nameKey);
  if (plantNames.length > 0) {
    conditions.push((values) => `a.plant_id IN (SELECT id FROM assets WHERE kind = 'plant' AND name_key IN ${values.list(plantNames)})`);
  }
  return conditions;
}

export async function listAssets(db: Database, query: z.infer<typeof AssetListQuery>): Promise<ListPage<Asset>> {
  const compiled = await compileListQuery(assetList, query, noProperties, listConditions(query));
  const { items, total, next } = await runListQuery<AssetRow>(db, compiled);
  return { items: items.map((row) => toAsset(row).value), total, next };
}
