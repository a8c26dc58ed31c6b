/**
 * Chattering (issue 33): the owner of monitor_alarm_streaks. A controller with `pendingFor` N enters
 * its alarm only after N consecutive evaluations holding, and with `clearAfter` N leaves it only after
 * N not holding; the evaluations counted so far live here, one row per controller and item while such
 * a streak runs (none otherwise, so a job that changes nothing writes nothing here either).
 *
 * A row remembers the last job it counted: an evaluation run again for the same job (a retry, a
 * redelivered job end) counts it once.
 */
import { jsonRowStatements, tableStatements, type Database, type Row } from "../../db/statements";
import { monitorAlarmStreaks } from "../../db/schema";

const streakTable = tableStatements(monitorAlarmStreaks);

export type StreakRow = Row<typeof monitorAlarmStreaks>;
export type StreakDirection = "enter" | "leave";

/** The streaks of a monitor (read in the evaluation's batch; map with {@link streakRow}). */
export function streaksOfMonitorStatement(db: Database, monitorRef: string): D1PreparedStatement {
  return db.prepare(`SELECT ${streakTable.columns} FROM monitor_alarm_streaks WHERE monitor_ref = ?1`).bind(monitorRef);
}

export const streakRow = (raw: Record<string, unknown>): StreakRow => streakTable.row(raw);

/**
 * How many consecutive evaluations, this job's included, have gone `direction` for a key: the
 * streak's count (this job already counted, or a new one), or 1 when there is none that way.
 */
export function countWith(streak: StreakRow | undefined, direction: StreakDirection, jobId: string): number {
  if (!streak || streak.direction !== direction) return 1;
  return streak.jobId === jobId ? streak.count : streak.count + 1;
}

/**
 * The streaks after an evaluation: `kept` are written (inserted or updated), every other streak of the
 * monitor that the evaluation read is removed (its alarm changed, it stopped, or its controller or item
 * is gone). Only what differs from what was read is written.
 */
export function streakStatements(
  db: Database,
  monitorRef: string,
  read: ReadonlyMap<string, StreakRow>,
  kept: readonly { key: string; itemId: string; direction: StreakDirection; count: number }[],
  jobId: string,
  now: string,
): D1PreparedStatement[] {
  const keptKeys = new Set(kept.map((k) => k.key));
  const removed = [...read.keys()].filter((key) => !keptKeys.has(key));
  const changed = kept.filter((k) => {
    const was = read.get(k.key);
    return !was || was.direction !== k.direction || was.count !== k.count || was.jobId !== jobId;
  });
  return [
    ...jsonRowStatements(db, "DELETE FROM monitor_alarm_streaks WHERE key IN (SELECT value FROM json_each(?1))", removed),
    // An upsert (hand-written: the kit inserts or ignores); `WHERE true` lets SQLite parse ON CONFLICT after a SELECT.
    ...jsonRowStatements(
      db,
      `INSERT INTO monitor_alarm_streaks (key, monitor_ref, item_id, direction, count, job_id, updated_at)
       SELECT json_extract(value, '$.key'), ?2, json_extract(value, '$.itemId'), json_extract(value, '$.direction'),
              json_extract(value, '$.count'), ?3, ?4 FROM json_each(?1) WHERE true
       ON CONFLICT (key) DO UPDATE SET direction = excluded.direction, count = excluded.count, job_id = excluded.job_id,
         updated_at = excluded.updated_at`,
      changed,
      monitorRef,
      jobId,
      now,
    ),
  ];
}
