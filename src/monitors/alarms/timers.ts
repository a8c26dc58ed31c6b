/**
 * The alarms' clock (issue 33), run by the minute dispatcher (src/pkg/schedule, kind `alarm-timers`, one
 * fixed every-minute schedule): shelvings end at their time and escalations are emitted when due, by the
 * clock and not by the next evaluation, so an alarm whose monitor runs once a day still unshelves and
 * escalates on time.
 *
 * - **Expiry.** Each shelving whose `shelved_until` has come ends: the alarm's history says `unshelved`
 *   (by no one, "Shelving expired"), and its `unshelved` event is written unless it is a held alarm that
 *   cleared while shelved (nobody was told of it). A held alarm still active is released (./release.ts):
 *   its actions run and its `entered` event is written now.
 * - **Escalation.** Each unshelved alarm whose `escalate_at` has come emits `escalated` (with its number),
 *   and the next is due `escalate_every_minutes` later (from now, if the service was down meanwhile:
 *   one event, not one per missed interval). Acknowledging or clearing an alarm sets `escalate_at` NULL.
 *
 * Both find their rows by a range scan of their index. Each change is guarded on the version read, and
 * its history entry and event on the version written, so a person's action racing the clock wins and
 * the clock changes nothing (it finds the alarm again at the next minute if still due). A release runs in
 * a batch of its own behind an assertion of the version read, since its actions are not guarded.
 */
import type { Bindings } from "../../env";
import { serviceEventContext, type EventContext } from "../../events/outbox";
import { assertStatement, isAssertionFailure, newEtagToken } from "../../pkg/db";
import type { Logger } from "../../pkg/logger";
import type { DueRun, ScheduleKind } from "../../pkg/schedule";
import { platform } from "../../platform/services";
import { prepareRelease } from "./release";
import {
  changeAlarmStatement,
  dueEscalationsStatement,
  expiredShelvesStatement,
  minutesAfter,
  NOT_SHELVED,
  versionedEventsStatements,
  versionedHistoryStatements,
  type AlarmChange,
  type VersionedEntry,
  type VersionedEvent,
} from "./store";
import { alarmRecord, toAlarm, type AlarmRecord } from "./view";

export const ALARM_TIMERS_KIND = "alarm-timers";

/** Alarms read per round, and rounds per tick (the rest wait for the next minute). */
const ROUND = 100;
const ROUNDS = 20;

interface Report {
  unshelved: number;
  released: number;
  escalated: number;
}

const history = (events: EventContext, row: AlarmRecord["row"], action: string, comment: string, details: unknown) => ({
  id: events.uuid(),
  alarmId: row.id,
  monitorRef: row.monitorRef,
  itemId: row.itemId,
  controller: row.controller,
  action,
  actorId: null,
  actorName: null,
  comment,
  details: JSON.stringify(details),
  recordedAt: events.now,
});

const payload = (events: EventContext, after: AlarmRecord, comment: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...toAlarm(after), at: events.now, by: null, comment, ...extra });

/** Ends the shelvings due by `now`. */
async function expireShelvings(env: Bindings, events: EventContext, log: Logger, report: Report): Promise<void> {
  const db = env.DB;
  for (let round = 0; round < ROUNDS; round++) {
    const { results: expired } = await expiredShelvesStatement(db, events.now, ROUND).all<Record<string, unknown>>();
    const records = expired.map(alarmRecord);
    if (records.length === 0) return;
    const changes: D1PreparedStatement[] = [];
    const entries: VersionedEntry[] = [];
    const announced: VersionedEvent[] = [];
    for (const record of records) {
      const { row } = record;
      const etag = newEtagToken();
      const comment = `Shelving expired at ${row.shelvedUntil}.`;
      const details = { previous: { mode: row.shelveMode, until: row.shelvedUntil, by: { id: row.shelvedById, name: row.shelvedByName } } };
      if (row.held && row.activeKey !== null) {
        // A release writes actions that are not guarded themselves: its own batch, behind an assertion of the version read.
        try {
          const release = await prepareRelease(db, events, null, record, etag);
          const change: AlarmChange = { ...NOT_SHELVED, ...release.change };
          const after: AlarmRecord = { ...record, row: { ...row, ...change, etag, updatedAt: events.now } };
          await db.batch([
            assertStatement(db, "EXISTS (SELECT 1 FROM monitor_alarms WHERE id = ?1 AND etag = ?2)", row.id, row.etag),
            changeAlarmStatement(db, { id: row.id, version: row.etag }, change, etag, events.now),
            ...versionedHistoryStatements(db, [{ etag, entry: history(events, row, "unshelved", comment, details) }]),
            ...versionedEventsStatements(db, events, "unshelved", [{ id: row.id, etag, payload: payload(events, after, comment) }]),
            ...release.statements,
          ]);
          report.released++;
          report.unshelved++;
        } catch (error) {
          if (!isAssertionFailure(error)) throw error;
          // Changed meanwhile (a person): read again in the next round.
        }
        continue;
      }
      const after: AlarmRecord = { ...record, row: { ...row, ...NOT_SHELVED, etag, updatedAt: events.now } };
      changes.push(changeAlarmStatement(db, { id: row.id, version: row.etag }, NOT_SHELVED, etag, events.now));
      entries.push({ etag, entry: history(events, row, "unshelved", comment, details) });
      // A held alarm that cleared while shelved was never announced, and its shelving's end is not either.
      if (!row.held) announced.push({ id: row.id, etag, payload: payload(events, after, comment) });
    }
    if (changes.length > 0) {
      const results = await db.batch([
        ...changes,
        ...versionedHistoryStatements(db, entries),
        ...versionedEventsStatements(db, events, "unshelved", announced),
      ]);
      const done = results.slice(0, changes.length).filter((r) => (r.meta.changes ?? 0) > 0).length;
      report.unshelved += done;
      if (done < changes.length) log.info("alarm shelvings changed while they expired; read again", { raced: changes.length - done });
    }
    if (records.length < ROUND) return;
  }
}

