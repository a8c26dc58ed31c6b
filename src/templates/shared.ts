/** Pieces every template resource shares: dependent ordering, metadata. */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { ApiError, type FieldProblem } from "../pkg/errors";

export const OrderSchema = z.number().int().min(0).max(1_000_000).optional().openapi({
  description: "Position among its siblings (ascending; ties by id). Default: its index in a list, or after the last one when added alone.",
});

/**
 * The representation ETag of a revision: the row's etag, marked when the revision is frozen, so a
 * client's cached copy (and its If-Match) stops matching when a work item or activity starts to use
 * it, since the next edit would then create a revision instead of changing this one.
 */
export function revisionEtag(rowEtag: string, inUse: boolean): string {
  return inUse ? `${rowEtag}-f` : rowEtag;
}

/** Positions for a list of dependents: the given order, else the index. */
export function positions<T extends { order?: number | undefined }>(items: readonly T[]): number[] {
  return items.map((item, index) => item.order ?? index);
}

/** Ids for dependents: the given id (lower-cased), else a new one; duplicates are reported on `field`. */
export function dependentIds(
  items: readonly { id?: string | undefined }[],
  field: (index: number) => string,
  newId: () => string,
): { ids: string[]; problems: FieldProblem[] } {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  const ids = items.map((item, index) => {
    const id = item.id?.toLowerCase() ?? newId();
    if (seen.has(id)) problems.push({ field: field(index), rule: "duplicate", message: `The id ${id} is given more than once.` });
    seen.add(id);
    return id;
  });
  return { ids, problems };
}

export function throwProblems(problems: readonly FieldProblem[]): void {
  if (problems.length === 0) return;
  throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: [...problems] });
}

/** Ids among `ids` that name no latest revision in `table` (work_templates or activity_templates). */
export async function missingTemplates(
  db: Database,
  table: "activity_templates" | "work_templates",
  ids: readonly string[],
): Promise<Set<string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Set();
  const { results } = await db
    .prepare(`SELECT id FROM ${table} WHERE is_latest = 1 AND id IN (SELECT value FROM json_each(?1))`)
    .bind(JSON.stringify(unique))
    .all<{ id: string }>();
  const found = new Set(results.map((r) => r.id));
  return new Set(unique.filter((id) => !found.has(id)));
}

export function parseMetadata(text: string | null): Record<string, unknown> | null {
  return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
}

export function metadataText(value: Record<string, unknown> | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
