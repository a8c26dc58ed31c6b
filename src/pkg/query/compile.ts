/**
 * Compiles a list request (ids, excludeIds, searchText, properties, order, skip, take, includeTotal,
 * plus the list's own conditions) into parameterised statements: the page in the shapes plan.ts
 * chooses from (page-sql.ts), and the total.
 *
 * Parameters: `?1` is a JSON array with every value of the request (see SqlValues), `?2` is take
 * and `?3` is skip. So a statement binds three parameters whatever the size of the filter, well
 * under D1's 100, and no client text is ever part of the SQL.
 */
import { filterTerms, parseFilter } from "./filter";
import type { ListDefinition } from "./list";
import { orderPropertyCandidates, parseOrder, resolveOrder } from "./order";
import { checkKeysetOrder, type Keyset } from "./keyset";
import { countSql, keysetPageSql, pageSql, type ListQueryParts } from "./page-sql";
import { idConditions, parseIdList, parsePaging, searchCondition } from "./params";
import { MAX_STATEMENT_BYTES, planner, statementBytes, type ListPlan, type PlanOptions, type PlannedStatement } from "./plan";
import { queryError, quote } from "./problems";
import { SqlValues, type Condition } from "./sql-values";
import type { CatalogLookup, PropertyInfo } from "./types";
import { typeFilter } from "./typing";

export { MAX_STATEMENT_BYTES };

/** The common list query parameters, as they arrive from the query string (or already coerced by zod). */
export interface ListQueryInput {
  ids?: string | readonly string[] | undefined;
  excludeIds?: string | readonly string[] | undefined;
  searchText?: string | undefined;
  properties?: string | undefined;
  order?: string | undefined;
  skip?: number | string | undefined;
  take?: number | string | undefined;
  /** `true` (or "true") adds the total; default false. */
  includeTotal?: boolean | string | undefined;
  /**
   * Reads the list by keyset (keyset.ts), for a caller that reads it whole (src/export): the `take`
   * rows after `keyset.after`, a previous page's `next` (the first page without it). skip is
   * ignored and the lists plan runs. No route's query schema has it: a client cannot set it.
   */
  keyset?: Keyset | undefined;
}

export interface CompiledStatement {
  sql: string;
  params: unknown[];
}

export interface CompiledListQuery extends CompiledStatement {
  /**
   * `sql` is the page in this plan: the lists plan, or the plan that was fixed at compile time.
   * When `estimates` is not empty, runListQuery runs them first and takes `choose(counts)` instead.
   */
  plan: ListPlan;
  estimates: CompiledStatement[];
  choose(counts: readonly number[]): PlannedStatement;
  /** Whether the counts may come from this isolate's cache (estimate-cache.ts). */
  cacheEstimates: boolean;
  /** `SELECT count(*) AS total ...` over the same conditions, without order and paging. */
  count: CompiledStatement;
  /** Whether the client asked for the total (it costs time in proportion to the matches). */
  includeTotal: boolean;
  skip: number;
  take: number;
  /** In a keyset read, the number of key columns each row carries (runListQuery takes them out). */
  keys: number | undefined;
}

/**
 * Compiles a list request. Throws ApiError InvalidQuery (with `errors[].field` naming the query
 * parameter) for any malformed or unknown part. `catalog` is called at most once, with every
 * property name the filter and the order mention. `options` forces a plan (tests, benchmarks).
 *
 * @example
 * const query = await compileListQuery(deviationList, c.req.valid("query"), catalogFor(db, "Deviation"), [
 *   ...(statuses ? [inList("e.status", statuses)] : []),
 * ]);
 * return answerPage(c, await runListQuery<DeviationRow>(c.env.DB, query)); // src/pkg/openapi.ts
 */
export async function compileListQuery(
  list: ListDefinition,
  input: ListQueryInput,
  catalog: CatalogLookup,
  extraConditions: readonly Condition[] = [],
  options: PlanOptions = {},
): Promise<CompiledListQuery> {
  const filter = parseFilter(input.properties);
  // Empty terms are skipped (`a,,b,`); an order of nothing but empty terms (`order=,`) is the default order.
  const given = parseOrder(input.order);
  const orderRequests = given.length > 0 ? given : parseOrder(list.defaultOrder);
  const { keyset } = input;
  const paging = parsePaging(keyset ? undefined : input.skip, input.take);
  const { skip, take } = paging;
  const ids = parseIdList(list, input.ids, "query.ids");
  const excludeIds = parseIdList(list, input.excludeIds, "query.excludeIds");
  const includeTotal = parseIncludeTotal(input.includeTotal);

  const names = [...new Set([...filterTerms(filter).map((t) => t.property), ...orderPropertyCandidates(orderRequests)])];
  const properties = names.length > 0 ? await catalog(names) : new Map<string, PropertyInfo>();
  const parts: ListQueryParts = {
    list,
    filter: filter ? typeFilter(filter, properties) : undefined,
    ids,
    conditions: [
      ...idConditions(list, ids, excludeIds),
      ...[searchCondition(list, input.searchText)].filter((c): c is Condition => c !== undefined),
      ...extraConditions,
    ],
    orders: resolveOrder(orderRequests, list, properties),
  };

  if (keyset) checkKeysetOrder(parts.orders);
  const after = keyset?.after;
  let pageValues = new SqlValues();
  let sql = keyset ? keysetPageSql(parts, pageValues, after, options.splitKeyset) : pageSql(parts, { kind: "lists" }, pageValues);
  if (keyset && statementBytes(sql) > MAX_STATEMENT_BYTES) {
    pageValues = new SqlValues();
    sql = keysetPageSql(parts, pageValues, after, false);
  }
  checkSize(sql, input.properties ? "query.properties" : "query.order");
  const lists: PlannedStatement = { sql, params: [pageValues.toJson(), take, skip, ...(after ?? [])], plan: "lists" };
  const countValues = new SqlValues();
  const countText = countSql(parts, countValues);
  // A keyset page is always the lists plan: the other shapes select no keys, and a read of the whole
  // list gains nothing from a walk that stops early.
  const choice = keyset ? { estimates: [], choose: () => lists } : planner(parts, paging, lists, options);
  const initial = choice.estimates.length === 0 ? choice.choose([]) : lists;
  return {
    ...initial,
    estimates: choice.estimates,
    choose: choice.choose,
    cacheEstimates: options.cacheEstimates ?? true,
    // A statement must be bound with exactly as many parameters as it references.
    count: { sql: countText, params: countText.includes("?1") ? [countValues.toJson()] : [] },
    includeTotal,
    skip,
    take,
    keys: keyset ? parts.orders.length + 1 : undefined,
  };
}

function parseIncludeTotal(raw: boolean | string | undefined): boolean {
  if (raw === undefined || typeof raw === "boolean") return raw ?? false;
  const text = raw.trim().toLowerCase();
  if (text === "" || text === "false") return false;
  if (text === "true") return true;
  throw queryError("query.includeTotal", "format", `includeTotal must be true or false, not ${quote(raw)}.`);
}

export function checkSize(sql: string, field: "query.properties" | "query.order" | "query.fieldNames"): void {
  const bytes = statementBytes(sql);
  if (bytes > MAX_STATEMENT_BYTES) {
    throw queryError(
      field,
      "limit",
      `The query is too complex: it needs ${bytes} bytes of SQL and the database accepts ${MAX_STATEMENT_BYTES}.`,
    );
  }
}
