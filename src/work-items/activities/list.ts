/** GET /Activities with every filter of 4.2 (plus workItemIds), and GET /Activities/UniqueValues. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { designationConditions, designationFilterShape } from "../../assets/designations";
import {
  compileListQuery,
  compileUniqueValues,
  csvInList,
  defineList,
  inList,
  listQueryShape,
  parseUuidList,
  runListQuery,
  runUniqueValues,
  uniqueValuesQueryShape,
  type Condition,
  type ListPage,
  noProperties,
  type UniqueValuesResult,
} from "../../pkg/query";
import { statusesCondition } from "../../work/common";
import { dateConditions, dateFilterShape } from "../filters";
import { ACTIVITY_COLUMNS, ACTIVITY_JOINS, toActivities, type ActivityRow } from "./store";
import type { Activity } from "./schema";

const KIND = "activity";

export const activityList = defineList({
  table: "activities",
  alias: "a",
  entityKind: KIND,
  idColumn: "id",
  select: ACTIVITY_COLUMNS,
  joins: ACTIVITY_JOINS,
  fields: {
    displayName: { column: "a.display_name", indexed: true },
    referenceId: { column: "a.reference_id" },
    status: { column: "a.status" },
    dateOfActivity: { column: "a.date_of_activity", type: "datetime" },
    "objectOwner.name": { column: "a.owner_name", uniqueValues: false },
    objectOwner: { column: "a.owner_id", displayColumn: "a.owner_name", orderable: false },
    "responsible.name": { column: "a.responsible_name", uniqueValues: false },
    responsible: { column: "a.responsible_id", displayColumn: "a.responsible_name", orderable: false },
    "type.name": { column: "ty.name", uniqueValues: false },
    type: { column: "a.activity_type_id", displayColumn: "ty.name", orderable: false },
    basedOn: { column: "a.based_on_id", orderable: false },
    workItemId: { column: "a.work_item_id", orderable: false },
    position: { column: "a.position", type: "number", uniqueValues: false },
    createdAt: { column: "a.created_at", type: "datetime", uniqueValues: false },
    updatedAt: { column: "a.updated_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["a.display_name", "a.reference_id"],
  defaultOrder: "displayName asc",
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
const idsParam = (description: string) => z.string().optional().openapi({ description });

export const ActivityListQuery = z.object({
  ids,
  excludeIds,
  searchText,
  statuses: idsParam("Only these statuses (comma-separated system status names or user status ids)."),
  ...dateFilterShape("dateOfActivityFrom", "dateOfActivityTo", "dateOfActivities", "dateOfActivity"),
  objectOwnerIds: idsParam("Only activities owned by these users (comma-separated ids)."),
  responsibleIds: idsParam("Only activities with one of these responsible users (comma-separated ids)."),
  basedOnIds: idsParam("Only activities based on these activity templates (comma-separated ids, any revision)."),
  typeIds: idsParam("Only activities of these activity types (comma-separated ids)."),
  workItemIds: idsParam("Only activities of these work items (comma-separated ids). An extension of 4.2."),
  ...designationFilterShape,
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over displayName, referenceId, status, dateOfActivity, objectOwner.name, " +
      "responsible.name, type.name, position, createdAt, updatedAt. Default: displayName asc.",
  }),
  skip,
  take,
  includeTotal,
});

export type ActivityListParams = z.infer<typeof ActivityListQuery>;

export const ActivityUniqueValuesQuery = z.object({
  ...uniqueValuesQueryShape,
  fieldNames: uniqueValuesQueryShape.fieldNames.openapi({
    param: { required: true },
    description:
      "Required. Comma-separated: displayName, referenceId, status, dateOfActivity, objectOwner, responsible, type, basedOn, workItemId.",
  }),
});

function conditions(params: ActivityListParams): Condition[] {
  const uuids = (raw: string | undefined, field: `query.${string}`, column: string) => {
    const list = parseUuidList(raw, field);
    return list.length > 0 ? [inList(column, list)] : [];
  };
  return [
    ...statusesCondition("a.status", params.statuses),
    ...dateConditions("a.date_of_activity", params.dateOfActivityFrom, params.dateOfActivityTo, params.dateOfActivities, {
      from: "dateOfActivityFrom",
      to: "dateOfActivityTo",
      days: "dateOfActivities",
    }),
    ...csvInList("a.owner_id", params.objectOwnerIds),
    ...csvInList("a.responsible_id", params.responsibleIds),
    ...uuids(params.basedOnIds, "query.basedOnIds", "a.based_on_id"),
    ...uuids(params.typeIds, "query.typeIds", "a.activity_type_id"),
    ...uuids(params.workItemIds, "query.workItemIds", "a.work_item_id"),
    ...designationConditions(KIND, "a.id", params),
  ];
}

export async function listActivities(db: Database, params: ActivityListParams): Promise<ListPage<Activity>> {
  const query = await compileListQuery(activityList, params, noProperties, conditions(params));
  const { items, total, next } = await runListQuery<ActivityRow>(db, query);
  return { items: await toActivities(db, items), total, next };
}

export async function activityUniqueValues(db: Database, params: z.infer<typeof ActivityUniqueValuesQuery>): Promise<UniqueValuesResult[]> {
  return runUniqueValues(db, await compileUniqueValues(activityList, params, noProperties));
}
