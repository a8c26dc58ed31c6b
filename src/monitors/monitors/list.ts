/** The list of monitors on the shared query engine (filters, order, paging, totals) and its unique values. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  compileUniqueValues,
  defineList,
  enumCondition,
  inList,
  listQueryShape,
  noProperties,
  parseUuidList,
  runListQuery,
  runUniqueValues,
  splitCsv,
  uniqueValuesQueryShape,
  type Condition,
  type UniqueValuesInput,
} from "../../pkg/query";
import { STATUSES } from "../models/schema";
import { monitorRow } from "./store";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

const monitorList = defineList({
  table: "monitors",
  alias: "mn",
  entityKind: "monitor",
  idColumn: "id",
  fields: {
    name: { column: "lower(mn.name)", displayColumn: "mn.name" },
    monitorId: { column: "mn.monitor_id" },
    status: { column: "mn.status" },
    model: { column: "mn.model_ref", displayColumn: "mo.name", joins: ["LEFT JOIN models mo ON mo.id = mn.model_ref"], orderable: false },
    objectOwner: { column: "mn.owner_id", displayColumn: "mn.owner_name", orderable: false },
    "objectOwner.name": { column: "lower(mn.owner_name)", uniqueValues: false },
    createdAt: { column: "mn.created_at", type: "datetime", uniqueValues: false, indexed: true },
    updatedAt: { column: "mn.updated_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["mn.name", "mn.monitor_id", "mn.instructions"],
  defaultOrder: "createdAt desc",
});

export const MonitorListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name, MON number or instructions." }),
  statuses: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated: ${STATUSES.join(", ")}.` }),
  modelIds: z.string().optional().openapi({ description: "Only monitors of these models (comma-separated ids)." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over name, monitorId, status, objectOwner.name, createdAt, updatedAt. Default: createdAt desc.",
  }),
  skip,
  take,
  includeTotal,
});

function monitorConditions(query: z.infer<typeof MonitorListQuery>): Condition[] {
  const conditions = enumCondition(query.statuses, STATUSES, "query.statuses", "mn.status");
  const models = parseUuidList(query.modelIds, "query.modelIds");
  if (models.length > 0) conditions.push(inList("mn.model_ref", models));
  const owners = splitCsv(query.objectOwnerIds);
  if (owners.length > 0) conditions.push(inList("mn.owner_id", owners));
  return conditions;
}

export async function listMonitorRows(db: Database, query: z.infer<typeof MonitorListQuery>) {
  const page = await runListQuery(db, await compileListQuery(monitorList, query, noProperties, monitorConditions(query)));
  return { ...page, items: page.items.map(monitorRow) };
}

export const MonitorUniqueValuesQuery = z.object({
  ...uniqueValuesQueryShape,
  fieldNames: uniqueValuesQueryShape.fieldNames.openapi({
    description: "Required. Comma-separated: name, monitorId, status, model (value: id, displayName: name), objectOwner.",
  }),
});

export async function monitorUniqueValues(db: Database, query: UniqueValuesInput) {
  return runUniqueValues(db, await compileUniqueValues(monitorList, query, noProperties));
}
