/**
 * Keys of unique names written before keys existed (migration 0009 keys ASCII names with SQLite's
 * lower(), which is what {@link nameKey} gives for ASCII, and leaves other names NULL): the minute cron
 * folds them here, where JavaScript's Unicode tables are, a batch per table and tick. A legacy pair
 * that folds to one key (two names the old ASCII-only rule let through) keeps the second key NULL
 * and is logged; renaming one of them resolves it.
 */
import type { Bindings } from "../env";
import { isUniqueViolation } from "./db";
import type { Logger } from "./logger";
import { nameKey } from "./unicode";

/** Every table with a folded key: table, the name column, the key column. All trusted constants. */
export const KEYED_NAMES = [
  ["categories", "name", "name_key"],
  ["classifications", "name", "name_key"],
  ["entity_types", "name", "name_key"],
  ["user_statuses", "name", "name_key"],
  ["data_types", "name", "name_key"],
  ["assets", "name", "name_key"],
  ["deviations", "reference_id", "reference_key"],
  ["activity_types", "name", "name_key"],
  ["job_configurations", "name", "name_key"],
  ["output_types", "name", "name_key"],
  ["model_definitions", "name", "name_key"],
  ["search_indices", "name", "name_key"],
] as const;

const BATCH = 200;

/** The unkeyed rows of every table, read in one batch (the cron runs each minute; usually all are empty). D1 allows only a few compound SELECT terms, so not one UNION. */
const UNKEYED = KEYED_NAMES.map(([table, column, key]) => `SELECT rowid AS r, ${column} AS name FROM ${table} WHERE ${key} IS NULL LIMIT ${BATCH}`);

interface Unkeyed {
  t: number;
  r: number;
  name: string;
}

export async function keyLegacyNames(env: Bindings, log: Logger): Promise<void> {
  const reads = await env.DB.batch<Omit<Unkeyed, "t">>(UNKEYED.map((sql) => env.DB.prepare(sql)));
  const results = reads.flatMap((read, t) => read.results.map((row) => ({ ...row, t })));
  if (results.length === 0) return;
  const update = (row: Unkeyed) => {
    const [table, , key] = KEYED_NAMES[row.t]!;
    return env.DB.prepare(`UPDATE ${table} SET ${key} = ?1 WHERE rowid = ?2 AND ${key} IS NULL`).bind(nameKey(row.name), row.r);
  };
  try {
    await env.DB.batch(results.map(update));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // A pair collides (the batch is all or nothing): key the rows one by one and report the pair.
    for (const row of results) {
      try {
        await update(row).run();
      } catch (inner) {
        if (!isUniqueViolation(inner)) throw inner;
        log.warn("two existing names fold to one key; rename one of them", { table: KEYED_NAMES[row.t]![0], name: row.name });
      }
    }
  }
}
