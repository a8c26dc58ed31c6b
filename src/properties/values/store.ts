/** Reads value resolution needs: the definitions linked to an entity type and classification element names. */
import type { Database } from "../../db/statements";
import type { Format } from "../definitions/rules";
import type { JsonValue } from "./format";
import type { LinkedDefinition } from "./types";

interface LinkedDefinitionRow {
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

const MAX_PARAMS = 100;

const DEFINITION_COLUMNS =
  "d.id, d.name, d.format, d.regex, d.regex_error_message, d.classification_id, d.is_multiselect, " +
  "d.application_rule, d.required, d.default_value, d.value_expression";

/** Definition rows as value resolution needs them, with their classifications' element names. */
async function toLinkedDefinitions(db: Database, rows: readonly LinkedDefinitionRow[]): Promise<LinkedDefinition[]> {
  const elements = await classificationElementNames(
    db,
    rows.map((r) => r.classification_id).filter((id): id is string => id !== null),
  );
  return rows.map((row) => ({
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

/**
 * The definitions linked to an entity type, in link order, with their classifications' element
 * names; null when the entity type does not exist.
 */
export async function loadLinkedDefinitions(db: Database, entityTypeId: string): Promise<LinkedDefinition[] | null> {
  const [type, linked] = await db.batch<{ id: string } | LinkedDefinitionRow>([
    db.prepare("SELECT id FROM entity_types WHERE id = ?1").bind(entityTypeId),
    db
      .prepare(
        `SELECT ${DEFINITION_COLUMNS}
           FROM entity_type_properties l JOIN property_definitions d ON d.id = l.property_definition_id
          WHERE l.entity_type_id = ?1
          ORDER BY l.position, d.name`,
      )
      .bind(entityTypeId),
  ]);
  if (!type?.results.length) return null;
  return toLinkedDefinitions(db, (linked?.results ?? []) as LinkedDefinitionRow[]);
}

/**
 * The definitions with these ids, in the order of `ids` (unknown ids are left out): for resolving
 * values against links that are about to be stored (a deviation type's own properties).
 */
export async function loadDefinitionsByIds(db: Database, ids: readonly string[]): Promise<LinkedDefinition[]> {
  if (ids.length === 0) return [];
  const { results } = await db
    .prepare(`SELECT ${DEFINITION_COLUMNS} FROM property_definitions d WHERE d.id IN (SELECT value FROM json_each(?1))`)
    .bind(JSON.stringify(ids))
    .all<LinkedDefinitionRow>();
  const byId = new Map(results.map((r) => [r.id, r]));
  return toLinkedDefinitions(
    db,
    ids.map((id) => byId.get(id)).filter((row): row is LinkedDefinitionRow => row !== undefined),
  );
}

/**
 * Every element name of each classification, nested elements included (each element row carries its
 * classification id, whatever its depth).
 */
export async function classificationElementNames(db: Database, classificationIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const ids = [...new Set(classificationIds)];
  const names = new Map<string, Set<string>>(ids.map((id) => [id, new Set<string>()]));
  if (ids.length === 0) return names;
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < ids.length; i += MAX_PARAMS) {
    const chunk = ids.slice(i, i + MAX_PARAMS);
    statements.push(
      db
        .prepare(
          `SELECT classification_id, name FROM classification_elements WHERE classification_id IN ` +
            `(${chunk.map((_, j) => `?${j + 1}`).join(", ")})`,
        )
        .bind(...chunk),
    );
  }
  for (const result of await db.batch<{ classification_id: string; name: string }>(statements)) {
    for (const row of result.results) names.get(row.classification_id)?.add(row.name);
  }
  return names;
}
