/** GET /WorkItems with every filter of 4.2, and GET /WorkItems/UniqueValues, on the shared list engine. */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { designationConditions, designationFilterShape } from "../assets/designations";
import {
  compileListQuery,
  compileUniqueValues,
  csvInList,
  defineList,
  listQueryShape,
  parseUuidList,
  runListQuery,
  runUniqueValues,
  uniqueValuesQueryShape,
  type Condition,
  type ListPage,
  type UniqueValuesResult,
} from "../pkg/query";
import { statusesCondition, tagsCondition } from "../work/common";
import { catalogFor } from "../properties/definitions/catalog";
import { dateConditions, dateFilterShape } from "./filters";
import { KIND, toWorkItems, WORK_ITEM_COLUMNS, type WorkItemRow } from "./store";
import type { WorkItem } from "./schema";

export const workItemList = defineList({
  table: "work_items",
  alias: "w",
  entityKind: KIND,
  idColumn: "id",
  select: WORK_ITEM_COLUMNS.split(", ")
    .map((c) => `w.${c}`)
    .join(", "),
  fields: {
    displayName: { column: "w.display_name", indexed: true },
    referenceId: { column: "w.reference_id" },
    status: { column: "w.status" },
    dueDate: { column: "w.due_date", type: "datetime" },
    "objectOwner.name": { column: "w.owner_name", uniqueValues: false },
    // Unique values of the owner: the id (usable in objectOwnerIds) named by the name.
    objectOwner: { column: "w.owner_id", displayColumn: "w.owner_name", orderable: false },
    typeId: { column: "w.type_id", orderable: false },
    createdAt: { column: "w.created_at", type: "datetime", uniqueValues: false },
    updatedAt: { column: "w.updated_at", type: "datetime", uniqueValues: false },
  },
  searchColumns: ["w.display_name", "w.reference_id"],
  defaultOrder: "displayName asc",
});

export const WorkItemListQuery = z.object({
  ...listQueryShape,
  statuses: z.string().optional().openapi({ description: "Only these statuses (comma-separated system status names or user status ids)." }),
  ...dateFilterShape("dueDateFrom", "dueDateTo", "dueDates", "dueDate"),
  objectOwnerIds: z.string().optional().openapi({ description: "Only work items owned by these users (comma-separated ids)." }),
  tags: z.string().optional().openapi({ description: "Only work items carrying any of these tags (comma-separated, exact)." }),
  basedOnIds: z
    .string()
    .optional()
    .openapi({ description: "Only work items based on any of these work templates (comma-separated ids, any revision)." }),
  ...designationFilterShape,
  overdue: z.enum(["true", "false"]).optional().openapi({
    description: "true: only work items past their due date and not completed, closed or cancelled (issue 36); false: only the others.",
  }),
  order: listQueryShape.order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over displayName, referenceId, status, dueDate, objectOwner.name, " +
      "createdAt, updatedAt and properties.{name} (WorkItem properties). Default: displayName asc.",
  }),
});

export type WorkItemListParams = z.infer<typeof WorkItemListQuery>;

export const WorkItemUniqueValuesQuery = z.object({
  ...uniqueValuesQueryShape,
  fieldNames: uniqueValuesQueryShape.fieldNames.openapi({
    param: { required: true },
    description: "Required. Comma-separated: displayName, referenceId, status, dueDate, objectOwner, typeId, properties.{name}.",
  }),
});

/** Statuses after which a work item is never overdue (src/plans/overdue.ts announces the others). */
const DONE_STATUSES = ["completed", "closed", "cancelled"];

function overdueConditions(overdue: "true" | "false" | undefined, now: Date): Condition[] {
  if (overdue === undefined) return [];
  const is = (v: Parameters<Condition>[0]) => `(w.due_date < ${v.value(now.toISOString())} AND w.status NOT IN ${v.list(DONE_STATUSES)})`;
  return [(v) => (overdue === "true" ? is(v) : `NOT coalesce(${is(v)}, 0)`)];
}

function conditions(params: WorkItemListParams, now: Date): Condition[] {
  const basedOnIds = parseUuidList(params.basedOnIds, "query.basedOnIds");
  return [
    ...overdueConditions(params.overdue, now),
    ...statusesCondition("w.status", params.statuses),
    ...dateConditions("w.due_date", params.dueDateFrom, params.dueDateTo, params.dueDates, {
      from: "dueDateFrom",
      to: "dueDateTo",
      days: "dueDates",
    }),
    ...csvInList("w.owner_id", params.objectOwnerIds),
    ...tagsCondition(KIND, "w.id", params.tags),
    ...(basedOnIds.length > 0
      ? [
          (v: Parameters<Condition>[0]) =>
            `w.id IN (SELECT work_item_id FROM work_item_templates WHERE work_template_id IN ${v.list(basedOnIds)})`,
        ]
      : []),
    ...designationConditions(KIND, "w.id", params),
  ];
}

export async function listWorkItems(db: Database, params: WorkItemListParams, now: Date): Promise<ListPage<WorkItem>> {
  const query = await compileListQuery(workItemList, params, catalogFor(db, "WorkItem"), conditions(params, now));
  const { items, total, next } = await runListQuery<WorkItemRow>(db, query);
  return { items: await toWorkItems(db, items), total, next };
}

export async function workItemUniqueValues(db: Database, params: z.infer<typeof WorkItemUniqueValuesQuery>): Promise<UniqueValuesResult[]> {
  return runUniqueValues(db, await compileUniqueValues(workItemList, params, catalogFor(db, "WorkItem")));
}
