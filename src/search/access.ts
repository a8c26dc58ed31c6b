/**
 * Who may see a document of an index. A document carries the read permissions a caller needs to see
 * it (`SearchDocument.permission`): for a standard index its resource's own read permission; for a
 * document a library wrote (a custom index, or a standard one fed by a library), the read permission
 * of every client the library had called, successfully, when it returned the document
 * (docs/decisions.md, "Search: documents carry their readers' permissions"). Stored as one text, the
 * sorted permission names joined by commas (a single permission is just its name), or null when the
 * document needs nothing beyond the index itself.
 */

/**
 * The part of a document's permission that stands for one user: the `files` client sees its owner's
 * view (their own files besides published ones), so what it returned may be shown to that user only.
 * Every caller holds their own (src/search/run-search.ts adds it to the searcher's permissions).
 */
export const userMark = (userId: string) => `user:${encodeURIComponent(userId)}`;

/** The stored form of a set of permissions: sorted, comma-joined; null for none. */
export function documentPermission(permissions: Iterable<string>): string | null {
  const sorted = [...new Set(permissions)].sort();
  return sorted.length > 0 ? sorted.join(",") : null;
}

/** Whether a caller holding `held` may see a document that needs `permission` (every one of them). */
export function mayReadDocument(permission: string | null, held: ReadonlySet<string> | readonly string[]): boolean {
  if (permission === null || permission === "") return true;
  const has = held instanceof Set ? (p: string) => held.has(p) : (p: string) => (held as readonly string[]).includes(p);
  return permission.split(",").every(has);
}
