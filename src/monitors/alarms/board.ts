/**
 * The alarm board (issue 33): GET /Alarms, every alarm of every monitor on the shared list engine,
 * filtered by state, acknowledgement, severity, assignee, monitor, asset, plant, shelving and time
 * entered, ordered by severity then time, with counts per severity and state over everything the filters
 * select (a board shows them beside its page), and GET /Alarms/{id}/History, an alarm's history paged.
 */
import { z } from "@hono/zod-openapi";
import type { Database } from "../../db/statements";
import {
  compileListQuery,
  defineList,
  enumCondition,
  inList,
  joinBalanced,
  listQueryShape,
  noProperties,
  parseDateValue,
  parseUuidList,
  queryError,
  runListQuery,
  splitCsv,
  SqlValues,
  type Condition,
} from "../../pkg/query";
import { idConditions, parseIdList, searchCondition } from "../../pkg/query/params";
import { ALARM_STATUSES, HISTORY_ACTIONS, type AlarmStatus } from "./schema";
import { SEVERITIES, type Severity } from "./severity";
import { ALARM_JOINS, ALARM_SELECT, HISTORY_COLUMNS } from "./store";
import { alarmRecord, toAlarm, toAlarmEvent } from "./view";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

/** Severity as a number that orders: critical 4 ... low 1 (`severity desc`: the most severe first). */
const SEVERITY_RANK = "CASE al.severity WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END";
/** The ISA-18.2 state of a row, as the API names it. */
const STATUS_SQL =
  "CASE WHEN al.active_key IS NOT NULL THEN (CASE WHEN al.acknowledged_at IS NULL THEN 'activeUnacknowledged' ELSE " +
  "'activeAcknowledged' END) ELSE (CASE WHEN al.acknowledged_at IS NULL THEN 'clearedUnacknowledged' ELSE 'clearedAcknowledged' END) END";

export const alarmList = defineList({
  table: "monitor_alarms",
  alias: "al",
  entityKind: "alarm",
  idColumn: "id",
  joins: ALARM_JOINS,
  select: ALARM_SELECT,
  fields: {
    severity: { column: SEVERITY_RANK, displayColumn: "al.severity" },
    enteredAt: { column: "al.entered_at", type: "datetime", uniqueValues: false, indexed: true },
    leftAt: { column: "al.left_at", type: "datetime", uniqueValues: false },
    updatedAt: { column: "al.updated_at", type: "datetime", uniqueValues: false },
    status: { column: STATUS_SQL },
    controller: { column: "al.controller" },
    "monitor.name": { column: "lower(alm.name)", displayColumn: "alm.name" },
    "channel.name": { column: "lower(alch.name)", displayColumn: "alch.name" },
    "asset.name": { column: "lower(coalesce(ala.name, alpi.asset_name))" },
    "assignee.name": { column: "lower(al.assignee_name)" },
    escalations: { column: "al.escalations", type: "number" },
  },
  searchColumns: [
    "al.controller",
    "coalesce(alm.name, alch.name)",
    "alm.monitor_id",
    "coalesce(ala.name, alpi.asset_name)",
    "al.assignee_name",
  ],
  defaultOrder: "severity desc, enteredAt desc",
});

const bool = (what: string) => z.enum(["true", "false"]).optional().openapi({ description: what });

