/** The alarm history of one population item on the shared query engine (issue 25): entries and exits, newest first, paged. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  defineList,
  inList,
  listQueryShape,
  noProperties,
  runListQuery,
  splitCsv,
  type Condition,
} from "../../pkg/query";
import { invalid } from "../../pkg/errors";
import type { ConditionSeen } from "../monitors/controllers";
import { historyEntryRow } from "./store";
import { storedEnum, storedValue } from "../stored";

const { order, skip, take, includeTotal } = listQueryShape;

const ACTIONS = ["entered", "left"] as const;

const alarmHistoryList = defineList({
  table: "monitor_alarm_events",
  alias: "ah",
  entityKind: "alarmEvent",
  idColumn: "id",
  joins: ["LEFT JOIN monitor_alarms ahal ON ahal.id = ah.alarm_id"],
  select: "ah.*, ahal.deviation_id, ahal.work_item_id",
  fields: {
    recordedAt: { column: "ah.recorded_at", type: "datetime", uniqueValues: false },
    controller: { column: "ah.controller" },
    action: { column: "ah.action" },
  },
  searchColumns: ["ah.controller"],
  defaultOrder: "recordedAt desc",
});

export const AlarmHistoryQuery = z.object({
  controllers: z.string().optional().openapi({ description: "Comma-separated controller names." }),
  actions: z.string().optional().openapi({ description: "Comma-separated: entered, left." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over recordedAt, controller, action. Default: recordedAt desc (newest first).",
  }),
  skip,
  take,
  includeTotal,
});

export async function listAlarmHistory(db: Database, itemId: string, query: z.infer<typeof AlarmHistoryQuery>) {
  // An item's history is its alarms' entries and exits; what people did to an alarm is in the alarm's own history.
  const conditions: Condition[] = [(values) => `ah.item_id = ${values.value(itemId)}`, inList("ah.action", ACTIONS)];
  const controllers = splitCsv(query.controllers);
  if (controllers.length > 0) conditions.push(inList("ah.controller", controllers));
  const actions = splitCsv(query.actions);
  for (const action of actions)
    if (action !== "entered" && action !== "left")
      throw invalid("query.actions", "enum", `'${action}' is not an alarm action: entered or left.`);
  if (actions.length > 0) conditions.push(inList("ah.action", actions));
  const { items, total } = await runListQuery(db, await compileListQuery(alarmHistoryList, query, noProperties, conditions));
  return { total, items: items.map(historyEntryOf) };
}

/** An entry of the history as the API shows it, from a row of the list (the entry with its alarm's deviation and work item). */
function historyEntryOf(raw: Record<string, unknown>) {
  const entry = historyEntryRow(raw);
  return {
    id: entry.id,
    alarmId: entry.alarmId,
    controller: entry.controller,
    action: storedEnum(ACTIONS, entry.action, "monitor_alarm_events.action"),
    monitorJobId: storedValue(entry.monitorJobId, "monitor_alarm_events.monitor_job_id"),
    conditions: JSON.parse(storedValue(entry.conditions, "monitor_alarm_events.conditions")) as ConditionSeen[],
    recordedAt: entry.recordedAt,
    deviationId: raw.deviation_id === null ? null : String(raw.deviation_id),
    workItemId: raw.work_item_id === null ? null : String(raw.work_item_id),
  };
}