/** Emits the escalations due by `now`. */
async function escalate(env: Bindings, events: EventContext, report: Report): Promise<void> {
  const db = env.DB;
  for (let round = 0; round < ROUNDS; round++) {
    const { results: due } = await dueEscalationsStatement(db, events.now, ROUND).all<Record<string, unknown>>();
    const records = due.map(alarmRecord);
    if (records.length === 0) return;
    const changes: D1PreparedStatement[] = [];
    const entries: VersionedEntry[] = [];
    const escalated: VersionedEvent[] = [];
    for (const record of records) {
      const { row } = record;
      const every = row.escalateEveryMinutes ?? row.escalateAfterMinutes ?? 60;
      const dueAt = row.escalateAt ?? events.now;
      // The next one an interval after this one; after a pause of the service, an interval from now (not one per missed interval).
      const following = minutesAfter(dueAt, every);
      const next = following > events.now ? following : minutesAfter(events.now, every);
      const count = row.escalations + 1;
      const change: AlarmChange = { escalations: count, escalateAt: next };
      const etag = newEtagToken();
      const after: AlarmRecord = { ...record, row: { ...row, ...change, etag, updatedAt: events.now } };
      const comment =
        `Unacknowledged since ${row.enteredAt}: escalation ${count}` +
        (count > 1 ? ` (every ${every} minutes)` : "") +
        `; next at ${next}.`;
      changes.push(changeAlarmStatement(db, { id: row.id, version: row.etag }, change, etag, events.now));
      entries.push({ etag, entry: history(events, row, "escalated", comment, { escalation: count, dueAt, nextAt: next }) });
      escalated.push({ id: row.id, etag, payload: payload(events, after, comment, { escalation: count, dueAt }) });
    }
    const results = await db.batch([
      ...changes,
      ...versionedHistoryStatements(db, entries),
      ...versionedEventsStatements(db, events, "escalated", escalated),
    ]);
    const done = results.slice(0, changes.length).filter((r) => (r.meta.changes ?? 0) > 0).length;
    report.escalated += done;
    // Rows that raced a person stay due only if still unacknowledged; a round that changed nothing would read them again.
    if (done === 0 || records.length < ROUND) return;
  }
}

/** One minute of the alarms' clock, at the platform's time: expiries first (an unshelved alarm may then escalate at once). */
export async function runAlarmTimers(env: Bindings, log: Logger, now: Date = platform().clock.now()): Promise<Report> {
  const events = serviceEventContext("alarm timers", now.toISOString());
  const report: Report = { unshelved: 0, released: 0, escalated: 0 };
  await expireShelvings(env, events, log, report);
  await escalate(env, events, report);
  if (report.unshelved + report.escalated > 0) log.info("alarm timers", { ...report });
  return report;
}

/** The dispatcher's kind: one fixed schedule, every minute; a run handles whatever is due then (run twice, it finds nothing more). */
export const alarmTimersKind: ScheduleKind = {
  kind: ALARM_TIMERS_KIND,
  fixed: [{ ownerId: "alarms", rule: { cron: "* * * * *" } }],
  async start(env: Bindings, _runs: readonly DueRun[], log: Logger) {
    await runAlarmTimers(env, log);
  },
};
