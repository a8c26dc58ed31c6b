/**
 * Alarms in D1 (issues 25 and 33): the owner of monitor_alarms (one row per episode of a controller
 * holding for a population item, and the resource people work: severity, acknowledgement, assignee,
 * shelving, escalation) and monitor_alarm_events (its history: entries and exits, and what people and
 * the clock did). The monitoring loop (./evaluation.ts), the workflow (./workflow.ts) and the alarm
 * timers (./timers.ts) compose these statements into their batches.
 *
 * Never twice: `active_key` ({item}:{controller}) is set while the alarm is active, under a unique
 * index, so entering an active alarm again fails its whole batch; a leave is guarded on its history
 * entry (unique per alarm for entries, exits and releases), and what follows a leave is guarded on
 * that entry. A change of a version (a person's action, an escalation, an expiry) is guarded on the
 * version read, and its history entry and event on the version it wrote.
 */
import { jsonChunks, jsonRowStatements, tableStatements, type Database, type Insert, type Row } from "../../db/statements";
import { monitorAlarmEvents, monitorAlarms } from "../../db/schema";
import { outboxForRowsStatements, type EventContext } from "../../events/outbox";
import type { EventAction } from "../../events/kinds";
import { SEVERITIES } from "./severity";
import { storedEnum } from "../stored";
import type { ActiveAlarm } from "./active";

const alarmTable = tableStatements(monitorAlarms);
const historyTable = tableStatements(monitorAlarmEvents);

/** The outbox entity kind of alarm events (docs/decisions.md, "Alarm events"). */
export const ALARM_EVENT_KIND = "alarm";

export type AlarmRow = Row<typeof monitorAlarms>;
export type AlarmValues = Insert<typeof monitorAlarms>;
export type HistoryRow = Row<typeof monitorAlarmEvents>;
export type HistoryValues = Insert<typeof monitorAlarmEvents>;

/** The alarm's columns, as {@link alarmRow} reads them (prefix them with the alias of a join). */
export const ALARM_COLUMNS = alarmTable.columns;
/** An alarm row read with every column (a list page among them), typed by the schema. */
export const alarmRow = (raw: Record<string, unknown>): AlarmRow => alarmTable.row(raw);
/** An entry of an alarm's history read with every column (a list page among them), typed by the schema. */
export const historyEntryRow = (raw: Record<string, unknown>): HistoryRow => historyTable.row(raw);
export const HISTORY_COLUMNS = historyTable.columns;

/** The key an active alarm holds: one per population item and controller name. */
export const activeKey = (itemId: string, controller: string) => `${itemId}:${controller}`;

/** What the loop reads of an active alarm. */
export type ActiveAlarmRow = Pick<
  AlarmRow,
  | "id"
  | "itemId"
  | "controller"
  | "enteredAt"
  | "enteredJobId"
  | "deviationId"
  | "deviationStatus"
  | "workItemId"
  | "severity"
  | "held"
  | "shelveMode"
  | "acknowledgedAt"
>;

const ACTIVE_COLUMNS =
  "id, item_id, controller, entered_at, entered_job_id, deviation_id, deviation_status, work_item_id, severity, held, shelve_mode, " +
  "acknowledged_at";

/** One active alarm as read with ACTIVE_COLUMNS, typed by the schema's mapper. */
export function activeAlarmRow(raw: Record<string, unknown>): ActiveAlarmRow {
  const row = alarmTable.row(raw);
  return {
    id: row.id,
    itemId: row.itemId,
    controller: row.controller,
    enteredAt: row.enteredAt,
    enteredJobId: row.enteredJobId,
    deviationId: row.deviationId,
    deviationStatus: row.deviationStatus,
    workItemId: row.workItemId,
    severity: row.severity,
    held: row.held,
    shelveMode: row.shelveMode,
    acknowledgedAt: row.acknowledgedAt,
  };
}

/** The active alarms of monitors, in the order they were entered (ids as one JSON parameter). */
export function activeAlarmsOfMonitorsStatement(db: Database, monitorIds: readonly string[]): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${ACTIVE_COLUMNS} FROM monitor_alarms
        WHERE monitor_ref IN (SELECT value FROM json_each(?1)) AND active_key IS NOT NULL ORDER BY entered_at, controller`,
    )
    .bind(JSON.stringify([...new Set(monitorIds)]));
}

/** The active alarms of the items of populations (ids as one JSON parameter). */
export function activeAlarmsOfPopulationsStatement(db: Database, populationIds: readonly string[]): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${ACTIVE_COLUMNS} FROM monitor_alarms
        WHERE item_id IN (SELECT id FROM population_items WHERE population_id IN (SELECT value FROM json_each(?1)))
          AND active_key IS NOT NULL ORDER BY entered_at, controller`,
    )
    .bind(JSON.stringify(populationIds));
}

