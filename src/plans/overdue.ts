/**
 * Overdue work items (issue 36): a work item past its due date and not completed (nor closed or
 * cancelled) is announced once with an `overdue` event (the change feed and webhooks hear it), and,
 * when an inspection plan with a reminder interval generated it, again at that interval until it is
 * completed. The owner of `overdue_work_items` (one row per announced item: its reminders and the next
 * one's time) and `overdue_scans` (how far the scan has read).
 *
 * Each minute (the plans' tick, ./generate.ts) reads the work items whose due date passed since the last
 * scan, or that were created or changed since it with a due date already past (a planner moving a due
 * date into the past, or reopening an item whose date has passed): three range scans of work_items'
 * indexes, never a scan of every item; and the reminders whose time has come (a range scan).
 */
import { tableStatements } from "../db/statements";
import { overdueWorkItems } from "../db/schema";
import type { Bindings } from "../env";
import { guardedOutboxStatements, serviceEventContext, type EventContext } from "../events/outbox";
import type { Logger } from "../pkg/logger";
import { platform } from "../platform/services";

const overdueTable = tableStatements(overdueWorkItems);
const SCAN = "overdue";
/** Items read per query per tick (what is left is found the next minute). */
const LIMIT = 200;
/** Statuses that end a work item's being overdue. */
export const NOT_OVERDUE_STATUSES = ["completed", "closed", "cancelled"] as const;
const DAY_MS = 86_400_000;
/** How far before the last scan each scan reads again (see runOverdue). */
const SCAN_OVERLAP_MS = 60_000;

interface OverdueRow {
  id: string;
  display_name: string;
  due_date: string;
  plan_id: string | null;
  reminder_interval_days: number | null;
}

const RANGES = {
  due: "w.due_date > ?1 AND w.due_date <= ?2",
  created: "w.created_at > ?1 AND w.due_date <= ?2",
  updated: "w.updated_at > ?1 AND w.due_date <= ?2",
} as const;

const candidatesSql = (range: keyof typeof RANGES) => `
  SELECT w.id, w.display_name, w.due_date, pi.plan_id, p.reminder_interval_days FROM work_items w
    LEFT JOIN inspection_plan_items pi ON pi.work_item_id = w.id
    LEFT JOIN inspection_plans p ON p.id = pi.plan_id
   WHERE ${RANGES[range]}
     AND w.status NOT IN (SELECT value FROM json_each(?3))
     AND NOT EXISTS (SELECT 1 FROM overdue_work_items o WHERE o.work_item_id = w.id)
   LIMIT ${LIMIT}`;

function payload(row: { id: string; display_name: string; due_date: string; plan_id: string | null }, reminder: number, now: string) {
  // Partial (the audit trail merges it into the work item's state): the item's `overdue` as of this announcement.
  return {
    id: row.id,
    displayName: row.display_name,
    dueDate: row.due_date,
    overdue: { at: now, reminder, inspectionPlanId: row.plan_id },
  };
}

export interface OverdueReport {
  announced: number;
  reminded: number;
}

/** One tick: announces the newly overdue items and sends the reminders due. */
export async function runOverdue(env: Bindings, log: Logger): Promise<OverdueReport> {
  const db = env.DB;
  const now = platform().clock.now().toISOString();
  const events = serviceEventContext("work items past their due date", now);
  const report: OverdueReport = { announced: 0, reminded: 0 };

  const scan = await db.prepare("SELECT scanned_until FROM overdue_scans WHERE name = ?1").bind(SCAN).first<{ scanned_until: string }>();
  // The first scan starts now (less the overlap): items overdue before the service knew of overdue are not
  // announced all at once.
  // Each range reads back a minute before the last scan: a write takes its time (created_at, updated_at)
  // before it commits, so one that committed just after the last scan's read carries an earlier time. An
  // item read twice is announced once (the NOT EXISTS, and the insert that guards the event).
  const from = new Date(Date.parse(scan?.scanned_until ?? now) - SCAN_OVERLAP_MS).toISOString();
  const statuses = JSON.stringify(NOT_OVERDUE_STATUSES);
  const ranges = await db.batch<OverdueRow>(
    (Object.keys(RANGES) as (keyof typeof RANGES)[]).map((range) => db.prepare(candidatesSql(range)).bind(from, now, statuses)),
  );
  const found = new Map<string, OverdueRow>();
  for (const { results } of ranges) for (const row of results) found.set(row.id, row);
  const statements: D1PreparedStatement[] = [];
  for (const row of found.values()) statements.push(...announce(env, events, row, now));
  // The scan moves on only when it read everything up to now (else the rest is read next minute).
  const complete = ranges.every(({ results }) => results.length < LIMIT);
  if (complete) statements.push(scanUpsert(env, now));
  if (statements.length > 0) await db.batch(statements);
  report.announced = found.size;

  const { results: due } = await db
    .prepare(
      `SELECT o.work_item_id AS id, o.reminders, w.display_name, w.due_date, w.status, pi.plan_id, p.reminder_interval_days
         FROM overdue_work_items o
         LEFT JOIN work_items w ON w.id = o.work_item_id
         LEFT JOIN inspection_plan_items pi ON pi.work_item_id = o.work_item_id
         LEFT JOIN inspection_plans p ON p.id = pi.plan_id
        WHERE o.next_reminder_at <= ?1 ORDER BY o.next_reminder_at LIMIT ${LIMIT}`,
    )
    .bind(now)
    .all<OverdueRow & { reminders: number; status: string | null }>();
  const reminders: D1PreparedStatement[] = [];
  for (const row of due) {
    const done = row.status === null || (NOT_OVERDUE_STATUSES as readonly string[]).includes(row.status);
    if (done || row.reminder_interval_days === null) {
      reminders.push(overdueTable.update(db, { nextReminderAt: null }, { workItemId: row.id }));
      continue;
    }
    const reminder = row.reminders + 1;
    reminders.push(
      overdueTable.update(
        db,
        { reminders: reminder, nextReminderAt: new Date(Date.parse(now) + row.reminder_interval_days * DAY_MS).toISOString() },
        { workItemId: row.id, reminders: row.reminders },
      ),
      ...guardedOutboxStatements(
        db,
        events,
        { entityKind: "workItem", entityId: row.id, action: "overdue", payload: payload(row, reminder, now), partial: true },
        "previousChanged",
      ),
    );
    report.reminded++;
  }
  if (reminders.length > 0) await db.batch(reminders);
  if (report.announced > 0 || report.reminded > 0) log.info("overdue work items", { ...report });
  return report;
}

function announce(env: Bindings, events: EventContext, row: OverdueRow, now: string): D1PreparedStatement[] {
  const next = row.reminder_interval_days === null ? null : new Date(Date.parse(now) + row.reminder_interval_days * DAY_MS).toISOString();
  return [
    overdueTable.insertOrIgnore(env.DB, { workItemId: row.id, dueAt: row.due_date, announcedAt: now, reminders: 0, nextReminderAt: next }),
    ...guardedOutboxStatements(
      env.DB,
      events,
      { entityKind: "workItem", entityId: row.id, action: "overdue", payload: payload(row, 0, now), partial: true },
      "previousChanged",
    ),
  ];
}

function scanUpsert(env: Bindings, now: string): D1PreparedStatement {
  return env.DB.prepare(
    "INSERT INTO overdue_scans (name, scanned_until) VALUES (?1, ?2) " +
      "ON CONFLICT (name) DO UPDATE SET scanned_until = excluded.scanned_until",
  ).bind(SCAN, now);
}
