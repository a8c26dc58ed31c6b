/**
 * GET /Channels on the shared query engine: filters by asset, plant, type, origin, availability, alarm
 * state and next inspection due before a date, and the order "what is due next" (nextInspectionAt asc:
 * channels without a date last).
 */
import { z } from "@hono/zod-openapi";
import type { Database } from "../../db/statements";
import {
  compileListQuery,
  defineList,
  enumCondition,
  inList,
  listQueryShape,
  noProperties,
  parseDateValue,
  parseUuidList,
  queryError,
  runListQuery,
  type Condition,
} from "../../pkg/query";
import { CHANNEL_JOINS, CHANNEL_SELECT, channelRecord, toChannel } from "./store";

const channelList = defineList({
  table: "channels",
  alias: "ch",
  entityKind: "channel",
  idColumn: "id",
  fields: {
    channelNumber: { column: "ch.channel_number", type: "number", indexed: true },
    name: { column: "lower(ch.name)", displayColumn: "ch.name" },
    unit: { column: "ch.unit" },
    alarmState: { column: "ch.alarm_state" },
    // NULLs last when ascending: a channel without a date is not due.
    nextInspectionAt: { column: "coalesce(ch.next_inspection_at, '9999')", type: "datetime" },
    lastReadingAt: { column: "ch.last_reading_at", type: "datetime" },
    createdAt: { column: "ch.created_at", type: "datetime", indexed: true },
    updatedAt: { column: "ch.updated_at", type: "datetime" },
  },
  searchColumns: ["ch.name", "ch.description", "a.name"],
  defaultOrder: "channelNumber asc",
  select: CHANNEL_SELECT,
  joins: CHANNEL_JOINS,
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
const csvIds = (what: string) =>
  z
    .string()
    .optional()
    .openapi({ description: `Comma-separated ${what} ids.` });

export const ChannelListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name, description or asset name." }),
  assetIds: csvIds("asset").openapi({ description: "Channels measured on these assets (comma-separated ids)." }),
  plantIds: csvIds("plant").openapi({ description: "Channels on assets of these plants (comma-separated ids)." }),
  channelTypeIds: csvIds("channel type"),
  dataOriginIds: csvIds("data origin"),
  availabilityIds: csvIds("channel availability"),
  alarmStates: z.string().optional().openapi({ description: "Comma-separated: normal, alarm." }),
  nextInspectionBefore: z
    .string()
    .optional()
    .openapi({ description: "Only channels whose next inspection is due before this ISO 8601 date-time." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over channelNumber, name, unit, alarmState, nextInspectionAt (channels without one " +
      "last), lastReadingAt, createdAt, updatedAt. Default: channelNumber asc. A planner's 'what is due next': nextInspectionAt asc.",
  }),
  skip,
  take,
  includeTotal,
});

function conditions(query: z.infer<typeof ChannelListQuery>): Condition[] {
  const out: Condition[] = [];
  const byIds = (raw: string | undefined, field: `query.${string}`, column: string) => {
    const list = parseUuidList(raw, field);
    if (list.length > 0) out.push(inList(column, list));
  };
  byIds(query.assetIds, "query.assetIds", "ch.asset_id");
  byIds(query.plantIds, "query.plantIds", "ch.plant_id");
  byIds(query.channelTypeIds, "query.channelTypeIds", "ch.channel_type_id");
  byIds(query.dataOriginIds, "query.dataOriginIds", "ch.data_origin_id");
  byIds(query.availabilityIds, "query.availabilityIds", "ch.availability_id");
  out.push(...enumCondition(query.alarmStates, ["normal", "alarm"], "query.alarmStates", "ch.alarm_state"));
  if (query.nextInspectionBefore !== undefined && query.nextInspectionBefore !== "") {
    const parsed = parseDateValue(query.nextInspectionBefore);
    if (parsed === undefined)
      throw queryError(
        "query.nextInspectionBefore",
        "format",
        `nextInspectionBefore: '${query.nextInspectionBefore}' is not an ISO 8601 date-time.`,
      );
    const before = new Date(parsed).toISOString();
    out.push((values) => `ch.next_inspection_at < ${values.value(before)}`);
  }
  return out;
}

export async function listChannels(db: Database, query: z.infer<typeof ChannelListQuery>) {
  const page = await runListQuery(db, await compileListQuery(channelList, query, noProperties, conditions(query)));
  return { items: page.items.map((raw) => toChannel(channelRecord(raw)).value), total: page.total, next: page.next };
}
