import type { Database } from "../../db/statements";
/**
 * Where classification elements are used: stored values of classification-format properties and
 * the default values of their definitions both hold element names.
 */

export interface ElementUse {
  element: string;
  message: string;
}

/**
 * Which of `names` are still named by a stored value or a definition's default value of a
 * classification-format property that takes its values from this classification.
 */
export async function elementsInUse(db: Database, classificationId: string, names: readonly string[]): Promise<ElementUse[]> {
  const wanted = new Set(names);
  // Both reads are bounded by the classification, not by `names`, so no IN list can outgrow D1's limits.
  const [values, defaults] = await db.batch([
    db
      .prepare(
        `SELECT v.value_text AS name, count(*) AS n
         FROM property_values v JOIN property_definitions d ON d.id = v.definition_id
         WHERE d.classification_id = ?1 AND d.format = 'classification' AND v.value_text IS NOT NULL
         GROUP BY v.value_text`,
      )
      .bind(classificationId),
    db
      .prepare(
        "SELECT name, default_value FROM property_definitions WHERE classification_id = ?1 AND format = " +
          "'classification' AND default_value IS NOT NULL ORDER BY name",
      )
      .bind(classificationId),
  ]);
  const uses = new Map<string, string[]>();
  const note = (element: string, what: string) => {
    const list = uses.get(element);
    if (list) list.push(what);
    else uses.set(element, [what]);
  };
  for (const row of (values?.results ?? []) as { name: string; n: number }[]) {
    if (wanted.has(row.name)) note(row.name, `${row.n} stored value(s)`);
  }
  for (const row of (defaults?.results ?? []) as { name: string; default_value: string }[]) {
    const value = defaultElementName(row.default_value);
    if (value !== undefined && wanted.has(value)) note(value, `the default value of the property definition '${row.name}'`);
  }
  return [...uses].map(([element, whats]) => ({
    element,
    message: `The element '${element}' is used by ${whats.join(" and ")}.`,
  }));
}

/** default_value holds the default as JSON in its API form; for a classification, the element name. */
function defaultElementName(stored: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(stored);
    return typeof parsed === "string" ? parsed : undefined;
  } catch {
    return stored;
  }
}
