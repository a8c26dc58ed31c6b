/**
 * Lists of populations on the shared query engine: the populations of one model or monitor (GET
 * /Models/{id}/Populations, /Monitors/{id}/Populations), and the population items of monitors (GET
 * /Monitors/PopulationItems, table 4.2's filters plus the alarm state of issue 25).
 */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  defineList,
  enumCondition,
  equals,
  inList,
  listQueryShape,
  noProperties,
  parseUuidList,
  runListQuery,
  splitCsv,
  type Condition,
} from "../../pkg/query";
import { invalid } from "../../pkg/errors";
import { ASSET_TYPES, type PopulationOwner } from "./schema";
import { populationRow } from "./store";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

// --- The populations of one owner --------------------------------------------------------------------

const populationList = defineList({
  table: "populations",
  alias: "pn",
  entityKind: "population",
  idColumn: "id",
  fields: {
    name: { column: "lower(pn.name)", displayColumn: "pn.name" },
    assetType: { column: "pn.asset_type" },
    createdAt: { column: "pn.created_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["pn.name", "pn.description"],
  // The order its owner shows them in.
  defaultOrder: "createdAt asc",
});

export const PopulationListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or description." }),
  assetTypes: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated: ${ASSET_TYPES.join(", ")}.` }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over name, assetType, createdAt. Default: createdAt asc (the order the owner shows them in).",
  }),
  skip,
  take,
  includeTotal,
});

/** One page of the populations of a model or monitor. */
export async function listPopulationRows(db: Database, kind: PopulationOwner, ownerId: string, query: z.infer<typeof PopulationListQuery>) {
  const conditions = [
    equals("pn.owner_kind", kind),
    equals("pn.owner_id", ownerId),
    ...enumCondition(query.assetTypes, ASSET_TYPES, "query.assetTypes", "pn.asset_type"),
  ];
  const page = await runListQuery(db, await compileListQuery(populationList, query, noProperties, conditions));
  return { ...page, items: page.items.map(populationRow) };
}

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

const ALARM_STATES = ["alarm", "normal"] as const;

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
  // Rows of the item with its population's and monitor's columns: src/monitors/populations/store.ts toMonitorItemViews maps them.
  return runListQuery(db, await compileListQuery(populationItemList, query, noProperties, conditions));
}
