/** The list of models on the shared query engine (filters, order, paging, totals, their properties) and its unique values. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { catalogFor } from "../../properties/definitions/catalog";
import {
  compileListQuery,
  compileUniqueValues,
  defineList,
  enumCondition,
  inList,
  listQueryShape,
  runListQuery,
  runUniqueValues,
  splitCsv,
  uniqueValuesQueryShape,
  type Condition,
  type UniqueValuesInput,
} from "../../pkg/query";
import { STATUSES } from "./schema";
import { modelRow } from "./store";

const { ids, excludeIds, searchText, properties, order, skip, take, includeTotal } = listQueryShape;

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
  const page = await runListQuery(db, await compileListQuery(modelList, query, catalogFor(db, "Model"), modelConditions(query)));
  return { ...page, items: page.items.map(modelRow) };
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
