/**
 * Unique values (interface 4.1): for each requested field, the distinct values among the list's
 * entities (optionally only `ids`, minus `excludeIds`), each with a human-readable displayName and
 * a value usable in a filter. One statement per field, so the caller runs them in one db.batch.
 *
 * Decisions: nulls and absent properties are not values; values are ordered by displayName then
 * value (binary collation, numbers numerically); at most `maxValues` (default 1000) per field;
 * at most {@link MAX_UNIQUE_FIELDS} fields per request; a field requested twice is answered once.
 */
import type { Database } from "../../db/statements";
import { checkSize, type CompiledStatement } from "./compile";
import { formatDateValue } from "./dates";
import type { FieldDefinition, ListDefinition } from "./list";
import { idConditions, parseIdList } from "./params";
import { queryError, quote } from "./problems";
import { joinBalanced, splitCsv, SqlValues, type Condition } from "./sql-values";
import { valueColumn, type CatalogLookup, type PropertyInfo } from "./types";

export const MAX_UNIQUE_FIELDS = 50;
export const DEFAULT_MAX_UNIQUE_VALUES = 1000;

export interface UniqueValuesInput {
  fieldNames?: string | readonly string[] | undefined;
  ids?: string | readonly string[] | undefined;
  excludeIds?: string | readonly string[] | undefined;
}

export interface UniqueValue {
  displayName: string;
  value: string | number | boolean;
}

export interface UniqueValuesResult {
  fieldName: string;
  values: UniqueValue[];
}

export interface CompiledUniqueValues extends CompiledStatement {
  /** The field as the client wrote it. */
  fieldName: string;
  /** Turns a result row `{ value, displayName }` into the API shape. */
  toValue(row: Record<string, unknown>): UniqueValue;
}

const PREFIX = "properties.";

/**
 * Compiles one statement per requested field. fieldNames is required; an unknown field or
 * property is InvalidQuery (field `query.fieldNames`).
 *
 * @example
 * const statements = await compileUniqueValues(deviationList, c.req.valid("query"), catalog);
 * return c.json(await runUniqueValues(c.env.DB, statements));
 */
export async function compileUniqueValues(
  list: ListDefinition,
  input: UniqueValuesInput,
  catalog: CatalogLookup,
  extraConditions: readonly Condition[] = [],
  options: { maxValues?: number } = {},
): Promise<CompiledUniqueValues[]> {
  const fieldNames = [...new Set(splitCsv(input.fieldNames))];
  if (fieldNames.length === 0) {
    throw queryError(
      "query.fieldNames",
      "required",
      "fieldNames is required: name one or more fields, comma-separated (properties as properties.Name).",
    );
  }
  if (fieldNames.length > MAX_UNIQUE_FIELDS) {
    throw queryError(
      "query.fieldNames",
      "limit",
      `fieldNames names ${fieldNames.length} fields; at most ${MAX_UNIQUE_FIELDS} are allowed.`,
    );
  }
  const conditions = [
    ...idConditions(list, parseIdList(list, input.ids, "query.ids"), parseIdList(list, input.excludeIds, "query.excludeIds")),
    ...extraConditions,
  ];
  const propertyNames = fieldNames.map(propertyPart).filter((n): n is string => n !== undefined);
  const properties = propertyNames.length > 0 ? await catalog(propertyNames) : new Map<string, PropertyInfo>();
  const maxValues = options.maxValues ?? DEFAULT_MAX_UNIQUE_VALUES;

  return fieldNames.map((fieldName) => {
    const propertyName = propertyPart(fieldName);
    if (propertyName !== undefined) {
      const property = properties.get(propertyName);
      if (!property)
        throw queryError(
          "query.fieldNames",
          "unknownProperty",
          `fieldNames: there is no property named ${quote(propertyName)} (names are case-sensitive).`,
        );
      return propertyStatement(fieldName, property, list, conditions, maxValues);
    }
    const field = list.field(fieldName);
    if (!field || field.definition.uniqueValues === false) {
      throw queryError("query.fieldNames", "unknownField", `fieldNames: the list has no field ${quote(fieldName)} with unique values.`);
    }
    return fieldStatement(fieldName, field.definition, list, conditions, maxValues);
  });
}

/** Runs the statements in one batch and shapes the answer: one entry per requested field. */
export async function runUniqueValues(db: Database, statements: readonly CompiledUniqueValues[]): Promise<UniqueValuesResult[]> {
  if (statements.length === 0) return [];
  const results = await db.batch(statements.map((s) => db.prepare(s.sql).bind(...s.params)));
  return statements.map((statement, i) => ({
    fieldName: statement.fieldName,
    values: ((results[i]?.results ?? []) as Record<string, unknown>[]).map((row) => statement.toValue(row)),
  }));
}

