/**
 * Bench B's Worker: the real list query engine (src/pkg/query) over two bench tables of 10,000 and
 * 100,000 entities whose linked properties live in property_values under the kinds `bench10k` and
 * `bench100k`. No domain list with linked properties exists yet, so this stands in for one: a list
 * definition, the catalog lookup a list does on every request (property definitions by name, from
 * D1), compile, run.
 *
 *   GET /{kind}/entities?properties=...&order=...&take=50[&includeTotal=true]   runListQuery, as a list route
 *   GET /{kind}/plan?...                          the chosen plan, its SQL, EXPLAIN QUERY PLAN, the
 *                                                 capped counts, each statement's D1 time, and the total
 *
 * Both take `plan=lists|driven|walk` to force a plan (the lists plan is the engine's shape before
 * the adaptive plans: the "before" of docs/benchmarks.md), with `driver=N|ids` and `window=N`, and
 * `cache=off` to count the filter terms on every request instead of reusing the isolate's counts. Every response carries `x-sql-ms`: D1's
 * own execution time of the statements (meta.duration).
 */
import {
  compileListQuery,
  defineList,
  planListQuery,
  runListQuery,
  type CatalogLookup,
  type CompiledListQuery,
  type ListDefinition,
  type ListPlan,
  type ListQueryInput,
  type PlanOptions,
  type PropertyFormat,
  type PropertyInfo,
} from "../src/pkg/query";

interface BenchEnv {
  DB: D1Database;
}

export const BENCH_KINDS = ["bench10k", "bench100k"] as const;
type BenchKind = (typeof BENCH_KINDS)[number];
const PLANS: readonly ListPlan[] = ["lists", "driven", "walk"];

function benchList(kind: BenchKind): ListDefinition {
  return defineList({
    table: `${kind}_entities`,
    alias: "e",
    entityKind: kind,
    idColumn: "id",
    fields: {
      id: { column: "e.id" },
      referenceId: { column: "e.reference_id" },
      createdAt: { column: "e.created_at", type: "datetime" },
    },
    searchColumns: ["e.reference_id"],
    defaultOrder: "referenceId asc",
  });
}

const LISTS: Record<BenchKind, ListDefinition> = { bench10k: benchList("bench10k"), bench100k: benchList("bench100k") };

interface DefinitionRow {
  name: string;
  format: PropertyFormat;
  classification_id: string | null;
  is_multiselect: number;
}

/** What a domain list does per request: look the mentioned property definitions up in D1. */
function catalogFor(db: D1Database, timings: number[]): CatalogLookup {
  return async (names) => {
    const { results, meta } = await db
      .prepare(
        "SELECT name, format, classification_id, is_multiselect FROM property_definitions WHERE name IN (SELECT value FROM json_each(?1))",
      )
      .bind(JSON.stringify(names))
      .all<DefinitionRow>();
    timings.push(meta.duration);
    return new Map<string, PropertyInfo>(
      results.map((r) => [
        r.name,
        { name: r.name, format: r.format, classificationId: r.classification_id, isMultiselect: r.is_multiselect === 1 },
      ]),
    );
  };
}

function queryInput(url: URL): ListQueryInput {
  const get = (name: string) => url.searchParams.get(name) ?? undefined;
  return {
    properties: get("properties"),
    order: get("order"),
    take: get("take"),
    skip: get("skip"),
    ids: get("ids"),
    excludeIds: get("excludeIds"),
    searchText: get("searchText"),
    includeTotal: get("includeTotal"),
  };
}

function planOptions(url: URL): PlanOptions {
  const plan = url.searchParams.get("plan");
  const driver = url.searchParams.get("driver");
  const window = url.searchParams.get("window");
  const cacheEstimates = url.searchParams.get("cache") !== "off";
  if (!PLANS.includes(plan as ListPlan)) return { cacheEstimates };
  return {
    plan: plan as ListPlan,
    driver: driver === null ? undefined : driver === "ids" ? "ids" : Number(driver),
    walkWindow: window === null ? undefined : Number(window),
    cacheEstimates,
  };
}

function json(body: unknown, timings: number[], status = 200): Response {
  const sqlMs = timings.reduce((a, b) => a + b, 0);
  return Response.json(body, { status, headers: { "x-sql-ms": sqlMs.toFixed(3) } });
}

async function explain(db: D1Database, statement: { sql: string; params: unknown[] }): Promise<string[]> {
  const { results } = await db
    .prepare(`EXPLAIN QUERY PLAN ${statement.sql}`)
    .bind(...statement.params)
    .all<{ id: number; parent: number; detail: string }>();
  // Indent each step under its parent, as the sqlite3 shell prints the plan.
  const depth = new Map<number, number>([[0, 0]]);
  return results.map((row) => {
    const level = (depth.get(row.parent) ?? 0) + 1;
    depth.set(row.id, level);
    return `${"  ".repeat(level - 1)}${row.detail}`;
  });
}

/** The plan endpoint: every statement run one by one, so each has its own D1 time. */
async function describePlan(db: D1Database, query: CompiledListQuery, timings: number[]) {
  const catalogMs = timings[0] ?? 0;
  let estimatesMs = 0;
  if (query.estimates.length > 0) {
    const results = await db.batch(query.estimates.map((s) => db.prepare(s.sql).bind(...s.params)));
    estimatesMs = results.reduce((sum, r) => sum + r.meta.duration, 0);
  }
  const planned = await planListQuery(db, query);
  const page = await db
    .prepare(planned.sql)
    .bind(...planned.params)
    .all();
  const count = await db
    .prepare(query.count.sql)
    .bind(...query.count.params)
    .all<{ total: number }>();
  timings.push(estimatesMs, page.meta.duration, count.meta.duration);
  return {
    plan: planned.plan,
    counts: planned.counts,
    sql: planned.sql,
    params: planned.params,
    explain: await explain(db, planned),
    estimates: query.estimates.map((s) => s.sql),
    countSql: query.count.sql,
    countPlan: await explain(db, query.count),
    returned: page.results.length,
    ids: page.results.map((row) => (row as { id: string }).id),
    total: count.results[0]?.total ?? 0,
    // D1's execution time of each statement, in ms.
    sqlMs: { catalog: catalogMs, estimates: estimatesMs, page: page.meta.duration, count: count.meta.duration },
  };
}

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const url = new URL(request.url);
    const [, kind, resource, extra] = url.pathname.split("/");
    const list = (BENCH_KINDS as readonly string[]).includes(kind ?? "") ? LISTS[kind as BenchKind] : undefined;
    if (request.method !== "GET" || !list || extra !== undefined) return new Response("not found", { status: 404 });
    const timings: number[] = [];
    let query: CompiledListQuery;
    try {
      query = await compileListQuery(list, queryInput(url), catalogFor(env.DB, timings), [], planOptions(url));
    } catch (error) {
      // The engine's ApiError (InvalidQuery) names the offending term; the bench shows it verbatim.
      return json({ error: error instanceof Error ? error.message : String(error), detail: error }, timings, 400);
    }
    if (resource === "entities") {
      const started = Date.now();
      const result = await runListQuery(env.DB, query);
      // runListQuery batches its statements; the wall time stands in for their SQL time.
      timings.push(Date.now() - started);
      return json(result, timings);
    }
    if (resource === "plan") return json(await describePlan(env.DB, query, timings), timings);
    return new Response("not found", { status: 404 });
  },
};