export const AlarmListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the controller, monitor, asset or assignee name." }),
  statuses: z
    .string()
    .optional()
    .openapi({
      description:
        `Comma-separated ISA-18.2 states: ${ALARM_STATUSES.join(", ")}. The board: ` +
        "activeUnacknowledged,activeAcknowledged,clearedUnacknowledged (an alarm that cleared unacknowledged stays until someone " +
        "acknowledges it).",
      example: "activeUnacknowledged,activeAcknowledged,clearedUnacknowledged",
    }),
  active: bool("true: alarms still active; false: cleared ones."),
  acknowledged: bool("true: acknowledged alarms; false: unacknowledged ones."),
  severities: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated: ${SEVERITIES.join(", ")}.`, example: "critical,high" }),
  assigneeIds: z.string().optional().openapi({ description: "Comma-separated user ids: alarms assigned to them." }),
  assigned: bool("true: alarms assigned to someone; false: unassigned ones."),
  monitorIds: z.string().optional().openapi({ description: "Comma-separated monitor ids." }),
  channelIds: z.string().optional().openapi({ description: "Comma-separated channel ids: the alarms of their controllers (issue 35)." }),
  sources: z.string().optional().openapi({ description: "Comma-separated: monitor, channel (what raised the alarm)." }),
  assetIds: z.string().optional().openapi({ description: "Comma-separated asset ids (the population items' assets)." }),
  plantIds: z.string().optional().openapi({ description: "Comma-separated plant ids: alarms on a plant or on an asset of it." }),
  shelved: bool("true: shelved alarms; false: the others."),
  enteredFrom: z
    .string()
    .optional()
    .openapi({ description: "Only alarms entered at or after this instant (ISO 8601).", example: "2026-11-01T00:00:00Z" }),
  enteredTo: z.string().optional().openapi({ description: "Only alarms entered before this instant (ISO 8601)." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over severity (critical highest), enteredAt, leftAt, updatedAt, status, controller, " +
      "monitor.name, channel.name, asset.name, assignee.name, escalations. Default: severity desc, enteredAt desc (the most severe, " +
      "newest first).",
    example: "severity desc, enteredAt desc",
  }),
  skip,
  take,
  includeTotal,
});
export type AlarmListParams = z.infer<typeof AlarmListQuery>;

const instant = (value: string | undefined, name: "enteredFrom" | "enteredTo"): string | null => {
  if (value === undefined || value === "") return null;
  const parsed = parseDateValue(value);
  if (parsed === undefined) throw queryError(`query.${name}`, "format", `${name}: '${value}' is not an ISO 8601 date-time.`);
  return new Date(parsed).toISOString();
};

const flag = (value: "true" | "false" | undefined, yes: string, no: string): Condition[] =>
  value === undefined ? [] : [() => (value === "true" ? yes : no)];

/** The board's own filters, AND-ed; values inside one filter are OR-ed. */
function alarmConditions(query: AlarmListParams): Condition[] {
  const statuses = splitCsv(query.statuses);
  for (const status of statuses)
    if (!(ALARM_STATUSES as readonly string[]).includes(status))
      throw queryError("query.statuses", "enum", `'${status}' is not an alarm state: ${ALARM_STATUSES.join(", ")}.`);
  const monitors = parseUuidList(query.monitorIds, "query.monitorIds");
  const channels = parseUuidList(query.channelIds, "query.channelIds");
  const assets = splitCsv(query.assetIds).map((id) => id.toLowerCase());
  const plants = splitCsv(query.plantIds).map((id) => id.toLowerCase());
  const assignees = splitCsv(query.assigneeIds);
  const from = instant(query.enteredFrom, "enteredFrom");
  const to = instant(query.enteredTo, "enteredTo");
  return [
    ...(statuses.length > 0 ? [(v: SqlValues) => `${STATUS_SQL} IN ${v.list(statuses)}`] : []),
    ...flag(query.active, "al.active_key IS NOT NULL", "al.active_key IS NULL"),
    ...flag(query.acknowledged, "al.acknowledged_at IS NOT NULL", "al.acknowledged_at IS NULL"),
    ...enumCondition(query.severities, SEVERITIES, "query.severities", "al.severity", "a severity"),
    ...(assignees.length > 0 ? [inList("al.assignee_id", assignees)] : []),
    ...flag(query.assigned, "al.assignee_id IS NOT NULL", "al.assignee_id IS NULL"),
    ...(monitors.length > 0 ? [inList("al.monitor_ref", monitors), () => "al.source_kind = 'monitor'"] : []),
    ...(channels.length > 0 ? [inList("al.monitor_ref", channels), () => "al.source_kind = 'channel'"] : []),
    ...enumCondition(query.sources, ["monitor", "channel"] as const, "query.sources", "al.source_kind", "a source"),
    ...(assets.length > 0 ? [inList("al.asset_id", assets)] : []),
    ...(plants.length > 0 ? [inList("al.plant_id", plants)] : []),
    ...flag(query.shelved, "al.shelve_mode IS NOT NULL", "al.shelve_mode IS NULL"),
    ...(from ? [(v: SqlValues) => `al.entered_at >= ${v.value(from)}`] : []),
    ...(to ? [(v: SqlValues) => `al.entered_at < ${v.value(to)}`] : []),
  ];
}

/** Counts over everything the filters select: per severity (each with its states), per state, shelved, in all. */
export interface AlarmCounts {
  total: number;
  byStatus: Record<AlarmStatus, number>;
  bySeverity: Record<Severity, { total: number } & Record<AlarmStatus, number>>;
  shelved: number;
}

const zeroStatuses = (): Record<AlarmStatus, number> =>
  Object.fromEntries(ALARM_STATUSES.map((s) => [s, 0])) as Record<AlarmStatus, number>;

/**
 * The counts' statement: the list's conditions (ids, excludeIds, searchText and the board's own, as the
 * page applies them), grouped by severity, state and shelving. One statement over the same JSON
 * parameter the engine binds, so it reads the same rows as the page's total.
 */
function countsStatement(db: Database, query: AlarmListParams, conditions: readonly Condition[]): D1PreparedStatement {
  const search = searchCondition(alarmList, query.searchText);
  const all = [
    ...idConditions(
      alarmList,
      parseIdList(alarmList, query.ids, "query.ids"),
      parseIdList(alarmList, query.excludeIds, "query.excludeIds"),
    ),
    ...(search ? [search] : []),
    ...conditions,
  ];
  const values = new SqlValues();
  const where =
    all.length > 0
      ? `WHERE ${joinBalanced(
          all.map((c) => c(values)),
          "AND",
        )}`
      : "";
  const sql =
    `SELECT al.severity AS severity, ${STATUS_SQL} AS status, al.shelve_mode IS NOT NULL AS shelved, count(*) AS n ` +
    `FROM monitor_alarms al ${ALARM_JOINS.join(" ")} ${where} GROUP BY 1, 2, 3`;
  const statement = db.prepare(sql);
  return sql.includes("?1") ? statement.bind(values.toJson()) : statement;
}

function countsOf(rows: readonly Record<string, unknown>[]): AlarmCounts {
  const counts: AlarmCounts = {
    total: 0,
    byStatus: zeroStatuses(),
    bySeverity: Object.fromEntries(SEVERITIES.map((s) => [s, { total: 0, ...zeroStatuses() }])) as AlarmCounts["bySeverity"],
    shelved: 0,
  };
  for (const row of rows) {
    const n = Number(row.n);
    const status = String(row.status) as AlarmStatus;
    const severity = counts.bySeverity[String(row.severity) as Severity] ?? counts.bySeverity.medium;
    counts.total += n;
    counts.byStatus[status] += n;
    severity.total += n;
    severity[status] += n;
    if (Number(row.shelved) === 1) counts.shelved += n;
  }
  return counts;
}

/** A page of the board's alarms alone, without total or counts (an export reads page after page: src/export). */
export async function alarmItems(db: Database, query: AlarmListParams) {
  const page = await runListQuery(db, await compileListQuery(alarmList, query, noProperties, alarmConditions(query)));
  return { items: page.items.map((raw) => toAlarm(alarmRecord(raw))), next: page.next };
}

/** GET /Alarms: a page of the board, its total when asked, and its counts. */
export async function listAlarms(db: Database, query: AlarmListParams) {
  const conditions = alarmConditions(query);
  const compiled = await compileListQuery(alarmList, query, noProperties, conditions);
  const [page, counted] = await Promise.all([
    runListQuery(db, compiled),
    countsStatement(db, query, conditions).all<Record<string, unknown>>(),
  ]);
  return { items: page.items.map((raw) => toAlarm(alarmRecord(raw))), total: page.total, counts: countsOf(counted.results) };
}

const historyList = defineList({
  table: "monitor_alarm_events",
  alias: "ae",
  entityKind: "alarmEvent",
  idColumn: "id",
  select: HISTORY_COLUMNS.split(", ")
    .map((column) => `ae.${column}`)
    .join(", "),
  fields: {
    at: { column: "ae.recorded_at", type: "datetime", uniqueValues: false },
    // Insertion order: entries of the same instant (an exit and its skipped onLeave) keep the order they were written in.
    sequence: { column: "ae.rowid", type: "number", uniqueValues: false },
    action: { column: "ae.action" },
  },
  searchColumns: ["ae.comment"],
  defaultOrder: "at asc, sequence asc",
});

export const AlarmHistoryListQuery = z.object({
  actions: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated: ${HISTORY_ACTIONS.join(", ")}.`, example: "commented" }),
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the comment." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over at, sequence (the order entries were written in), action. Default: at asc, sequence asc.",
  }),
  skip,
  take,
  includeTotal,
});

/** GET /Alarms/{id}/History: an alarm's history (comments are its thread), oldest first by default. */
export async function listAlarmEvents(db: Database, alarmId: string, query: z.infer<typeof AlarmHistoryListQuery>) {
  const conditions: Condition[] = [
    (v) => `ae.alarm_id = ${v.value(alarmId)}`,
    ...enumCondition(query.actions, HISTORY_ACTIONS, "query.actions", "ae.action", "an alarm history action"),
  ];
  const { items, total } = await runListQuery(db, await compileListQuery(historyList, query, noProperties, conditions));
  return { items: items.map(toAlarmEvent), total };
}
