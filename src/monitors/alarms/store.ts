/**
 * Alarms in D1 (issue 25): the owner of monitor_alarms (one row per episode of a controller holding
 * for a population item) and monitor_alarm_events (its history: each entry and exit). The monitoring
 * loop (./evaluation.ts) composes these statements into its batches; reads give an item's active
 * alarms as GET /Monitors/{id} and GET /Monitors/PopulationItems show them.
 *
 * Never twice: `active_key` ({item}:{controller}) is set while the alarm is active, under a unique
 * index, so entering an active alarm again fails its whole batch; a leave is guarded on its history
 * entry (unique per alarm and action), and what follows a leave is guarded on that entry.
 */
import { jsonChunks, jsonRowStatements, tableStatements, type Database, type Row } from "../../db/statements";
import { monitorAlarmEvents, monitorAlarms } from "../../db/schema";
import { outboxForRowsStatement, type EventContext } from "../../events/outbox";
import type { ActiveAlarm } from "./schema";

const alarmTable = tableStatements(monitorAlarms);
const historyTable = tableStatements(monitorAlarmEvents);

/** The outbox entity kind of alarm events; actions `entered` and `left` (docs/decisions.md). */
export const ALARM_EVENT_KIND = "alarm";

/** An entry of an item's alarm history as read with every column (a list page among them), typed by the schema. */
export const historyEntryRow = (raw: Record<string, unknown>): Row<typeof monitorAlarmEvents> => historyTable.row(raw);

/** The key an active alarm holds: one per population item and controller name. */
export const activeKey = (itemId: string, controller: string) => `${itemId}:${controller}`;

/** What the area reads of an active alarm. */
export type ActiveAlarmRow = Pick<
  Row<typeof monitorAlarms>,
  "id" | "itemId" | "controller" | "enteredAt" | "enteredJobId" | "deviationId" | "workItemId"
>;

const ACTIVE_COLUMNS = "id, item_id, controller, entered_at, entered_job_id, deviation_id, work_item_id";

/** One active alarm as read with ACTIVE_COLUMNS, typed by the schema's mapper. */
export function activeAlarmRow(raw: Record<string, unknown>): ActiveAlarmRow {
  const { id, itemId, controller, enteredAt, enteredJobId, deviationId, workItemId } = alarmTable.row(raw);
  return { id, itemId, controller, enteredAt, enteredJobId, deviationId, workItemId };
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
      enteredAt: a.enteredAt,
      monitorJobId: a.enteredJobId,
      deviationId: a.deviationId,
      workItemId: a.workItemId,
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

// --- Entering and leaving ----------------------------------------------------------------------------

/** An alarm a job enters: its row and its first history entry. `conditions` is the JSON of what decided it. */
export interface EnteredAlarm {
  id: string;
  historyId: string;
  itemId: string;
  assetId: string;
  controller: string;
  conditions: string;
  deviationId: string | null;
  workItemId: string | null;
}

/**
 * The alarm rows and their `entered` history entries. The alarm rows come first: put them first in
 * the batch, so a second entry of an active alarm (unique `active_key`) fails it before anything else.
 */
export function enterAlarmsStatements(
  db: Database,
  alarms: readonly EnteredAlarm[],
  job: { id: string; monitorRef: string },
  now: string,
): D1PreparedStatement[] {
  return [
    ...alarmTable.insertMany(
      db,
      alarms.map((a) => ({
        id: a.id,
        monitorRef: job.monitorRef,
        itemId: a.itemId,
        assetId: a.assetId,
        controller: a.controller,
        activeKey: activeKey(a.itemId, a.controller),
        enteredJobId: job.id,
        enteredAt: now,
        enteredValues: a.conditions,
        deviationId: a.deviationId,
        workItemId: a.workItemId,
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
        recordedAt: now,
      })),
    ),
  ];
}

/** An alarm a job leaves: its id, the id of its `left` history entry, and the JSON of the values that decided it. */
interface LeftAlarm {
  id: string;
  history: string;
  conditions: string;
}

/**
 * The exit of alarms (hand-written: rows as one JSON parameter): the alarm is no longer active, and
 * its `left` history entry is written only by the job that left it (unique per alarm and action, so
 * a second leave records nothing). What follows a leave is guarded by {@link alarmLeftCondition}.
 */
export function leaveAlarmsStatements(db: Database, rows: readonly LeftAlarm[], jobId: string, now: string): D1PreparedStatement[] {
  return [
    ...jsonRowStatements(
      db,
      `UPDATE monitor_alarms SET active_key = NULL, left_job_id = ?2, left_at = ?3,
         left_values = (SELECT json_extract(j.value, '$.conditions') FROM json_each(?1) j WHERE json_extract(j.value, '$.id') =
         monitor_alarms.id)
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
 * history entry `history` exists): rows `{ id, history, payload }` (payload: the event's JSON).
 */
export function leftAlarmEventsStatements(
  db: Database,
  ctx: EventContext,
  rows: readonly { id: string; history: string; payload: string }[],
): D1PreparedStatement[] {
  return jsonChunks(rows).map((json) =>
    outboxForRowsStatement(
      db,
      ctx,
      { entityKind: ALARM_EVENT_KIND, action: "left" },
      {
        sql:
          "SELECT json_extract(j.value, '$.id') AS entity_id, json_extract(j.value, '$.payload') AS payload FROM json_each(?1) j " +
          "WHERE EXISTS (SELECT 1 FROM monitor_alarm_events h WHERE h.id = json_extract(j.value, '$.history'))",
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
