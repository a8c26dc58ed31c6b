/** GET /PropertyDefinitions and its unique values, on the shared list query engine. */
import type { Database } from "../../db/statements";
import { ApiError } from "../../pkg/errors";
import {
  compileListQuery,
  compileUniqueValues,
  defineList,
  inList,
  runListQuery,
  runUniqueValues,
  splitCsv,
  type Condition,
  type UniqueValuesInput,
  type UniqueValuesResult,
  noProperties,
} from "../../pkg/query";
import { FORMATS, normaliseApplicationRule } from "./rules";
import type { ListPropertyDefinitionsParams, PropertyDefinition } from "./schema";
import { JOINS, SELECT_COLUMNS, toDefinition, type DefinitionRow } from "./store";

export const propertyDefinitionList = defineList({
  table: "property_definitions",
  alias: "d",
  entityKind: "propertyDefinition",
  idColumn: "id",
  select: SELECT_COLUMNS,
  joins: JOINS,
  fields: {
    name: { column: "d.name" },
    format: { column: "d.format" },
    applicationRule: { column: "d.application_rule" },
    unit: { column: "d.unit", orderable: false },
    required: { column: "d.required", type: "boolean", orderable: false },
    createdAt: { column: "d.created_at", type: "datetime", uniqueValues: false },
    updatedAt: { column: "d.updated_at", type: "datetime", uniqueValues: false },
    "category.name": { column: "cat.name", uniqueValues: false },
    // Unique values of a category or classification: the id (usable in categoryIds) named by the name.
    category: { column: "d.category_id", displayColumn: "cat.name", orderable: false },
    classification: { column: "d.classification_id", displayColumn: "cls.name", orderable: false },
  },
  searchColumns: ["d.name"],
  defaultOrder: "name asc",
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function filterError(field: string, rule: string, message: string): ApiError {
  return new ApiError("InvalidQuery", message, { errors: [{ field, rule, message }] });
}

/** The list's own filters: applicationRules, formats and categoryIds. */
function listConditions(params: ListPropertyDefinitionsParams): Condition[] {
  const conditions: Condition[] = [];
  const rules = splitCsv(params.applicationRules);
  if (rules.length > 0) {
    const normalised = rules.map((rule) => {
      const known = normaliseApplicationRule(rule);
      if (!known) throw filterError("query.applicationRules", "enum", `applicationRules: '${rule}' is not an application rule.`);
      return known;
    });
    conditions.push(inList("d.application_rule", normalised));
  }
  const formats = splitCsv(params.formats);
  if (formats.length > 0) {
    for (const format of formats) {
      if (!(FORMATS as readonly string[]).includes(format))
        throw filterError("query.formats", "enum", `formats: '${format}' is not a format (${FORMATS.join(", ")}).`);
    }
    conditions.push(inList("d.format", formats));
  }
  const categoryIds = splitCsv(params.categoryIds);
  if (categoryIds.length > 0) {
    for (const id of categoryIds)
      if (!UUID.test(id)) throw filterError("query.categoryIds", "format", `categoryIds: '${id}' is not a UUID.`);
    conditions.push(
      inList(
        "d.category_id",
        categoryIds.map((id) => id.toLowerCase()),
      ),
    );
  }
  return conditions;
}

export async function listPropertyDefinitions(
  db: Database,
  params: ListPropertyDefinitionsParams,
): Promise<{ items: PropertyDefinition[]; total: number | undefined }> {
  const query = await compileListQuery(propertyDefinitionList, params, noProperties, listConditions(params));
  const { items, total } = await runListQuery<DefinitionRow>(db, query);
  return { items: items.map(toDefinition), total };
}

export async function propertyDefinitionUniqueValues(db: Database, params: UniqueValuesInput): Promise<UniqueValuesResult[]> {
  return runUniqueValues(db, await compileUniqueValues(propertyDefinitionList, params, noProperties));
}
