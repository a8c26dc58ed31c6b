/**
 * Compiles a list request (ids, excludeIds, searchText, properties, order, skip, take, plus the
 * list's own conditions) into ONE parameterised statement for the page and one for the total.
 *
 * Parameters: `?1` is a JSON array with every value of the request (see SqlValues), `?2` is take
 * and `?3` is skip. So the statement binds three parameters whatever the size of the filter, well
 * under D1's 100, and no client text is ever part of the SQL.
 */
import { filterTerms, parseFilter } from "./filter";
import { filterSql } from "./filter-sql";
import type { ListDefinition } from "./list";
import { orderPropertyCandidates, orderSql, parseOrder, resolveOrder } from "./order";
import { idConditions, parseIdList, parsePaging, searchCondition } from "./params";
import { queryError } from "./problems";
import { joinBalanced, SqlValues, type Condition } from "./sql-values";
import type { CatalogLookup, PropertyInfo } from "./types";
import { typeFilter } from "./typing";

/** D1 rejects statements longer than 100 KB. */
export const MAX_STATEMENT_BYTES = 100_000;

/** The common list query parameters, as they arrive from the query string (or already coerced by zod). */
export interface ListQueryInput {
  ids?: string | readonly string[] | undefined;
  excludeIds?: string | readonly string[] | undefined;
  searchText?: string | undefined;
  properties?: string | undefined;
  order?: string | undefined;
  skip?: number | string | undefined;
  take?: number | string | undefined;
}

export interface CompiledStatement {
  sql: string;
  params: unknown[];
}

export interface CompiledListQuery extends CompiledStatement {
  /** `SELECT count(*) AS total ...` over the same conditions, without order and paging. */
  count: CompiledStatement;
  skip: number;
  take: number;
}

/**
 * Compiles a list request. Throws ApiError InvalidQuery (with `errors[].field` naming the query
 * parameter) for any malformed or unknown part. `catalog` is called at most once, with every
 * property name the filter and the order mention.
 *
 * @example
 * const query = await compileListQuery(deviationList, c.req.valid("query"), catalogFor(db, "Deviation"), [
 *   ...(statuses ? [inList("e.status", statuses)] : []),
 * ]);
 * const { items, total } = await runListQuery<DeviationRow>(c.env.DB, query);
 */
export async function compileListQuery(
  list: ListDefinition,
  input: ListQueryInput,
  catalog: CatalogLookup,
  extraConditions: readonly Condition[] = [],
): Promise<CompiledListQuery> {
  const filter = parseFilter(input.properties);
  const orderText = input.order?.trim() ? input.order : list.defaultOrder;
  const orderRequests = parseOrder(orderText);
  const { skip, take } = parsePaging(input.skip, input.take);
  const ids = parseIdList(list, input.ids, "query.ids");
  const excludeIds = parseIdList(list, input.excludeIds, "query.excludeIds");

  const names = [...new Set([...filterTerms(filter).map((t) => t.property), ...orderPropertyCandidates(orderRequests)])];
  const properties = names.length > 0 ? await catalog(names) : new Map<string, PropertyInfo>();
  const typed = filter ? typeFilter(filter, properties) : undefined;
  const orders = resolveOrder(orderRequests, list, properties);

  const values = new SqlValues();
  const conditions: Condition[] = [
    ...(typed ? [(v: SqlValues) => filterSql(typed, { idExpression: list.idExpression, entityKind: list.entityKind, values: v })] : []),
    ...idConditions(list, ids, excludeIds),
    ...[searchCondition(list, input.searchText)].filter((c): c is Condition => c !== undefined),
    ...extraConditions,
  ];
  const where = whereClause(conditions, values);
  const order = orderSql(orders, list, values);
  const from = [`FROM ${list.table} ${list.alias}`, ...(list.joins ?? [])];
  const sql = [`SELECT ${list.select ?? `${list.alias}.*`}`, ...from, ...order.joins, where, `ORDER BY ${order.orderBy}`, "LIMIT ?2 OFFSET ?3"]
    .filter(Boolean)
    .join(" ");
  const countSql = [`SELECT count(*) AS total`, ...from, where].filter(Boolean).join(" ");
  checkSize(sql, input.properties ? "query.properties" : "query.order");
  const json = values.toJson();
  return {
    sql,
    params: [json, take, skip],
    // A statement must be bound with exactly as many parameters as it references.
    count: { sql: countSql, params: countSql.includes("?1") ? [json] : [] },
    skip,
    take,
  };
}

/** Builds `WHERE ((a) AND (b))` from conditions, or "" when there are none. */
export function whereClause(conditions: readonly Condition[], values: SqlValues): string {
  if (conditions.length === 0) return "";
  return `WHERE ${joinBalanced(conditions.map((condition) => condition(values)), "AND")}`;
}

export function checkSize(sql: string, field: "query.properties" | "query.order" | "query.fieldNames"): void {
  const bytes = new TextEncoder().encode(sql).length;
  if (bytes > MAX_STATEMENT_BYTES) {
    throw queryError(field, "limit", `The query is too complex: it needs ${bytes} bytes of SQL and the database accepts ${MAX_STATEMENT_BYTES}.`);
  }
}

/**
 * Runs a compiled list query: the page and the total in one batch (one round trip, one snapshot).
 */
export async function runListQuery<T = Record<string, unknown>>(db: D1Database, query: CompiledListQuery): Promise<{ items: T[]; total: number }> {
  const [page, count] = await db.batch([
    db.prepare(query.sql).bind(...query.params),
    db.prepare(query.count.sql).bind(...query.count.params),
  ]);
  const total = (count?.results[0] as { total?: number } | undefined)?.total ?? 0;
  return { items: (page?.results ?? []) as T[], total };
}
