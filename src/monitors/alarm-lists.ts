/**
 * Lists on the shared query engine for the monitoring loop (issue 25): the population items of
 * monitors (GET /Monitors/PopulationItems, table 4.2's filters plus the alarm state) and the alarm
 * history of one item (entries and exits, newest first, paged).
 */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  defineList,
  inList,
  listQueryShape,
  noProperties,
  parseUuidList,
  runListQuery,
  splitCsv,
  type Condition,
} from "../pkg/query";
import { invalid } from "../pkg/errors";
import { ASSET_TYPES, type AssetType } from "./schema";
import type { ItemRow } from "./store";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

// --- Population items of monitors ------------------------------------------------------------------

const populationItemList = defineList({
  table: "population_items",
  alias: "pi",
  entityKind: "populationItem",
  idColumn: "id",
  // Each matches one row per item (keys); items of models have no monitor and are left out by a condition.
  joins: [
    "LEFT JOIN populations ppop ON ppop.id = pi.population_id",
    "LEFT JOIN monitors pmon ON pmon.id = ppop.owner_id AND ppop.owner_kind = 'monitor'",
  ],
  select: "pi.*, ppop.name AS population_name, ppop.asset_type, pmon.id AS monitor_ref, pmon.name AS monitor_name",
  fields: {
    criticality: { column: "pi.criticality", type: "number" },
    assetName: { column: "lower(pi.asset_name)", displayColumn: "pi.asset_name" },
    createdAt: { column: "pi.created_at", type: "datetime", uniqueValues: false },
    monitorCreatedAt: { column: "pmon.created_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["pi.asset_name"],
  defaultOrder: "monitorCreatedAt asc, createdAt asc",
});

export const ALARM_STATES = ["alarm", "normal"] as const;

export const PopulationItemsQuery = z.object({
  monitorIds: z.string().optional().openapi({ description: "Comma-separated monitor ids." }),
  assetIds: z.string().optional().openapi({ description: "Comma-separated asset ids; needs assetType." }),
  assetType: z.enum(ASSET_TYPES).optional(),
  alarmState: z
    .enum(ALARM_STATES)
    .optional()
    .openapi({ description: "alarm: items with at least one active alarm; normal: items with none (issue 25)." }),
  alarmControllers: z.string().optional().openapi({ description: "Comma-separated controller names: items in alarm for any of them." }),
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the asset name." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over criticality, assetName, createdAt, monitorCreatedAt. Default: " +
      "monitorCreatedAt asc, createdAt asc.",
  }),
  skip,
  take: take.default(1000).openapi({ description: "At most 1,000; default 1,000 (as before paging existed)." }),
  includeTotal,
});

const ACTIVE_ALARM = "SELECT 1 FROM monitor_alarms pal WHERE pal.item_id = pi.id AND pal.active_key IS NOT NULL";

export async function listPopulationItemRows(db: Database, query: z.infer<typeof PopulationItemsQuery>) {
  const assetIds = splitCsv(query.assetIds);
  if (assetIds.length > 0 && !query.assetType)
    throw invalid("query.assetType", "required", "assetType is required when assetIds has values.");
  const conditions: Condition[] = [() => "pmon.id IS NOT NULL"];
  const monitors = parseUuidList(query.monitorIds, "query.monitorIds");
  if (monitors.length > 0) conditions.push(inList("pmon.id", monitors));
  if (assetIds.length > 0) conditions.push(inList("pi.asset_id", assetIds));
  if (query.assetType) conditions.push(inList("ppop.asset_type", [query.assetType]));
  if (query.alarmState === "alarm") conditions.push(() => `EXISTS (${ACTIVE_ALARM})`);
  if (query.alarmState === "normal") conditions.push(() => `NOT EXISTS (${ACTIVE_ALARM})`);
  const controllers = splitCsv(query.alarmControllers);
  if (controllers.length > 0) conditions.push((values) => `EXISTS (${ACTIVE_ALARM} AND pal.controller IN ${values.list(controllers)})`);
  return runListQuery<ItemRow & { population_name: string; asset_type: AssetType; monitor_ref: string; monitor_name: string }>(
    db,
    await compileListQuery(populationItemList, query, noProperties, conditions),
  );
}

// --- Alarm history of one item ---------------------------------------------------------------------

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

export interface AlarmHistoryRow {
  id: string;
  alarm_id: string;
  controller: string;
  action: "entered" | "left";
  monitor_job_id: string;
  conditions: string;
  recorded_at: string;
  deviation_id: string | null;
  work_item_id: string | null;
}

export async function listAlarmHistory(db: Database, itemId: string, query: z.infer<typeof AlarmHistoryQuery>) {
  const conditions: Condition[] = [(values) => `ah.item_id = ${values.value(itemId)}`];
  const controllers = splitCsv(query.controllers);
  if (controllers.length > 0) conditions.push(inList("ah.controller", controllers));
  const actions = splitCsv(query.actions);
  for (const action of actions)
    if (action !== "entered" && action !== "left")
      throw invalid("query.actions", "enum", `'${action}' is not an alarm action: entered or left.`);
  if (actions.length > 0) conditions.push(inList("ah.action", actions));
  const { items, total } = await runListQuery<AlarmHistoryRow>(
    db,
    await compileListQuery(alarmHistoryList, query, noProperties, conditions),
  );
  return {
    total,
    items: items.map((r) => ({
      id: r.id,
      alarmId: r.alarm_id,
      controller: r.controller,
      action: r.action,
      monitorJobId: r.monitor_job_id,
      conditions: JSON.parse(r.conditions) as unknown[],
      recordedAt: r.recorded_at,
      deviationId: r.deviation_id,
      workItemId: r.work_item_id,
    })),
  };
}
