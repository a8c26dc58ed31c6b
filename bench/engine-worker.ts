/**
 * Bench B's Worker: the real list query engine (src/pkg/query) over two bench tables of 10,000 and
 * 100,000 entities whose linked properties live in property_values under the kinds `bench10k` and
 * `bench100k`. No domain list exists yet, so this stands in for one: a list definition, the catalog
 * lookup a list does on every request (property definitions by name, from D1), compile, run.
 *
 *   GET /{kind}/entities?properties=...&order=...&take=50        page + total (runListQuery)
 *   GET /{kind}/entities/page?properties=...&order=...&take=50   the page statement alone
 *   GET /{kind}/plan?properties=...&order=...&take=50            compiled SQL, EXPLAIN QUERY PLAN, total
 *
 * Every response carries `x-sql-ms`: D1's own execution time of the statements (meta.duration).
 */
import {
  compileListQuery,
  defineList,
  runListQuery,
  type CatalogLookup,
  type CompiledListQuery,
  type ListDefinition,
  type ListQueryInput,
  type PropertyFormat,
  type PropertyInfo,
} from "../src/pkg/query";

interface BenchEnv {
  DB: D1Database;
}

export const BENCH_KINDS = ["bench10k", "bench100k"] as const;
type BenchKind = (typeof BENCH_KINDS)[number];

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
      .prepare("SELECT name, format, classification_id, is_multiselect FROM property_definitions WHERE name IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(names))
      .all<DefinitionRow>();
    timings.push(meta.duration);
    return new Map<string, PropertyInfo>(
      results.map((r) => [r.name, { name: r.name, format: r.format, classificationId: r.classification_id, isMultiselect: r.is_multiselect === 1 }]),
    );
  };
}

function queryInput(url: URL): ListQueryInput {
  const get = (name: string) => url.searchParams.get(name) ?? undefined;
  return { properties: get("properties"), order: get("order"), take: get("take"), skip: get("skip"), ids: get("ids"), excludeIds: get("excludeIds"), searchText: get("searchText") };
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

async function page(db: D1Database, query: CompiledListQuery, timings: number[]) {
  const { results, meta } = await db.prepare(query.sql).bind(...query.params).all();
  timings.push(meta.duration);
  return results;
}

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const url = new URL(request.url);
    const [, kind, resource, variant, extra] = url.pathname.split("/");
    const list = (BENCH_KINDS as readonly string[]).includes(kind ?? "") ? LISTS[kind as BenchKind] : undefined;
    if (request.method !== "GET" || !list || extra !== undefined) return new Response("not found", { status: 404 });
    const timings: number[] = [];
    let query: CompiledListQuery;
    try {
      query = await compileListQuery(list, queryInput(url), catalogFor(env.DB, timings));
    } catch (error) {
      // The engine's ApiError (InvalidQuery) names the offending term; the bench shows it verbatim.
      return json({ error: error instanceof Error ? error.message : String(error), detail: error }, timings, 400);
    }
    if (resource === "entities" && variant === undefined) {
      const started = Date.now();
      const result = await runListQuery(env.DB, query);
      // runListQuery batches page and total; the batch's wall time stands in for their SQL time.
      timings.push(Date.now() - started);
      return json(result, timings);
    }
    if (resource === "entities" && variant === "page") return json({ items: await page(env.DB, query, timings) }, timings);
    if (resource === "plan" && variant === undefined) {
      const items = await page(env.DB, query, timings);
      const count = await env.DB.prepare(query.count.sql).bind(...query.count.params).all<{ total: number }>();
      timings.push(count.meta.duration);
      return json(
        {
          sql: query.sql,
          params: query.params,
          plan: await explain(env.DB, query),
          countSql: query.count.sql,
          countPlan: await explain(env.DB, query.count),
          returned: items.length,
          total: count.results[0]?.total ?? 0,
          // D1's execution time of each statement (catalog lookup, page, count), in ms.
          sqlMs: { catalog: timings[0], page: timings[1], count: timings[2] },
        },
        timings,
      );
    }
    return new Response("not found", { status: 404 });
  },
};
