/**
 * The inspection feed's record in D1: the owner of `activity_input_readings` (what became of each
 * activity input whose template names a channel). Written only by the feed (reconcile.ts), from the
 * events queue; read by GET /Activities/{id}/Readings.
 */
import type { Database } from "../../db/statements";

export const FEED_STATUSES = ["recorded", "cleared", "unresolved"] as const;
export type FeedStatus = (typeof FEED_STATUSES)[number];

export interface FeedRow {
  activity_id: string;
  input_template_id: string;
  status: FeedStatus;
  channel_id: string | null;
  timestamp: number | null;
  value: number | null;
  problem: string | null;
  activity_version: string;
  updated_at: string;
}

export async function feedRowsOf(db: Database, activityId: string): Promise<FeedRow[]> {
  const { results } = await db
    .prepare("SELECT * FROM activity_input_readings WHERE activity_id = ?1 ORDER BY input_template_id")
    .bind(activityId)
    .all<FeedRow>();
  return results;
}

/** A feed row with the input's name and the channel's number, as GET /Activities/{id}/Readings shows it. */
export interface FedInputRow extends FeedRow {
  name: string | null;
  channel_number: number | null;
}

/** What the feed made of an activity's inputs, in one batch with whether the activity exists (null: it does not). */
export async function fedInputsOf(db: Database, activityId: string): Promise<FedInputRow[] | null> {
  const [activity, rows] = await db.batch<FedInputRow>([
    db.prepare("SELECT 1 FROM activities WHERE id = ?1").bind(activityId),
    db
      .prepare(
        `SELECT r.*, i.name, ch.channel_number FROM activity_input_readings r
           LEFT JOIN activity_inputs i ON i.activity_id = r.activity_id AND i.input_template_id = r.input_template_id
           LEFT JOIN channels ch ON ch.id = r.channel_id WHERE r.activity_id = ?1 ORDER BY r.input_template_id`,
      )
      .bind(activityId),
  ]);
  if (!activity?.results.length) return null;
  return rows?.results ?? [];
}

/**
 * Records what the feed did with one input, unless a computation from a newer version of the activity
 * (its `updated_at`; a deleted activity's is "~deleted", after every date) was recorded already.
 */
export function saveFeedRowStatement(db: Database, row: FeedRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO activity_input_readings (activity_id, input_template_id, status, channel_id, timestamp, value, problem,
         activity_version, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
       ON CONFLICT (activity_id, input_template_id) DO UPDATE SET status = excluded.status, channel_id = excluded.channel_id,
         timestamp = excluded.timestamp, value = excluded.value, problem = excluded.problem,
         activity_version = excluded.activity_version, updated_at = excluded.updated_at
       WHERE excluded.activity_version >= activity_input_readings.activity_version`,
    )
    .bind(
      row.activity_id,
      row.input_template_id,
      row.status,
      row.channel_id,
      row.timestamp,
      row.value,
      row.problem,
      row.activity_version,
      row.updated_at,
    );
}

/** Forgets a deleted activity's inputs (after their readings were voided). */
export function deleteFeedRowsStatement(db: Database, activityId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM activity_input_readings WHERE activity_id = ?1").bind(activityId);
}
