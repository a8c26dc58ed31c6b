/**
 * Reading linked properties back: every definition of one application rule linked to the entity's
 * type, in link order, with its stored value or null. Values of definitions no longer linked stay
 * stored (filters still see them) but are not shown, so a client can always PUT back what it read.
 */
import { readPropertyValues, type JsonValue, type LinkedProperty } from "../properties/values";

export async function readLinkedProperties(
  db: D1Database,
  entityKind: string,
  rule: string,
  entities: readonly { id: string; typeId: string }[],
): Promise<Map<string, LinkedProperty[]>> {
  const result = new Map<string, LinkedProperty[]>();
  if (entities.length === 0) return result;
  const typeIds = [...new Set(entities.map((e) => e.typeId))];
  const [{ results: links }, values] = await Promise.all([
    db
      .prepare(
        `SELECT l.entity_type_id, d.name FROM entity_type_properties l JOIN property_definitions d ON d.id = l.property_definition_id
          WHERE l.entity_type_id IN (SELECT value FROM json_each(?1)) AND d.application_rule = ?2
          ORDER BY l.entity_type_id, l.position`,
      )
      .bind(JSON.stringify(typeIds), rule)
      .all<{ entity_type_id: string; name: string }>(),
    readPropertyValues(
      db,
      entityKind,
      entities.map((e) => e.id),
    ),
  ]);
  const namesByType = new Map<string, string[]>();
  for (const link of links) {
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