/** The active alarms by item, as an item shows them, from rows of {@link ACTIVE_COLUMNS}. */
export function alarmsByItem(rows: readonly ActiveAlarmRow[]): Map<string, ActiveAlarm[]> {
  const byItem = new Map<string, ActiveAlarm[]>();
  for (const a of rows) {
    const list = byItem.get(a.itemId) ?? [];
    list.push({
      id: a.id,
      controller: a.controller,
      severity: storedEnum(SEVERITIES, a.severity, "monitor_alarms.severity"),
      enteredAt: a.enteredAt,
      monitorJobId: a.enteredJobId,
      deviationId: a.deviationId,
      workItemId: a.workItemId,
      acknowledged: a.acknowledgedAt !== null,
      shelved: a.shelveMode !== null,
    });
    byItem.set(a.itemId, list);
  }
  return byItem;
}

/** The active alarms of the given items (one statement, ids as one JSON parameter). */
export async function activeAlarmsOfItems(db: Database, itemIds: readonly string[]): Promise<Map<string, ActiveAlarm[]>> {
  if (itemIds.length === 0) return new Map();
  const { results } = await db
    .prepare(
      `SELECT ${ACTIVE_COLUMNS} FROM monitor_alarms
        WHERE item_id IN (SELECT value FROM json_each(?1)) AND active_key IS NOT NULL ORDER BY entered_at, controller`,
    )
    .bind(JSON.stringify([...new Set(itemIds)]))
    .all<Record<string, unknown>>();
  return alarmsByItem(results.map(activeAlarmRow));
}

/** A timed shelving still in force on a cleared alarm: an alarm its controller enters again for the item inherits it. */
export type ShelfRow = Pick<
  AlarmRow,
  "id" | "itemId" | "controller" | "shelveMode" | "shelvedAt" | "shelvedUntil" | "shelvedById" | "shelvedByName" | "shelveComment"
>;

/**
 * The cleared alarms of a monitor that still carry a timed shelving (read in the evaluation's batch; map
 * with {@link alarmRow}). A range scan of the shelved alarms' index: few alarms are shelved at a time.
 */
