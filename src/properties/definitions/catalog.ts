/** The property catalog of a list: the definitions of one application rule, by name (for its filters and orders). */
import type { Database } from "../../db/statements";
import type { CatalogLookup, PropertyFormat, PropertyInfo } from "../../pkg/query";

export function catalogFor(db: Database, applicationRule: string): CatalogLookup {
  return async (names) => {
    const found = new Map<string, PropertyInfo>();
    if (names.length === 0) return found;
    const { results } = await db
      .prepare(
        "SELECT name, format, classification_id, is_multiselect FROM property_definitions WHERE application_rule = ?1 " +
          "AND name IN (SELECT value FROM json_each(?2))",
      )
      .bind(applicationRule, JSON.stringify(names))
      .all<{ name: string; format: string; classification_id: string | null; is_multiselect: number }>();
    for (const row of results) {
      found.set(row.name, {
        name: row.name,
        format: row.format as PropertyFormat,
        classificationId: row.classification_id,
        isMultiselect: row.is_multiselect === 1,
      });
    }
    return found;
  };
}

/** The names of every definition of one application rule, in name order: the property columns of a list's export (src/export). */
export function definitionNames(db: Database, applicationRule: string): () => Promise<string[]> {
  return async () => {
    const { results } = await db
      .prepare("SELECT name FROM property_definitions WHERE application_rule = ?1 ORDER BY name")
      .bind(applicationRule)
      .all<{ name: string }>();
    return results.map((row) => row.name);
  };
}
