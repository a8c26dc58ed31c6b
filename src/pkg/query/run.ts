/**
 * Runs a compiled list query: the capped counts when the plan depends on them (one batch, unless
 * this isolate counted the same terms within the last minute, see estimate-cache.ts), then the
 * page and, when the client asked for it, the total (one batch: one round trip, one snapshot).
 */
import type { Database } from "../../db/statements";
import type { CompiledListQuery } from "./compile";
import { takeKeys } from "./keyset";
import { cachedCounts, rememberCounts } from "./estimate-cache";
import type { ListPlan, PlannedStatement } from "./plan";
import type { SqlScalar } from "./sql-values";

export interface ListQueryResult<T> {
  items: T[];
  /** The number of matches before skip and take; only when the query asked for it (includeTotal). */
  total: number | undefined;
  /** The plan the page ran in (see plan.ts), for logs, tests and benchmarks. */
  plan: ListPlan;
  /**
   * In a keyset read (ListQueryInput.keyset), the keys of this page's last row: `keyset.after` of
   * the next page. Absent when the page came back short: there is no next page.
   */
  next: SqlScalar[] | undefined;
}

/** A list function's answer: the page's items as the API shows them, the total, and a keyset read's `next`. */
export type ListPage<T> = Pick<ListQueryResult<unknown>, "total" | "next"> & { items: T[] };

/**
 * The page statement for a query: the compiled one, or, when the plan depends on how many rows
 * the filter terms match, the one those counts choose (`counts` are the capped counts, in the order
 * of `query.estimates`).
 */
export async function planListQuery(db: Database, query: CompiledListQuery): Promise<PlannedStatement & { counts: number[] }> {
  if (query.estimates.length === 0) return { sql: query.sql, params: query.params, plan: query.plan, counts: [] };
  const key = JSON.stringify(query.estimates);
  const cached = query.cacheEstimates ? cachedCounts(key) : undefined;
  if (cached) return { ...query.choose(cached), counts: cached };
  const results = await db.batch(query.estimates.map((statement) => db.prepare(statement.sql).bind(...statement.params)));
  const counts = results.map((result) => Number((result.results[0] as { n?: number } | undefined)?.n ?? 0));
  if (query.cacheEstimates) rememberCounts(key, counts);
  return { ...query.choose(counts), counts };
}

/**
 * Runs a compiled list query. `total` is present only when the query asked for it: a count costs
 * time in proportion to the matches, whatever the page. `take=0` reads no page.
 */
export async function runListQuery<T = Record<string, unknown>>(db: Database, query: CompiledListQuery): Promise<ListQueryResult<T>> {
  const page = query.take > 0 ? await planListQuery(db, query) : undefined;
  const statements = [
    ...(page ? [db.prepare(page.sql).bind(...page.params)] : []),
    ...(query.includeTotal ? [db.prepare(query.count.sql).bind(...query.count.params)] : []),
  ];
  const results = statements.length > 0 ? await db.batch(statements) : [];
  const rows = (page ? (results[0]?.results ?? []) : []) as Record<string, unknown>[];
  const last = query.keys === undefined ? undefined : takeKeys(rows, query.keys);
  const count = query.includeTotal ? results[results.length - 1]?.results[0] : undefined;
  return {
    items: rows as T[],
    total: query.includeTotal ? ((count as { total?: number } | undefined)?.total ?? 0) : undefined,
    plan: page?.plan ?? query.plan,
    next: rows.length === query.take ? last : undefined,
  };
}