export function shelvesOfMonitorStatement(db: Database, monitorRef: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT id, item_id, controller, shelve_mode, shelved_at, shelved_until, shelved_by_id, shelved_by_name, shelve_comment
         FROM monitor_alarms WHERE shelved_until IS NOT NULL AND monitor_ref = ?1 AND active_key IS NULL AND shelve_mode = 'timed'
        ORDER BY shelved_until DESC`,
    )
    .bind(monitorRef);
}

// --- Entering and leaving (the monitoring loop) ------------------------------------------------------

/** An alarm a job enters: its row and its first history entry. `conditions` is the JSON of what decided it. */
export interface EnteredAlarm {
  id: string;
  historyId: string;
  itemId: string;
  assetId: string;
  plantId: string | null;
  controller: string;
  severity: string;
  conditions: string;
  deviationId: string | null;
  deviationStatus: string | null;
  workItemId: string | null;
  /** Entered under a shelving in force for its controller and item: the shelving it inherits (its actions and events held). */
  shelf: ShelfRow | null;
  escalation: { afterMinutes: number; everyMinutes: number } | null;
  etag: string;
}

export const minutesAfter = (at: string, minutes: number) => new Date(Date.parse(at) + minutes * 60_000).toISOString();

/**
 * The alarm rows and their `entered` history entries. The alarm rows come first: put them first in
 * the batch, so a second entry of an active alarm (unique `active_key`) fails it before anything else.
 */
export function enterAlarmsStatements(
  db: Database,
  alarms: readonly EnteredAlarm[],
  job: { id: string; monitorRef: string; sourceKind: "monitor" | "channel" },
  now: string,
): D1PreparedStatement[] {
  return [
    ...alarmTable.insertMany(
      db,
      alarms.map((a) => ({
        id: a.id,
        sourceKind: job.sourceKind,
        monitorRef: job.monitorRef,
        itemId: a.itemId,
        assetId: a.assetId,
        plantId: a.plantId,
        controller: a.controller,
        severity: a.severity,
        activeKey: activeKey(a.itemId, a.controller),
        enteredJobId: job.id,
        enteredAt: now,
        enteredValues: a.conditions,
        deviationId: a.deviationId,
        deviationStatus: a.deviationStatus,
        workItemId: a.workItemId,
        held: a.shelf !== null,
        shelveMode: a.shelf?.shelveMode ?? null,
        shelvedAt: a.shelf?.shelvedAt ?? null,
        shelvedUntil: a.shelf?.shelvedUntil ?? null,
        shelvedById: a.shelf?.shelvedById ?? null,
        shelvedByName: a.shelf?.shelvedByName ?? null,
        shelveComment: a.shelf?.shelveComment ?? null,
        // A held alarm escalates from its release: nobody has been told of it before.
        escalateAt: a.escalation && !a.shelf ? minutesAfter(now, a.escalation.afterMinutes) : null,
        escalateAfterMinutes: a.escalation?.afterMinutes ?? null,
        escalateEveryMinutes: a.escalation?.everyMinutes ?? null,
        etag: a.etag,
        updatedAt: now,
      })),
    ),
    ...historyTable.insertMany(
      db,
      alarms.map((a) => ({
        id: a.historyId,
        alarmId: a.id,
        monitorRef: job.monitorRef,
        itemId: a.itemId,
        controller: a.controller,
        action: "entered",
        monitorJobId: job.id,
        conditions: a.conditions,
        comment: a.shelf
          ? `Entered while shelved (until ${a.shelf.shelvedUntil}, by ${a.shelf.shelvedByName ?? a.shelf.shelvedById}): its actions ` +
            "and notifications wait for the shelving to end."
          : null,
        details: a.shelf ? JSON.stringify({ heldBy: { alarmId: a.shelf.id, until: a.shelf.shelvedUntil } }) : null,
        recordedAt: now,
      })),
    ),
  ];
}

/** An alarm a job leaves: its id, its new version, the id of its `left` history entry, and the JSON of the values that decided it. */
interface LeftAlarm {
  id: string;
  etag: string;
  history: string;
  conditions: string;
  /** The id of the `unshelved` entry written when a one-shot shelving ends with the alarm. */
  unshelved: string;
}

/**
 * The exit of alarms (hand-written: rows as one JSON parameter): the alarm is no longer active, its
 * escalation stops, a one-shot shelving ends with it (recorded in its history), and its `left` history
 * entry is written only by the job that left it (unique per alarm and action, so a second leave records
 * nothing). What follows a leave is guarded by {@link alarmLeftCondition}.
 */
export function leaveAlarmsStatements(db: Database, rows: readonly LeftAlarm[], jobId: string, now: string): D1PreparedStatement[] {
  return [
    // Before the exit: the one-shot shelvings it ends (read in the same transaction, so a shelving set meanwhile counts too).
    ...jsonRowStatements(
      db,
      `INSERT OR IGNORE INTO monitor_alarm_events (id, alarm_id, monitor_ref, item_id, controller, action, monitor_job_id, comment,
      details, recorded_at)
       SELECT json_extract(j.value, '$.unshelved'), a.id, a.monitor_ref, a.item_id, a.controller, 'unshelved', ?2,
       'One-shot shelving ended: the alarm cleared.', json_object('reason', 'cleared'), ?3
         FROM json_each(?1) j JOIN monitor_alarms a ON a.id = json_extract(j.value, '$.id')
        WHERE a.active_key IS NOT NULL AND a.shelve_mode = 'oneShot'`,
      rows,
      jobId,
      now,
    ),
    ...jsonRowStatements(
      db,
      `UPDATE monitor_alarms SET active_key = NULL, left_job_id = ?2, left_at = ?3, escalate_at = NULL, updated_at = ?3,
         left_values = (SELECT json_extract(j.value, '$.conditions') FROM json_each(?1) j WHERE json_extract(j.value, '$.id') =
         monitor_alarms.id),
         etag = (SELECT json_extract(j.value, '$.etag') FROM json_each(?1) j WHERE json_extract(j.value, '$.id') = monitor_alarms.id),
         shelved_at = CASE WHEN shelve_mode = 'oneShot' THEN NULL ELSE shelved_at END,
         shelved_until = CASE WHEN shelve_mode = 'oneShot' THEN NULL ELSE shelved_until END,
         shelved_by_id = CASE WHEN shelve_mode = 'oneShot' THEN NULL ELSE shelved_by_id END,
         shelved_by_name = CASE WHEN shelve_mode = 'oneShot' THEN NULL ELSE shelved_by_name END,
         shelve_comment = CASE WHEN shelve_mode = 'oneShot' THEN NULL ELSE shelve_comment END,
         shelve_mode = CASE WHEN shelve_mode = 'oneShot' THEN NULL ELSE shelve_mode END
       WHERE id IN (SELECT json_extract(value, '$.id') FROM json_each(?1)) AND active_key IS NOT NULL`,
      rows,
      jobId,
      now,
    ),
    ...jsonRowStatements(
      db,
      `INSERT OR IGNORE INTO monitor_alarm_events (id, alarm_id, monitor_ref, item_id, controller, action, monitor_job_id,
      conditions, recorded_at)
       SELECT json_extract(j.value, '$.history'), a.id, a.monitor_ref, a.item_id, a.controller, 'left', ?2,
       json_extract(j.value, '$.conditions'), ?3
         FROM json_each(?1) j JOIN monitor_alarms a ON a.id = json_extract(j.value, '$.id') WHERE a.left_job_id = ?2`,
      rows,
      jobId,
      now,
    ),
  ];
}

/**
 * The `left` events of alarms, each written only when this batch recorded its alarm's exit (its
 * history entry `history` exists) and the alarm was announced (not held: an alarm entered and left
 * while shelved was never told to anyone): rows `{ id, history, payload }` (payload: the event's JSON).
 */
export function leftAlarmEventsStatements(
  db: Database,
  ctx: EventContext,
  rows: readonly { id: string; history: string; payload: string }[],
): D1PreparedStatement[] {
  return jsonChunks(rows).flatMap((json) =>
    outboxForRowsStatements(
      db,
      ctx,
      { entityKind: ALARM_EVENT_KIND, action: "left" },
      {
        sql:
          "SELECT json_extract(j.value, '$.id') AS entity_id, json_extract(j.value, '$.payload') AS payload FROM json_each(?1) j " +
          "WHERE EXISTS (SELECT 1 FROM monitor_alarm_events h WHERE h.id = json_extract(j.value, '$.history')) " +
          "AND NOT EXISTS (SELECT 1 FROM monitor_alarms a WHERE a.id = json_extract(j.value, '$.id') AND a.held = 1)",
        bindings: [json],
      },
    ),
  );
}

/**
 * A condition over a JSON row `j.value` with an `alarm` id: that alarm was left by `jobId` (its
 * `left` history entry names the job), for statements of other owners that follow a leave
 * (binds ?2; the caller's own values come after).
 */
export function alarmLeftCondition(jobId: string): { sql: string; bindings: readonly unknown[] } {
  return {
    sql:
      "EXISTS (SELECT 1 FROM monitor_alarm_events h WHERE h.alarm_id = json_extract(j.value, '$.alarm') AND h.action = 'left' " +
      "AND h.monitor_job_id = ?2)",
    bindings: [jobId],
  };
}

/**
 * History entries `onLeaveSkipped` for alarms whose deviation a person's change kept from onLeave:
 * `decided` ones the loop saw before the batch (written when the alarm's exit is), and `raced` ones whose
 * deviation changed between the loop's read and its batch (written when the deviation does not carry
 * the version the batch gave it). Put it after the deviations' status change.
 */
export function onLeaveSkippedStatements(
  db: Database,
  jobId: string,
  now: string,
  decided: readonly { id: string; alarm: string; comment: string; details: string }[],
  raced: readonly { id: string; alarm: string; deviation: string; etag: string; comment: string; details: string }[],
): D1PreparedStatement[] {
  const insert = `INSERT OR IGNORE INTO monitor_alarm_events (id, alarm_id, monitor_ref, item_id, controller, action, monitor_job_id,
      comment, details, recorded_at)
       SELECT json_extract(j.value, '$.id'), a.id, a.monitor_ref, a.item_id, a.controller, 'onLeaveSkipped', ?2,
       json_extract(j.value, '$.comment'), json_extract(j.value, '$.details'), ?3
         FROM json_each(?1) j JOIN monitor_alarms a ON a.id = json_extract(j.value, '$.alarm')`;
  return [
    ...jsonRowStatements(db, `${insert} WHERE a.left_job_id = ?2`, decided, jobId, now),
    ...jsonRowStatements(
      db,
      `${insert} WHERE a.left_job_id = ?2 AND NOT EXISTS (SELECT 1 FROM deviations d WHERE d.id = json_extract(j.value, '$.deviation')
        AND d.etag = json_extract(j.value, '$.etag'))`,
      raced,
      jobId,
      now,
    ),
  ];
}

// --- Versions: what people, the clock and a release change ------------------------------------------

/** The columns of an alarm a change sets (its new version and time are added by {@link changeAlarmStatement}). */
export type AlarmChange = Partial<
  Pick<
    AlarmValues,
    | "acknowledgedAt"
    | "acknowledgedById"
    | "acknowledgedByName"
    | "acknowledgedComment"
    | "assigneeId"
    | "assigneeName"
    | "assignedAt"
    | "shelveMode"
    | "shelvedAt"
    | "shelvedUntil"
    | "shelvedById"
    | "shelvedByName"
    | "shelveComment"
    | "escalateAt"
    | "escalations"
    | "held"
    | "deviationId"
    | "deviationStatus"
    | "workItemId"
  >
>;

/** The shelving columns of an alarm that is not shelved. */
export const NOT_SHELVED: AlarmChange = {
  shelveMode: null,
  shelvedAt: null,
  shelvedUntil: null,
  shelvedById: null,
  shelvedByName: null,
  shelveComment: null,
};

/** A new version of an alarm, guarded on the version read: it changes no row when the alarm moved on meanwhile. */
export function changeAlarmStatement(
  db: Database,
  alarm: { id: string; version: string },
  change: AlarmChange,
  etag: string,
  now: string,
): D1PreparedStatement {
  return alarmTable.update(db, { ...change, etag, updatedAt: now }, { id: alarm.id, etag: alarm.version });
}

/** One entry of an alarm's history written with a new version of the alarm: only when the alarm now carries `etag`. */
export interface VersionedEntry {
  entry: Omit<HistoryValues, "monitorJobId" | "conditions">;
  etag: string;
}

/**
 * History entries of changes of alarms' versions (hand-written: rows as one JSON parameter), each
 * written only when its alarm carries the version the change gave it, so a change that lost a race to
 * another writer records nothing.
 */
export function versionedHistoryStatements(db: Database, rows: readonly VersionedEntry[]): D1PreparedStatement[] {
  return jsonRowStatements(
    db,
    `INSERT INTO monitor_alarm_events (id, alarm_id, monitor_ref, item_id, controller, action, actor_id, actor_name, comment, details,
      recorded_at)
       SELECT json_extract(j.value, '$.entry.id'), a.id, a.monitor_ref, a.item_id, a.controller, json_extract(j.value, '$.entry.action'),
              json_extract(j.value, '$.entry.actorId'), json_extract(j.value, '$.entry.actorName'),
              json_extract(j.value, '$.entry.comment'), json_extract(j.value, '$.entry.details'),
              json_extract(j.value, '$.entry.recordedAt')
         FROM json_each(?1) j JOIN monitor_alarms a ON a.id = json_extract(j.value, '$.entry.alarmId')
        WHERE a.etag = json_extract(j.value, '$.etag')`,
    rows,
  );
}

/** An alarm event that follows a change of the alarm's version: written only when the alarm carries `etag`. */
export interface VersionedEvent {
  id: string;
  etag: string;
  payload: string;
}

/** Events of one action on alarms whose version changed in the same batch (one per alarm that now carries its `etag`). */
export function versionedEventsStatements(
  db: Database,
  ctx: EventContext,
  action: EventAction,
  rows: readonly VersionedEvent[],
): D1PreparedStatement[] {
  return jsonChunks(rows).flatMap((json) =>
    outboxForRowsStatements(
      db,
      ctx,
      { entityKind: ALARM_EVENT_KIND, action },
      {
        sql:
          "SELECT json_extract(j.value, '$.id') AS entity_id, json_extract(j.value, '$.payload') AS payload FROM json_each(?1) j " +
          "WHERE EXISTS (SELECT 1 FROM monitor_alarms a WHERE a.id = json_extract(j.value, '$.id') " +
          "AND a.etag = json_extract(j.value, '$.etag'))",
        bindings: [json],
      },
    ),
  );
}

// --- Reads of the resource ---------------------------------------------------------------------------

/**
 * What an alarm shows besides its row: its monitor, item and asset, or its channel (issue 35); joins that
 * match at most one row each, the monitor's or the channel's by the alarm's source kind.
 */
export const ALARM_JOINS = [
  "LEFT JOIN monitors alm ON al.source_kind = 'monitor' AND alm.id = al.monitor_ref",
  "LEFT JOIN population_items alpi ON al.source_kind = 'monitor' AND alpi.id = al.item_id",
  "LEFT JOIN populations alp ON alp.id = alpi.population_id",
  "LEFT JOIN channels alch ON al.source_kind = 'channel' AND alch.id = al.monitor_ref",
  "LEFT JOIN assets ala ON ala.id = al.asset_id",
] as const;

/** The select list of an alarm with what {@link ALARM_JOINS} add. */
export const ALARM_SELECT =
  ALARM_COLUMNS.split(", ")
    .map((column) => `al.${column}`)
    .join(", ") +
  ", coalesce(alm.monitor_id, CAST(alch.channel_number AS TEXT)) AS source_number, coalesce(alm.name, alch.name) AS source_name, " +
  "coalesce(alm.max_shelve_minutes, alch.max_shelve_minutes) AS max_shelve_minutes, alpi.population_id AS population_id, " +
  "coalesce(ala.name, alpi.asset_name) AS asset_name, coalesce(alp.asset_type, ala.kind) AS asset_type";

/** Alarms with their joins, by id (ids as one JSON parameter). */
export function alarmsStatement(db: Database, ids: readonly string[]): D1PreparedStatement {
  return db
    .prepare(`SELECT ${ALARM_SELECT} FROM monitor_alarms al ${ALARM_JOINS.join(" ")} WHERE al.id IN (SELECT value FROM json_each(?1))`)
    .bind(JSON.stringify([...new Set(ids)]));
}

/** The newest `limit` entries of an alarm's history and how many it has (map the first with {@link historyEntryRow}). */
export function latestHistoryStatements(db: Database, alarmId: string, limit: number): D1PreparedStatement[] {
  return [
    db
      .prepare(`SELECT ${HISTORY_COLUMNS} FROM monitor_alarm_events WHERE alarm_id = ?1 ORDER BY recorded_at DESC, rowid DESC LIMIT ?2`)
      .bind(alarmId, limit),
    db.prepare("SELECT count(*) AS n FROM monitor_alarm_events WHERE alarm_id = ?1").bind(alarmId),
  ];
}

/** Alarms of one controller and item that carry a shelving (a person's unshelving ends it on all of them). */
export function shelvedOfKeyStatement(db: Database, itemId: string, controller: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${ALARM_SELECT} FROM monitor_alarms al ${ALARM_JOINS.join(" ")}
        WHERE al.item_id = ?1 AND al.controller = ?2 AND al.shelve_mode IS NOT NULL`,
    )
    .bind(itemId, controller);
}

