/**
 * The readable numbers of models (MOD-n), monitors (MON-n) and channels (their channelNumber): the owner of `counters`. A number is
 * taken with one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`, which SQLite runs atomically, so
 * it is unique under concurrency; a create that fails after taking its number leaves a gap.
 */
import type { Database } from "../db/statements";

/** The sequences the area numbers. */
type Sequence = "model" | "monitor" | "channel";

/** The next number of a sequence, atomically (hand-written: the increment is computed in SQL). */
export async function nextNumber(db: Database, sequence: Sequence): Promise<number> {
  const row = await db
    .prepare("INSERT INTO counters (name, value) VALUES (?1, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value")
    .bind(sequence)
    .first<{ value: number }>();
  if (!row) throw new Error(`counter ${sequence} returned no value`);
  return row.value;
}
