/**
 * The causes of the events the monitoring loop writes on deviations: the owner of
 * monitor_event_causes. Each row names the monitor job behind an event and its trigger depth, so the
 * deviationChanged trigger never starts that monitor for it and starts others one level deeper
 * (../triggers.ts). Rows are kept as long as the outbox keeps its events.
 */
import { jsonRowStatements, tableStatements, type Database } from "../../db/statements";
import { monitorEventCauses } from "../../db/schema";

const causeTable = tableStatements(monitorEventCauses);

/** The job behind events: its monitor, its id and its trigger depth. */
export interface CausingJob {
  id: string;
  monitorRef: string;
  triggerDepth: number;
}

/** Causes of events the same batch writes unconditionally (a deviation the loop raised). */
export function eventCausesStatements(db: Database, eventIds: readonly string[], job: CausingJob, now: string): D1PreparedStatement[] {
  return causeTable.insertMany(
    db,
    eventIds.map((eventId) => ({ eventId, monitorRef: job.monitorRef, monitorJobId: job.id, depth: job.triggerDepth, createdAt: now })),
    { orIgnore: true },
  );
}

/**
 * Causes of events the same batch may not have written (guarded ones, such as a deviation's status
 * set on leaving an alarm): a row only for an event the outbox now holds (hand-written: the
 * condition reads the outbox).
 */
export function writtenEventCausesStatements(
  db: Database,
  eventIds: readonly string[],
  job: CausingJob,
  now: string,
): D1PreparedStatement[] {
  const rows = eventIds.map((eventId) => ({ eventId, monitorRef: job.monitorRef, jobId: job.id, depth: job.triggerDepth, now }));
  return jsonRowStatements(
    db,
    `INSERT OR IGNORE INTO monitor_event_causes (event_id, monitor_ref, monitor_job_id, depth, created_at)
     SELECT json_extract(c.value, '$.eventId'), json_extract(c.value, '$.monitorRef'), json_extract(c.value, '$.jobId'),
            json_extract(c.value, '$.depth'), json_extract(c.value, '$.now')
       FROM json_each(?1) c WHERE EXISTS (SELECT 1 FROM outbox o WHERE o.id = json_extract(c.value, '$.eventId'))`,
    rows,
  );
}

/** The cause of an event, if the loop wrote it. */
export async function causeOf(db: Database, eventId: string): Promise<{ monitorRef: string; depth: number } | null> {
  const row = await db
    .prepare(`SELECT ${causeTable.columns} FROM monitor_event_causes WHERE event_id = ?1`)
    .bind(eventId)
    .first<Record<string, unknown>>();
  if (!row) return null;
  const { monitorRef, depth } = causeTable.row(row);
  return { monitorRef, depth };
}

/** Removes the causes of events older than `before` (the outbox's retention): the minute cron's pruning. */
export function pruneEventCausesStatement(db: Database, before: string): D1PreparedStatement {
  return db.prepare("DELETE FROM monitor_event_causes WHERE created_at < ?1").bind(before);
}
