/**
 * Reading linked properties back: every definition of one application rule linked to the entity's
 * type, in link order, with its stored value or null. Values of definitions no longer linked stay
 * stored (filters still see them) but are not shown, so a client can always PUT back what it read.
 *
 * {@link readLinkedProperties} reads on its own; {@link linkedPropertiesStatements} and
 * {@link linkedPropertiesFrom} are the same read split in two, for a caller that puts the statements
 * in one batch with its other reads (a page of deviations); {@link linkedPropertiesJsonColumns} and
 * {@link linkedPropertiesFromJson} make it two columns of the caller's own statement (one deviation).
 */
import type { Database } from "../db/statements";
import { propertyValuesFrom, propertyValuesFromJson, propertyValuesJsonColumn, propertyValuesStatements } from "../properties/values/rows";
import type { JsonValue, LinkedProperty } from "../properties/values";

/**
 * Whose links are read: the given type ids, or the types of the entities themselves, read in the
 * same statement from the entity table (when the rows are fetched in the same batch and their types
 * are not known yet). `table` and `column` are fixed names from the code, never from a request.
 */
export type LinkedTypes = { typeIds: readonly string[] } | { typesOf: { table: string; typeColumn: string } };

export async function readLinkedProperties(
  db: Database,
  entityKind: string,
  rule: string,
  entities: readonly { id: string; typeId: string }[],
): Promise<Map<string, LinkedProperty[]>> {
  if (entities.length === 0) return new Map();
  const ids = entities.map((e) => e.id);
  const statements = linkedPropertiesStatements(db, entityKind, rule, ids, { typeIds: [...new Set(entities.map((e) => e.typeId))] });
  return linkedPropertiesFrom(entities, await db.batch(statements));
}

/**
 * The statements of one linked-property read: the links of the types (first), then the stored values
 * of the entities (one per chunk of ids). Pass their results, in order, to {@link linkedPropertiesFrom}.
 */
export function linkedPropertiesStatements(
  db: Database,
  entityKind: string,
  rule: string,
  entityIds: readonly string[],
  types: LinkedTypes,
): D1PreparedStatement[] {
  const typeSet =
    "typeIds" in types
      ? { sql: "SELECT value FROM json_each(?1)", values: JSON.stringify(types.typeIds) }
      : {
          sql: `SELECT ${types.typesOf.typeColumn} FROM ${types.typesOf.table} WHERE id IN (SELECT value FROM json_each(?1))`,
          values: JSON.stringify([...new Set(entityIds)]),
        };
  const links = db
    .prepare(
      `SELECT l.entity_type_id, d.name FROM entity_type_properties l JOIN property_definitions d ON d.id = l.property_definition_id
        WHERE l.entity_type_id IN (${typeSet.sql}) AND d.application_rule = ?2
        ORDER BY l.entity_type_id, l.position`,
    )
    .bind(typeSet.values, rule);
  return [links, ...propertyValuesStatements(db, entityKind, entityIds)];
}

/** The linked properties by entity id from the results of {@link linkedPropertiesStatements} (same order). */
export function linkedPropertiesFrom(
  entities: readonly { id: string; typeId: string }[],
  results: readonly D1Result<unknown>[],
): Map<string, LinkedProperty[]> {
  const result = new Map<string, LinkedProperty[]>();
  const [linksResult, ...valueResults] = results;
  const values = propertyValuesFrom(
    entities.map((e) => e.id),
    valueResults,
  );
  const namesByType = new Map<string, string[]>();
  for (const link of (linksResult?.results ?? []) as { entity_type_id: string; name: string }[]) {
    const names = namesByType.get(link.entity_type_id) ?? [];
    names.push(link.name);
    namesByType.set(link.entity_type_id, names);
  }
  for (const entity of entities) {
    const stored = new Map((values.get(entity.id) ?? []).map((p) => [p.name, p.value]));
    result.set(
      entity.id,
      (namesByType.get(entity.typeId) ?? []).map((name) => ({ name, value: (stored.get(name) ?? null) as JsonValue })),
    );
  }
  return result;
}

/**
 * One entity's linked properties as two columns of the caller's statement: the names its type links
 * (`typeIdSql`, an SQL expression; `ruleSql` the application rule, a bound parameter), in link order,
 * and its stored values (`kindSql`, `idSql`). Read them with {@link linkedPropertiesFromJson}.
 */
export function linkedPropertiesJsonColumns(
  kindSql: string,
  ruleSql: string,
  idSql: string,
  typeIdSql: string,
): { names: string; values: string } {
  return {
    // Aliases of their own (lpj, ldj), so they never capture a name of the caller's statement.
    names: `(SELECT json_group_array(ldj.name ORDER BY lpj.position) FROM entity_type_properties lpj JOIN property_definitions
    ldj ON ldj.id = lpj.property_definition_id
              WHERE lpj.entity_type_id = ${typeIdSql} AND ldj.application_rule = ${ruleSql})`,
    values: propertyValuesJsonColumn(kindSql, idSql),
  };
}

/** One entity's linked properties from its {@link linkedPropertiesJsonColumns}, as {@link linkedPropertiesFrom} gives them. */
export function linkedPropertiesFromJson(namesJson: string | null, valuesJson: string | null, entityId: string): LinkedProperty[] {
  const stored = new Map(propertyValuesFromJson(entityId, valuesJson).map((p) => [p.name, p.value]));
  return (JSON.parse(namesJson ?? "[]") as string[]).map((name) => ({ name, value: (stored.get(name) ?? null) as JsonValue }));
}
