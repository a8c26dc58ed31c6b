/**
 * Relationships between deviations are symmetric: stored in both directions, so "related to" reads
 * the same from either side and each side's filter or read is one index lookup. This checks what a
 * write asks for; the statements that store it are the store's (replaceRelationshipsStatements).
 */
import type { Database } from "../db/statements";
import { type FieldProblem } from "../pkg/errors";
import type { Relationship } from "./store";

/**
 * Checks the requested related ids: no self-link, no duplicate, each exists. Returns them with
 * their referenceIds, or the problems found.
 */
export async function checkRelationships(
  db: Database,
  selfId: string,
  requested: readonly { id: string }[],
): Promise<{ related: Relationship[]; errors: FieldProblem[] }> {
  const ids = requested.map((r) => r.id.toLowerCase());
  const errors: FieldProblem[] = [];
  if (ids.length === 0) return { related: [], errors };
  const { results } = await db
    .prepare("SELECT id, reference_id FROM deviations WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify([...new Set(ids)]))
    .all<{ id: string; reference_id: string }>();
  const found = new Map(results.map((r) => [r.id, r.reference_id]));
  const seen = new Set<string>();
  const related: Relationship[] = [];
  ids.forEach((id, index) => {
    const field = `body.relationships.${index}.id`;
    if (id === selfId) errors.push({ field, rule: "self", message: "A deviation cannot be related to itself." });
    else if (seen.has(id)) errors.push({ field, rule: "unique", message: `The deviation ${id} is listed more than once.` });
    else if (!found.has(id)) errors.push({ field, rule: "exists", message: `The deviation ${id} does not exist.` });
    else related.push({ id, referenceId: found.get(id)! });
    seen.add(id);
  });
  return { related, errors };
}
