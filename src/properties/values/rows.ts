/**
 * The storage of linked values in property_values, one row per value (a multiselect has one row per
 * owner, position 0..n-1). The list query engine filters and orders on these columns:
 * - value_num: integer and decimal values, boolean as 0/1, date as epoch milliseconds (UTC);
 * - value_text: text, the classification element name, the owner id of an entity value;
 * - value_json: the value as the API returns it (for a multiselect, the one owner of that row).
 * Null values (and empty multiselects) have no row, so "no row" is the one meaning of null.
 */
import { tableStatements, type Database } from "../../db/statements";
import { propertyValues } from "../../db/schema";
import { parseDateValue } from "../../pkg/query/dates";
import type { JsonValue, Owner } from "./format";
import type { LinkedProperty, ResolvedProperty } from "./types";

export interface PropertyValueRow {
  entity_kind: string;
  entity_id: string;
  name: string;
  position: number;
  definition_id: string;
  value_text: string | null;
  value_num: number | null;
  value_json: string;
}

const COLUMNS = ["entity_kind", "entity_id", "name", "position", "definition_id", "value_text", "value_num", "value_json"] as const;
/** D1 binds at most 100 parameters per statement. */
const MAX_PARAMS = 100;
const ROWS_PER_INSERT = Math.floor(MAX_PARAMS / COLUMNS.length);

/** The rows of an entity's resolved values (null values have none). */
export function toPropertyValueRows(entityKind: string, entityId: string, properties: readonly ResolvedProperty[]): PropertyValueRow[] {
  const rows: PropertyValueRow[] = [];
  for (const property of properties) {
    if (property.value === null) continue;
    const base = { entity_kind: entityKind, entity_id: entityId, name: property.name, definition_id: property.definitionId };
    if (property.format === "entity" && property.isMultiselect) {
      (property.value as JsonValue[]).forEach((owner, position) => {
        rows.push({ ...base, position, value_text: (owner as unknown as Owner).id, value_num: null, value_json: JSON.stringify(owner) });
      });
      continue;
    }
    rows.push({ ...base, position: 0, ...typedColumns(property), value_json: JSON.stringify(property.value) });
  }
  return rows;
}

function typedColumns(property: ResolvedProperty): { value_text: string | null; value_num: number | null } {
  const value = property.value;
  switch (property.format) {
    case "integer":
    case "decimal":
      return { value_text: null, value_num: value as number };
    case "boolean":
      return { value_text: null, value_num: value ? 1 : 0 };
    case "date":
      return { value_text: null, value_num: parseDateValue(value as string) ?? null };
    case "text":
    case "classification":
      return { value_text: value as string, value_num: null };
    case "entity":
      return { value_text: (value as unknown as Owner).id, value_num: null };
  }
}

/** Deletes every stored value of an entity (for an entity's delete batch). */
export function deletePropertyValuesStatement(db: Database, entityKind: string, entityId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM property_values WHERE entity_kind = ?1 AND entity_id = ?2").bind(entityKind, entityId);
}

/**
 * The statements that replace an entity's stored values with `rows`: a delete, then inserts of at
 * most 100 bound parameters each. Put them in the same db.batch() as the entity's own write.
 */
export function replacePropertyValuesStatements(
  db: Database,
  entityKind: string,
  entityId: string,
  rows: readonly PropertyValueRow[],
): D1PreparedStatement[] {
  const statements = [deletePropertyValuesStatement(db, entityKind, entityId)];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const chunk = rows.slice(i, i + ROWS_PER_INSERT);
    const placeholders = chunk.map((_, r) => `(${COLUMNS.map((_, c) => `?${r * COLUMNS.length + c + 1}`).join(", ")})`).join(", ");
    const values = chunk.flatMap((row) => COLUMNS.map((column) => row[column]));
    statements.push(db.prepare(`INSERT INTO property_values (${COLUMNS.join(", ")}) VALUES ${placeholders}`).bind(...values));
  }
  return statements;
}

const valueTable = tableStatements(propertyValues);

/**
 * The statements that insert the values of entities created in the same batch, which have none yet
 * (the many deviations a monitoring evaluation raises at once): the rows travel as one JSON parameter
 * per statement, whatever their number. An entity that may have values uses {@link replacePropertyValuesStatements}.
 */
export function insertPropertyValuesStatements(db: Database, rows: readonly PropertyValueRow[]): D1PreparedStatement[] {
  return valueTable.insertMany(
    db,
    rows.map((row) => ({
      entityKind: row.entity_kind,
      entityId: row.entity_id,
      name: row.name,
      position: row.position,
      definitionId: row.definition_id,
      valueText: row.value_text,
      valueNum: row.value_num,
      valueJson: row.value_json,
    })),
  );
}

