/** The lists of model definitions on the shared query engine: every definition, and the versions of one name. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { compileListQuery, defineList, enumCondition, equals, listQueryShape, noProperties, runListQuery } from "../../pkg/query";
import { nameKey } from "../../pkg/unicode";
import { LOCATIONS } from "./schema";
import { definitionRow } from "./store";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

const definitionList = defineList({
  table: "model_definitions",
  alias: "md",
  entityKind: "modelDefinition",
  idColumn: "id",
  fields: {
    name: { column: "lower(md.name)", displayColumn: "md.name" },
    version: { column: "md.version" },
    location: { column: "md.location" },
    createdDate: { column: "md.created_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["md.name", "md.version"],
  defaultOrder: "name asc, createdDate asc",
});

export const DefinitionListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or version." }),
  locations: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated: ${LOCATIONS.join(", ")}.` }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, version, location, createdDate. Default: name asc, createdDate asc.",
  }),
  skip,
  take,
  includeTotal,
});

export async function listDefinitionRows(db: Database, query: z.infer<typeof DefinitionListQuery>) {
  const conditions = enumCondition(query.locations, LOCATIONS, "query.locations", "md.location");
  const page = await runListQuery(db, await compileListQuery(definitionList, query, noProperties, conditions));
  return { ...page, items: page.items.map(definitionRow) };
}

/** The versions of one definition (GET /ModelDefinitions/{name}/versions) default to oldest first. */
const VERSIONS_ORDER = "createdDate asc, version asc";

export const DefinitionVersionListQuery = DefinitionListQuery.extend({
  order: order.openapi({
    description:
      `Comma-separated \`{field} [asc|desc]\` over name, version, location, createdDate. Default: ${VERSIONS_ORDER} ` + `(oldest first).`,
    example: "createdDate desc",
  }),
});

/** The versions of the definition named `name` (case-insensitively, as every name lookup), with the list's filters and paging. */
export async function listDefinitionVersionRows(db: Database, name: string, query: z.infer<typeof DefinitionVersionListQuery>) {
  const conditions = [equals("md.name_key", nameKey(name)), ...enumCondition(query.locations, LOCATIONS, "query.locations", "md.location")];
  const order = query.order !== undefined && query.order.replace(/[\s,]/g, "") !== "" ? query.order : VERSIONS_ORDER;
  const page = await runListQuery(db, await compileListQuery(definitionList, { ...query, order }, noProperties, conditions));
  return { ...page, items: page.items.map(definitionRow) };
}
