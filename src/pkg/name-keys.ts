/**
 * Keys of unique names written before keys existed. Migration 0009 keyed ASCII names with SQLite's
 * lower(), which is what {@link nameKey} gives for ASCII, and left other names NULL: their key needs
 * NFC and Unicode case folding, which SQL in D1 cannot do. So keying them is a one-off step of the
 * Worker (migration 0015 records it in `one_off_steps`, `done` at once where nothing is unkeyed): the
 * minute cron runs {@link runNameKeyBackfill} while the step is pending, a batch per table and tick
 * past a per-table cursor, records it done once every table is past its last unkeyed row, and from
 * then on never reads a table again. A legacy pair that folds to one key (two names the old
 * ASCII-only rule let through) keeps the second key NULL and is logged once; renaming one of them
 * writes its key, as every write does.
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

/** The step's name in `one_off_steps` (migration 0015). */
export const NAME_KEY_STEP = "name-keys";

/**
 * The next unkeyed rows of every table past its cursor, read in one batch. D1 allows only a few compound SELECT terms, so not one
 * UNION.
 */
const UNKEYED = KEYED_NAMES.map(
  ([table, column, key]) =>
    `SELECT rowid AS r, ${column} AS name FROM ${table} WHERE ${key} IS NULL AND rowid > ?1 ORDER BY rowid LIMIT ${BATCH}`,
);

interface Unkeyed {
  t: number;
  r: number;
  name: string;
}

/** How far the step has come: per table of {@link KEYED_NAMES}, the last rowid it keyed (or tried to). */
export type NameKeyCursor = number[];

/**
 * Keys the next batch of unkeyed rows of every table past `cursor`; returns the cursor after them
 * and whether every table is done (fewer than a batch were left).
 */
export async function keyLegacyNames(
  env: Bindings,
  log: Logger,
  cursor: NameKeyCursor = KEYED_NAMES.map(() => 0),
): Promise<{ cursor: NameKeyCursor; finished: boolean }> {
  const reads = await env.DB.batch<Omit<Unkeyed, "t">>(UNKEYED.map((sql, t) => env.DB.prepare(sql).bind(cursor[t] ?? 0)));
  const results = reads.flatMap((read, t) => read.results.map((row) => ({ ...row, t })));
  const next = reads.map((read, t) => Math.max(cursor[t] ?? 0, ...read.results.map((row) => row.r)));
  const finished = reads.every((read) => read.results.length < BATCH);
  if (results.length === 0) return { cursor: next, finished };
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
  return { cursor: next, finished };
}

/** Set once this isolate has seen the step done: the cron then stops asking D1 at all. */
let doneHere = false;

/** The minute cron's part: one batch of {@link keyLegacyNames} while the step is pending, nothing once it is done. */
export async function runNameKeyBackfill(env: Bindings, log: Logger, now: Date): Promise<void> {
  if (doneHere) return;
  const step = await env.DB.prepare("SELECT state, cursor FROM one_off_steps WHERE name = ?1")
    .bind(NAME_KEY_STEP)
    .first<{ state: string; cursor: string | null }>();
  if (!step || step.state === "done") {
    doneHere = true;
    return;
  }
  const { cursor, finished } = await keyLegacyNames(env, log, step.cursor ? (JSON.parse(step.cursor) as NameKeyCursor) : undefined);
  await env.DB.prepare("UPDATE one_off_steps SET state = ?1, cursor = ?2, updated_at = ?3 WHERE name = ?4 AND state = 'pending'")
    .bind(finished ? "done" : "pending", JSON.stringify(cursor), now.toISOString(), NAME_KEY_STEP)
    .run();
  if (finished) {
    doneHere = true;
    log.info("one-off step done", { step: NAME_KEY_STEP });
  }
}