interface StoredValueRow {
  entity_id: string;
  name: string;
  position: number;
  value_json: string;
  is_multiselect: number | null;
}

/**
 * The stored values of many entities of one kind, as `{name, value}` lists by entity id (ordered by
 * name; a multiselect as an array in position order). Entities without values map to an empty list.
 * One batch, with the ids in chunks under the parameter limit.
 */
export async function readPropertyValues(
  db: Database,
  entityKind: string,
  entityIds: readonly string[],
): Promise<Map<string, LinkedProperty[]>> {
  const statements = propertyValuesStatements(db, entityKind, entityIds);
  return propertyValuesFrom(entityIds, statements.length === 0 ? [] : await db.batch(statements));
}

/**
 * The statements {@link readPropertyValues} runs (one per chunk of ids under the parameter limit;
 * none for no ids), for a caller that puts them in its own batch with other reads. Their results go
 * to {@link propertyValuesFrom}.
 */
export function propertyValuesStatements(db: Database, entityKind: string, entityIds: readonly string[]): D1PreparedStatement[] {
  const ids = [...new Set(entityIds)];
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < ids.length; i += MAX_PARAMS - 1) {
    const chunk = ids.slice(i, i + MAX_PARAMS - 1);
    statements.push(
      db
        .prepare(
          `SELECT v.entity_id, v.name, v.position, v.value_json, d.is_multiselect
             FROM property_values v LEFT JOIN property_definitions d ON d.id = v.definition_id
            WHERE v.entity_kind = ?1 AND v.entity_id IN (${chunk.map((_, j) => `?${j + 2}`).join(", ")})
            ORDER BY v.entity_id, v.name, v.position`,
        )
        .bind(entityKind, ...chunk),
    );
  }
  return statements;
}

/** The values by entity id from the results of {@link propertyValuesStatements} (in their order). */
export function propertyValuesFrom(entityIds: readonly string[], results: readonly D1Result<unknown>[]): Map<string, LinkedProperty[]> {
  return propertyValuesOfRows(
    entityIds,
    results.map((result) => result.results as StoredValueRow[]),
  );
}

function propertyValuesOfRows(entityIds: readonly string[], groups: readonly (readonly StoredValueRow[])[]): Map<string, LinkedProperty[]> {
  const byEntity = new Map<string, LinkedProperty[]>(entityIds.map((id) => [id, []]));
  for (const rows of groups) {
    let last: { entityId: string; property: LinkedProperty } | undefined;
    for (const row of rows) {
      const value = JSON.parse(row.value_json) as JsonValue;
      if (row.is_multiselect === 1) {
        if (last && last.entityId === row.entity_id && last.property.name === row.name) {
          (last.property.value as JsonValue[]).push(value);
          continue;
        }
        last = { entityId: row.entity_id, property: { name: row.name, value: [value] } };
      } else {
        last = { entityId: row.entity_id, property: { name: row.name, value } };
      }
      byEntity.get(row.entity_id)?.push(last.property);
    }
  }
  return byEntity;
}

/**
 * The same read as one column of a caller's statement: the stored values of the entity whose id is
 * `idSql` (`kindSql` its entity kind, a bound parameter), as a JSON array in the order of
 * {@link propertyValuesStatements}, each value still its stored JSON text. Read it with
 * {@link propertyValuesFromJson}.
 */
export function propertyValuesJsonColumn(kindSql: string, idSql: string): string {
  // Aliases of their own (pvj, pdj), so they never capture a name of the caller's statement.
  return `(SELECT json_group_array(json_array(pvj.name, pvj.position, pvj.value_json, pdj.is_multiselect) ORDER BY pvj.name, pvj.position)
     FROM property_values pvj LEFT JOIN property_definitions pdj ON pdj.id = pvj.definition_id
    WHERE pvj.entity_kind = ${kindSql} AND pvj.entity_id = ${idSql})`;
}

/** The stored values of one entity from its {@link propertyValuesJsonColumn}, as {@link propertyValuesFrom} gives them. */
export function propertyValuesFromJson(entityId: string, json: string | null): LinkedProperty[] {
  const rows = (JSON.parse(json ?? "[]") as [string, number, string, number | null][]).map(
    ([name, position, value_json, is_multiselect]): StoredValueRow => ({ entity_id: entityId, name, position, value_json, is_multiselect }),
  );
  return propertyValuesOfRows([entityId], [rows]).get(entityId) ?? [];
}
