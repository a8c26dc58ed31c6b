/**
 * Lists of model definitions, models and monitors on the shared query engine (filters, order,
 * skip/take, includeTotal; models also filter on their properties), and their unique values.
 */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { catalogFor } from "../properties/definitions/catalog";
import {
  compileListQuery,
  compileUniqueValues,
  defineList,
  enumCondition,
  equals,
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
} from "../pkg/query";
import { nameKey } from "../pkg/unicode";
import { LOCATIONS, STATUSES } from "./schema";
import type { ModelRow, MonitorRow } from "./store";

const { ids, excludeIds, searchText, properties, order, skip, take, includeTotal } = listQueryShape;

// --- Model definitions ---------------------------------------------------------------------------------

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

export async function listDefinitionRows<T>(db: Database, query: z.infer<typeof DefinitionListQuery>) {
  const conditions = enumCondition(query.locations, LOCATIONS, "query.locations", "md.location");
  return runListQuery<T>(db, await compileListQuery(definitionList, query, noProperties, conditions));
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
export async function listDefinitionVersionRows<T>(db: Database, name: string, query: z.infer<typeof DefinitionVersionListQuery>) {
  const conditions = [equals("md.name_key", nameKey(name)), ...enumCondition(query.locations, LOCATIONS, "query.locations", "md.location")];
  const order = query.order !== undefined && query.order.replace(/[\s,]/g, "") !== "" ? query.order : VERSIONS_ORDER;
  return runListQuery<T>(db, await compileListQuery(definitionList, { ...query, order }, noProperties, conditions));
}

// --- Models --------------------------------------------------------------------------------------------

const modelList = defineList({
  table: "models",
  alias: "mo",
  entityKind: "model",
  idColumn: "id",
  fields: {
    name: { column: "lower(mo.name)", displayColumn: "mo.name" },
    modelId: { column: "mo.model_id" },
    status: { column: "mo.status" },
    modelDefinitionName: { column: "mo.definition_name" },
    modelDefinitionVersion: { column: "mo.definition_version" },
    objectOwner: { column: "mo.owner_id", displayColumn: "mo.owner_name", orderable: false },
    "objectOwner.name": { column: "lower(mo.owner_name)", uniqueValues: false },
    createdAt: { column: "mo.created_at", type: "datetime", uniqueValues: false, indexed: true },
    updatedAt: { column: "mo.updated_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["mo.name", "mo.model_id", "mo.description"],
  defaultOrder: "createdAt desc",
});

export const ModelListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name, MOD number or description." }),
  properties: properties.openapi({ description: "Filter on Model properties, as on every list." }),
  statuses: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated: ${STATUSES.join(", ")}.` }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids." }),
  modelDefinitionNames: z.string().optional().openapi({ description: "Comma-separated model definition names." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over name, modelId, status, modelDefinitionName, modelDefinitionVersion, " +
      "objectOwner.name, createdAt, updatedAt and properties.{name}. Default: createdAt desc.",
  }),
  skip,
  take,
  includeTotal,
});

function modelConditions(query: z.infer<typeof ModelListQuery>): Condition[] {
  const conditions = enumCondition(query.statuses, STATUSES, "query.statuses", "mo.status");
  const owners = splitCsv(query.objectOwnerIds);
  if (owners.length > 0) conditions.push(inList("mo.owner_id", owners));
  const names = splitCsv(query.modelDefinitionNames);
  if (names.length > 0) conditions.push(inList("mo.definition_name", names));
  return conditions;
}

export async function listModelRows(db: Database, query: z.infer<typeof ModelListQuery>) {
  return runListQuery<ModelRow>(db, await compileListQuery(modelList, query, catalogFor(db, "Model"), modelConditions(query)));
}

export const ModelUniqueValuesQuery = z.object({
  ...uniqueValuesQueryShape,
  fieldNames: uniqueValuesQueryShape.fieldNames.openapi({
    description:
      "Required. Comma-separated: name, modelId, status, modelDefinitionName, modelDefinitionVersion, objectOwner, properties.{name}.",
  }),
});

export async function modelUniqueValues(db: Database, query: UniqueValuesInput) {
  return runUniqueValues(db, await compileUniqueValues(modelList, query, catalogFor(db, "Model")));
}

// --- Monitors ------------------------------------------------------------------------------------------

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
  return runListQuery<MonitorRow>(db, await compileListQuery(monitorList, query, noProperties, monitorConditions(query)));
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
