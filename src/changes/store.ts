import type { Database } from "../db/statements";
/** The change feed's reads of the outbox (the feed is the outbox, kept 7 days). */

export interface ChangeRow {
  seq: number;
  entity_kind: string;
  entity_id: string;
  action: "created" | "updated" | "deleted";
  occurred_at: string;
  payload: string;
}

/** The oldest and newest cursors the outbox holds (null when it holds none). */
export async function outboxBounds(db: Database): Promise<{ oldest: number | null; newest: number | null }> {
  const row = await db
    .prepare("SELECT min(seq) AS oldest, max(seq) AS newest FROM outbox")
    .first<{ oldest: number | null; newest: number | null }>();
  return { oldest: row?.oldest ?? null, newest: row?.newest ?? null };
}

/**
 * The newest cursor ever given when the outbox holds no change (all pruned): the outbox's
 * AUTOINCREMENT sequence never goes back, so sqlite_sequence remembers it.
 */
export async function newestEverAssigned(db: Database): Promise<number> {
  try {
    const row = await db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").first<{ seq: number }>();
    return row?.seq ?? 0;
  } catch {
    return Number.MAX_SAFE_INTEGER; // unreadable here: do not refuse a cursor that may be right
  }
}

/** Up to `limit` changes after cursor `after` of the given kinds, oldest first. */
export async function changesAfter(db: Database, after: number, kinds: readonly string[], limit: number): Promise<ChangeRow[]> {
  const { results } = await db
    .prepare(
      `SELECT seq, entity_kind, entity_id, action, occurred_at, payload FROM outbox
        WHERE seq > ?1 AND entity_kind IN (SELECT value FROM json_each(?3)) ORDER BY seq LIMIT ?2`,
    )
    .bind(after, limit, JSON.stringify(kinds))
    .all<ChangeRow>();
  return results;
}
