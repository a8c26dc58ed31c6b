/**
 * Relationships between deviations are symmetric: stored in both directions, so "related to" reads
 * the same from either side and each side's filter or read is one index lookup. A write replaces
 * one deviation's list and the reverse rows, and gives each deviation gained or lost a new etag
 * (its representation changed).
 */
import type { Database } from "../db/statements";
import { ApiError, type FieldProblem } from "../pkg/errors";
import { newEtagToken } from "../pkg/db";
import type { Relationship } from "./read";

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

/**
 * The statements that make `relatedIds` the relationships of `id`, both directions, keeping rows
 * that stay (and their createdAt); `previousIds` are the related ids before the write, so both the
 * gained and the lost deviations get a new etag.
 */
export function replaceRelationshipsStatements(
  db: Database,
  id: string,
  relatedIds: readonly string[],
  previousIds: readonly string[],
  now: string,
): D1PreparedStatement[] {
  const list = JSON.stringify(relatedIds);
  const touched = [...new Set([...relatedIds, ...previousIds])].filter(
    (other) => !(relatedIds.includes(other) && previousIds.includes(other)),
  );
  const statements = [
    db
      .prepare(
        `DELETE FROM deviation_relationships
          WHERE (deviation_id = ?1 AND related_id NOT IN (SELECT value FROM json_each(?2)))
             OR (related_id = ?1 AND deviation_id NOT IN (SELECT value FROM json_each(?2)))`,
      )
      .bind(id, list),
  ];
  if (relatedIds.length > 0) {
    statements.push(
      db
        .prepare(
          "INSERT OR IGNORE INTO deviation_relationships (deviation_id, related_id, created_at) SELECT ?1, value, ?3 FROM json_each(?2)",
        )
        .bind(id, list, now),
      db
        .prepare(
          "INSERT OR IGNORE INTO deviation_relationships (deviation_id, related_id, created_at) SELECT value, ?1, ?3 FROM json_each(?2)",
        )
        .bind(id, list, now),
    );
  }
  if (touched.length > 0) statements.push(touchDeviationsStatement(db, touched));
  return statements;
}

/** Gives deviations a new etag token (their representation changed through another entity). */
export function touchDeviationsStatement(db: Database, ids: readonly string[]): D1PreparedStatement {
  return db
    .prepare("UPDATE deviations SET etag = ?1 WHERE id IN (SELECT value FROM json_each(?2))")
    .bind(newEtagToken(), JSON.stringify(ids));
}

export function relationshipsProblem(errors: FieldProblem[]): ApiError {
  return new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
}
