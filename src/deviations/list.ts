/** GET /Deviations and GET /Deviations/UniqueValues on the shared list query engine (spec 4.2). */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { designationConditions, designationFilterShape } from "../assets/designations";
import {
  compileListQuery,
  compileUniqueValues,
  csvInList,
  defineList,
  inList,
  listQueryShape,
  parseUuidList,
  PROPERTIES_GRAMMAR,
  runListQuery,
  runUniqueValues,
  uniqueValuesQueryShape,
  type CatalogLookup,
  type Condition,
  type ListPage,
  type UniqueValuesResult,
} from "../pkg/query";
import type { Versioned } from "../pkg/resource";
import { statusesCondition } from "../work/common";
import { catalogFor } from "../properties/definitions/catalog";
import { DEVIATION_COLUMNS, DEVIATION_KIND, DEVIATION_RULE, hydrateDeviations, type DeviationRow } from "./store";
import type { Deviation } from "./schema";

const TYPE_JOIN = "LEFT JOIN entity_types dt ON dt.id = d.type_id";

export const deviationList = defineList({
  table: "deviations",
  alias: "d",
  entityKind: DEVIATION_KIND,
  idColumn: "id",
  select: DEVIATION_COLUMNS.split(", ")
    .map((column) => `d.${column}`)
    .join(", "),
  fields: {
    referenceId: { column: "d.reference_id" },
    status: { column: "d.status" },
    "type.name": { column: "dt.name", joins: [TYPE_JOIN], uniqueValues: false },
    "objectOwner.name": { column: "d.owner_name", uniqueValues: false },
    "risk.name": { column: "d.risk_name", uniqueValues: false },
    createdAt: { column: "d.created_at", type: "datetime", uniqueValues: false, indexed: true },
    updatedAt: { column: "d.updated_at", type: "datetime", uniqueValues: false },
    // Unique values of a reference: the id (usable in the matching filter) named by the name.
    type: { column: "d.type_id", displayColumn: "dt.name", joins: [TYPE_JOIN], orderable: false },
    objectOwner: { column: "d.owner_id", displayColumn: "coalesce(d.owner_name, d.owner_id)", orderable: false },
    risk: { column: "d.risk_id", displayColumn: "coalesce(d.risk_name, d.risk_id)", orderable: false },
  },
  searchColumns: ["d.reference_id"],
  defaultOrder: "createdAt desc",
});

/** Property names of the Deviation rule: the only properties a deviation carries. */
export const deviationCatalog = (db: Database): CatalogLookup => catalogFor(db, DEVIATION_RULE);

const { ids, excludeIds, searchText, properties, order, skip, take, includeTotal } = listQueryShape;
export const DeviationListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the referenceId." }),
  statuses: z
    .string()
    .optional()
    .openapi({ description: "Only these statuses: system status names or user status ids (comma-separated).", example: "new,active" }),
  objectOwnerIds: z.string().optional().openapi({ description: "Only deviations owned by these users (comma-separated ids)." }),
  typeIds: z.string().optional().openapi({ description: "Only deviations of these types (comma-separated ids)." }),
  riskIds: z.string().optional().openapi({ description: "Only deviations referencing these risks (comma-separated ids)." }),
  ...designationFilterShape,
  properties: properties.openapi({ description: `${PROPERTIES_GRAMMAR} Names are Deviation-rule property definitions.` }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over referenceId, status, type.name, objectOwner.name, risk.name, " +
      "createdAt, updatedAt and properties.{name}. Default: createdAt desc.",
    example: "properties.Severity desc, referenceId asc",
  }),
  skip,
  take,
  includeTotal,
});

export type DeviationListParams = z.infer<typeof DeviationListQuery>;

export const DeviationUniqueValuesQuery = z.object({
  ...uniqueValuesQueryShape,
  fieldNames: uniqueValuesQueryShape.fieldNames.openapi({
    description:
      "Required. Comma-separated: status, objectOwner (value: id, displayName: name), type, risk, referenceId, properties.{name}.",
    example: "status,objectOwner,type,properties.Severity",
  }),
});

/** The list's own filters, AND-ed; values inside one filter are OR-ed. */
export function deviationConditions(params: DeviationListParams): Condition[] {
  const typeIds = parseUuidList(params.typeIds, "query.typeIds");
  return [
    ...statusesCondition("d.status", params.statuses),
    ...csvInList("d.owner_id", params.objectOwnerIds),
    ...(typeIds.length > 0 ? [inList("d.type_id", typeIds)] : []),
    ...csvInList("d.risk_id", params.riskIds),
    ...designationConditions(DEVIATION_KIND, "d.id", params),
  ];
}

/** The list's statements for one request (exported for the query-plan test). */
export function compileDeviationList(db: Database, params: DeviationListParams) {
  return compileListQuery(deviationList, params, deviationCatalog(db), deviationConditions(params));
}

export async function listDeviations(db: Database, params: DeviationListParams): Promise<ListPage<Versioned<Deviation>>> {
  const { items, total, next } = await runListQuery<DeviationRow>(db, await compileDeviationList(db, params));
  return { items: await hydrateDeviations(db, items), total, next };
}

export async function deviationUniqueValues(
  db: Database,
  params: z.infer<typeof DeviationUniqueValuesQuery>,
): Promise<UniqueValuesResult[]> {
  return runUniqueValues(db, await compileUniqueValues(deviationList, params, deviationCatalog(db)));
}