function propertyPart(fieldName: string): string | undefined {
  if (fieldName.length <= PREFIX.length || fieldName.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return undefined;
  return fieldName.slice(PREFIX.length);
}

/** ` AND (conditions)` restricting the entities, or "" without conditions. */
function entitiesWhere(conditions: readonly Condition[], values: SqlValues): string {
  return conditions.length === 0
    ? ""
    : ` AND ${joinBalanced(
        conditions.map((condition) => condition(values)),
        "AND",
      )}`;
}

function fieldStatement(
  fieldName: string,
  field: FieldDefinition,
  list: ListDefinition,
  conditions: readonly Condition[],
  maxValues: number,
): CompiledUniqueValues {
  const values = new SqlValues();
  const joins = [...(list.joins ?? []), ...(field.joins ?? []).filter((j) => !(list.joins ?? []).includes(j))];
  const sql =
    `SELECT ${field.column} AS value, min(${field.displayColumn ?? field.column}) AS displayName` +
    ` FROM ${list.table} ${list.alias}${joins.map((j) => ` ${j}`).join("")}` +
    ` WHERE ${field.column} IS NOT NULL${entitiesWhere(conditions, values)}` +
    ` GROUP BY ${field.column} ORDER BY displayName NULLS LAST, value LIMIT ${values.value(maxValues)}`;
  checkSize(sql, "query.fieldNames");
  const type = field.type ?? "text";
  return {
    fieldName,
    sql,
    params: [values.toJson()],
    toValue(row) {
      if (type === "boolean") {
        const value = Boolean(Number(row.value));
        return { value, displayName: field.displayColumn ? String(row.displayName ?? value) : String(value) };
      }
      const value = type === "number" ? Number(row.value) : String(row.value);
      return { value, displayName: String(row.displayName ?? value) };
    },
  };
}

function propertyStatement(
  fieldName: string,
  property: PropertyInfo,
  list: ListDefinition,
  conditions: readonly Condition[],
  maxValues: number,
): CompiledUniqueValues {
  const values = new SqlValues();
  const column = `pu.${valueColumn(property.format)}`;
  let display = column;
  let join = "";
  if (property.format === "classification") {
    // The element's display name, falling back to its name, which is the stored value.
    join =
      ` LEFT JOIN classification_elements pc ON pc.classification_id = ` +
      `${values.value(property.classificationId ?? null)} AND pc.name = pu.value_text`;
    display = `coalesce(pc.display_name, pu.value_text)`;
  } else if (property.format === "entity") {
    // value_text holds the owner id, value_json the owner object { id, name }.
    display = `coalesce(CASE WHEN json_valid(pu.value_json) THEN json_extract(pu.value_json, '$.name') END, pu.value_text)`;
  }
  const sql =
    `SELECT ${column} AS value, min(${display}) AS displayName FROM property_values pu${join}` +
    ` WHERE pu.entity_kind = ${values.value(list.entityKind)} AND pu.name = ${values.value(property.name)} AND ${column} IS NOT NULL` +
    ` AND pu.entity_id IN (SELECT ${list.idExpression} FROM ${list.table} ${list.alias}${(list.joins ?? []).map((j) => ` ${j}`).join("")}` +
    ` WHERE 1 = 1${entitiesWhere(conditions, values)})` +
    ` GROUP BY ${column} ORDER BY displayName NULLS LAST, value LIMIT ${values.value(maxValues)}`;
  checkSize(sql, "query.fieldNames");
  return { fieldName, sql, params: [values.toJson()], toValue: (row) => renderPropertyValue(property, row) };
}

function renderPropertyValue(property: PropertyInfo, row: Record<string, unknown>): UniqueValue {
  switch (property.format) {
    case "integer":
    case "decimal": {
      const value = Number(row.value);
      return { value, displayName: String(value) };
    }
    case "boolean": {
      const value = Number(row.value) !== 0;
      return { value, displayName: String(value) };
    }
    case "date": {
      // Dates filter as quoted ISO text, so the value is the ISO form too.
      const value = formatDateValue(Number(row.value));
      return { value, displayName: value };
    }
    case "text":
    case "classification":
    case "entity": {
      const value = String(row.value);
      return { value, displayName: String(row.displayName ?? value) };
    }
  }
}
