/**
 * Full property definitions by id, for resolving the values a deviation type carries against the
 * links it is about to get (before they are stored, so loadLinkedDefinitions cannot read them yet).
 */
import type { Format } from "../../properties/definitions/rules";
import { classificationElementNames } from "../../properties/values/store";
import type { JsonValue, LinkedDefinition } from "../../properties/values";

interface DefinitionRow {
  id: string;
  name: string;
  format: string;
  regex: string | null;
  regex_error_message: string | null;
  classification_id: string | null;
  is_multiselect: number;
  application_rule: string;
  required: number;
  default_value: string | null;
  value_expression: string | null;
}

/** The definitions with these ids, in the order of `ids` (unknown ids are left out). */
export async function loadDefinitions(db: D1Database, ids: readonly string[]): Promise<LinkedDefinition[]> {
  if (ids.length === 0) return [];
  const { results } = await db
    .prepare(
      `SELECT id, name, format, regex, regex_error_message, classification_id, is_multiselect, application_rule, required, default_value, value_expression
         FROM property_definitions WHERE id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify(ids))
    .all<DefinitionRow>();
  const byId = new Map(results.map((r) => [r.id, r]));
  const elements = await classificationElementNames(db, results.map((r) => r.classification_id).filter((id): id is string => id !== null));
  return ids
    .map((id) => byId.get(id))
    .filter((row): row is DefinitionRow => row !== undefined)
    .map((row) => ({
      id: row.id,
      name: row.name,
      format: row.format as Format,
      regex: row.regex,
      regexErrorMessage: row.regex_error_message,
      classificationId: row.classification_id,
      classificationElements: row.classification_id ? (elements.get(row.classification_id) ?? new Set()) : undefined,
      isMultiselect: row.is_multiselect === 1,
      applicationRule: row.application_rule,
      required: row.required === 1,
      defaultValue: row.default_value === null ? null : (JSON.parse(row.default_value) as JsonValue),
      valueExpression: row.value_expression,
    }));
}