/**
 * Whether a newer alarm of the same controller and item exists than the one entered at `enteredAt`.
 * Alarms entered in the same instant are ordered as they were written (rowid), not by their random ids.
 */
export function newerAlarmStatement(db: Database, itemId: string, controller: string, enteredAt: string, id: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT id FROM monitor_alarms WHERE item_id = ?1 AND controller = ?2
          AND (entered_at > ?3 OR (entered_at = ?3 AND rowid > (SELECT rowid FROM monitor_alarms WHERE id = ?4))) LIMIT 1`,
    )
    .bind(itemId, controller, enteredAt, id);
}

/** Shelvings that have expired by `now` (a range scan of their index), oldest first. */
export function expiredShelvesStatement(db: Database, now: string, limit: number): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${ALARM_SELECT} FROM monitor_alarms al ${ALARM_JOINS.join(" ")}
        WHERE al.shelved_until <= ?1 ORDER BY al.shelved_until LIMIT ?2`,
    )
    .bind(now, limit);
}

/** Escalations due by `now` of alarms that are not shelved (a range scan of their index), oldest first. */
export function dueEscalationsStatement(db: Database, now: string, limit: number): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${ALARM_SELECT} FROM monitor_alarms al ${ALARM_JOINS.join(" ")}
        WHERE al.escalate_at <= ?1 AND al.shelve_mode IS NULL ORDER BY al.escalate_at LIMIT ?2`,
    )
    .bind(now, limit);
}
