/**
 * What is coming (issue 36): the due dates of a plan, or of every active plan designating an asset or
 * a plant, up to a date, with their reason, before any work item exists. Each target's first date is
 * where it stands now; the dates after it assume each item is generated on time and completed on its
 * due date (a from-completion plan counts from there), and a condition gives its one known date.
 */
import { z } from "@hono/zod-openapi";
import type { Database } from "../db/statements";
import { invalid } from "../pkg/errors";
import { parseDateValue, parseUuidList } from "../pkg/query";
import { forecast, generateTime } from "./due";
import { ALL_ASSETS, dueInputs, getPlanRow, planRow, PLAN_COLUMNS, readChannelStates, readTargets, type PlanRow } from "./store";
import { DUE_REASONS } from "./schema";

/** The longest a forecast looks ahead, and the most plans a cross-plan forecast reads. */
const MAX_HORIZON_DAYS = 3 * 366;
const MAX_PLANS = 1000;
const MAX_ENTRIES = 5000;

export const ForecastEntrySchema = z
  .object({
    planId: z.uuid(),
    planName: z.string(),
    assetId: z.uuid().nullable().openapi({ description: "Null for a plan making one work item for all its assets." }),
    dueAt: z.string(),
    generateAt: z.string().openapi({ description: "When the work item will be generated (the due date minus the lead time)." }),
    reason: z.enum(DUE_REASONS),
  })
  .openapi("ForecastEntry");
export type ForecastEntry = z.infer<typeof ForecastEntrySchema>;

const until = z
  .string()
  .openapi({ description: "ISO 8601 date-time: due dates up to this one (at most three years ahead).", example: "2027-04-01T00:00:00Z" });

export const PlanForecastQuery = z.object({ until });
export const ForecastQuery = z.object({
  until,
  assetIds: z.string().optional().openapi({ description: "Plans designating any of these assets (comma-separated ids)." }),
  plantIds: z.string().optional().openapi({ description: "Plans designating assets of these plants (comma-separated ids)." }),
});

function horizon(raw: string, now: Date): Date {
  const parsed = parseDateValue(raw);
  if (parsed === undefined) throw invalid("query.until", "format", `until: '${raw}' is not an ISO 8601 date-time.`);
  if (parsed > now.getTime() + MAX_HORIZON_DAYS * 86_400_000)
    throw invalid("query.until", "max", `until: a forecast looks at most ${MAX_HORIZON_DAYS} days ahead.`);
  return new Date(parsed);
}

async function forecastPlans(db: Database, rows: readonly PlanRow[], to: Date): Promise<ForecastEntry[]> {
  const targets = await readTargets(
    db,
    rows.map((r) => r.id),
  );
  const channels = await readChannelStates(
    db,
    rows.map((r) => r.conditionChannelId).filter((c): c is string => c !== null),
  );
  const out: ForecastEntry[] = [];
  for (const row of rows) {
    if (row.status !== "active") continue;
    const channel = row.conditionChannelId ? (channels.get(row.conditionChannelId) ?? null) : null;
    for (const target of targets.get(row.id) ?? []) {
      // An open item that does not stack: the next one is not due before it is completed (its date is unknown).
      const inputs = dueInputs(row, target, channel);
      for (const due of forecast(inputs, row.leadTimeDays, to, 200)) {
        out.push({
          planId: row.id,
          planName: row.name,
          assetId: target.assetKey === ALL_ASSETS ? null : target.assetKey,
          dueAt: due.at.toISOString(),
          generateAt: generateTime(due.at, row.leadTimeDays).toISOString(),
          reason: due.reason,
        });
        if (out.length >= MAX_ENTRIES) break;
      }
    }
  }
  return out.sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : a.planName.localeCompare(b.planName)));
}

export async function planForecast(db: Database, id: string, rawUntil: string, now: Date): Promise<ForecastEntry[]> {
  const to = horizon(rawUntil, now);
  return forecastPlans(db, [await getPlanRow(db, id)], to);
}

export async function crossPlanForecast(db: Database, query: z.infer<typeof ForecastQuery>, now: Date): Promise<ForecastEntry[]> {
  const to = horizon(query.until, now);
  const assets = parseUuidList(query.assetIds, "query.assetIds");
  const plants = parseUuidList(query.plantIds, "query.plantIds");
  const where: string[] = ["p.status = 'active'"];
  const bindings: string[] = [];
  if (assets.length > 0) {
    bindings.push(JSON.stringify(assets));
    where.push(`EXISTS (SELECT 1 FROM json_each(p.asset_ids) j WHERE j.value IN (SELECT value FROM json_each(?${bindings.length})))`);
  }
  if (plants.length > 0) {
    bindings.push(JSON.stringify(plants));
    where.push(
      "EXISTS (SELECT 1 FROM json_each(p.asset_ids) j JOIN assets a ON a.id = j.value " +
        `WHERE coalesce(a.plant_id, a.id) IN (SELECT value FROM json_each(?${bindings.length})))`,
    );
  }
  const { results } = await db
    .prepare(
      `SELECT ${PLAN_COLUMNS.split(", ")
        .map((c) => `p.${c}`)
        .join(", ")} FROM inspection_plans p WHERE ${where.join(" AND ")} ORDER BY p.name, p.id LIMIT ${MAX_PLANS}`,
    )
    .bind(...bindings)
    .all<Record<string, unknown>>();
  const rows = results.map(planRow);
  const entries = await forecastPlans(db, rows, to);
  // A plan making one item per asset forecasts every asset; an asset filter keeps the asked ones (and plan-wide items).
  return assets.length > 0 ? entries.filter((e) => e.assetId === null || assets.includes(e.assetId)) : entries;
}
