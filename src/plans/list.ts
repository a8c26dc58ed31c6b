/** GET /InspectionPlans on the shared query engine: filters by asset, work template and status. */
import { z } from "@hono/zod-openapi";
import type { Database } from "../db/statements";
import {
  compileListQuery,
  defineList,
  enumCondition,
  inList,
  listQueryShape,
  noProperties,
  parseUuidList,
  runListQuery,
  type Condition,
} from "../pkg/query";
import { PLAN_COLUMNS, planRow, readTargets, toPlan } from "./store";

const planList = defineList({
  table: "inspection_plans",
  alias: "p",
  entityKind: "inspectionPlan",
  idColumn: "id",
  fields: {
    name: { column: "p.name", indexed: true },
    status: { column: "p.status" },
    leadTimeDays: { column: "p.lead_time_days", type: "number" },
    createdAt: { column: "p.created_at", type: "datetime", indexed: true },
    updatedAt: { column: "p.updated_at", type: "datetime" },
  },
  searchColumns: ["p.name", "p.description"],
  defaultOrder: "name asc",
  select: PLAN_COLUMNS.split(", ")
    .map((c) => `p.${c}`)
    .join(", "),
  joins: [],
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

export const PlanListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or description." }),
  assetIds: z.string().optional().openapi({ description: "Plans designating any of these assets (comma-separated ids)." }),
  workTemplateIds: z.string().optional().openapi({ description: "Plans generating from these work templates (comma-separated ids)." }),
  statuses: z.string().optional().openapi({ description: "Comma-separated: active, suspended." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, status, leadTimeDays, createdAt, updatedAt. Default: name asc.",
  }),
  skip,
  take,
  includeTotal,
});

function conditions(query: z.infer<typeof PlanListQuery>): Condition[] {
  const out: Condition[] = [];
  const assets = parseUuidList(query.assetIds, "query.assetIds");
  if (assets.length > 0)
    out.push(
      (values) =>
        "EXISTS (SELECT 1 FROM json_each(p.asset_ids) j WHERE j.value IN " +
        `(SELECT value FROM json_each(${values.value(JSON.stringify(assets))})))`,
    );
  const templates = parseUuidList(query.workTemplateIds, "query.workTemplateIds");
  if (templates.length > 0) out.push(inList("p.work_template_id", templates));
  out.push(...enumCondition(query.statuses, ["active", "suspended"], "query.statuses", "p.status"));
  return out;
}

export async function listPlans(db: Database, query: z.infer<typeof PlanListQuery>) {
  const page = await runListQuery(db, await compileListQuery(planList, query, noProperties, conditions(query)));
  const rows = page.items.map(planRow);
  const targets = await readTargets(
    db,
    rows.map((r) => r.id),
  );
  return { items: rows.map((r) => toPlan(r, targets.get(r.id) ?? []).value), total: page.total };
}
