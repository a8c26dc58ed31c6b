/**
 * Chooses the shape of a list page (page-sql.ts). SQLite cannot choose well here by itself: D1
 * never runs ANALYZE, so the planner has no statistics, and without them it neither knows which
 * filter term is selective nor that reading an order index and stopping early beats sorting every
 * match. The engine therefore decides, from what the request says and, when it matters, from
 * capped counts of the filter terms (one small batch before the page):
 *
 * 1. `ids` (at most IDS_THAT_DRIVE of them) with a filter: the ids drive, every term is a probe.
 * 2. First order term a property with an indexed column (numbers, dates, booleans, text,
 *    classification names): count the rows each filter term reads, up to ESTIMATE_CAP (an index
 *    range read of at most that many entries; about 0.5 ms at the cap on local D1), then estimate
 *    in rows read (ROW_COST, measured on local D1: a list row ~2 us, a probe ~2 to 6 us):
 *    - lists: every term's rows;
 *    - driven by a top-level `and` operand: its matches (a term's count, the sum over an `or`, the
 *      least over an `and`; a negated term has no bound) times one list row plus a probe of every
 *      other term;
 *    and take the cheaper when it costs at most WALK_ABOVE. Otherwise walk the order index
 *    (walkSql) in a window of WALK_WINDOW_PER_ROW index entries per row wanted (skip + take), at
 *    least MIN_WALK_WINDOW; when skip + take needs a window larger than MAX_WALK_WINDOW, the
 *    cheaper of lists and driven. Without filter terms there is nothing to count: the walk.
 * 3. First order term a canonical field the list declares `indexed` (its default order: an index
 *    ends with it), with a filter or a condition that has a probe (a plant, tags): as in 2., but the
 *    walk reads the field's index (page-sql.ts, fieldWalkSql), and where a filter term is cheap to
 *    read whole it drives and the conditions are probed. Without a filter or such a condition the
 *    lists plan is already the walk: SQLite reads an index (conditions..., field, id) in order.
 * 4. Otherwise the lists plan (every term a list, sort every match), as before there were plans.
 *
 * Every plan returns the same rows in the same order (test/query/property.test.ts runs each plan
 * against an in-memory evaluator); only the cost differs.
 */
import { isNegated, termRows } from "./filter-sql";
import { indexedOrderColumn } from "./order";
import { andOperands, pageSql, walkSql, type ListQueryParts } from "./page-sql";
import { isEqualityProbe } from "./probe-sql";
import { SqlValues } from "./sql-values";
import type { TypedNode, TypedTerm } from "./typing";

export type ListPlan = "lists" | "driven" | "walk";

/** Each term's count stops at this many rows (a count at the cap, or a term not counted, has no bound). */
export const ESTIMATE_CAP = 5000;
/** At most this many counts per request (one small batch). */
export const MAX_ESTIMATES = 8;
/**
 * Relative cost (about microseconds on local D1) of a row read into a list, of an equality probe
 * (one covering index lookup) and of any other probe (a key lookup and the table row).
 */
export const ROW_COST = { list: 2, equalityProbe: 2, probe: 6 } as const;
/** The walk is chosen when lists and driven would both cost more than this (list rows of ESTIMATE_CAP rows). */
export const WALK_ABOVE = ROW_COST.list * ESTIMATE_CAP;
/** `ids` that drive a filtered page, at most. */
export const IDS_THAT_DRIVE = 1000;
/** Order-index entries the walk may read per row wanted (skip + take) before the lists plan takes over. */
export const WALK_WINDOW_PER_ROW = 50;
export const MIN_WALK_WINDOW = 2000;
export const MAX_WALK_WINDOW = 20_000;

/** D1 rejects statements longer than 100 KB. */
export const MAX_STATEMENT_BYTES = 100_000;

export interface PlanOptions {
  /**
   * Forces a plan (tests and benchmarks). A plan the request cannot use falls back to lists:
   * walk needs a first order term with an indexed column, driven a filter.
   */
  plan?: ListPlan | undefined;
  /** With plan "driven": the top-level `and` operand that drives, or the `ids`. Default: `ids` when given, else 0. */
  driver?: number | "ids" | undefined;
  /** With plan "walk": the window, in order-index entries. Default as the automatic choice. */
  walkWindow?: number | undefined;
  /** Whether runListQuery may reuse this isolate's counts of the last minute (estimate-cache.ts). Default true. */
  cacheEstimates?: boolean | undefined;
  /**
   * In a keyset read: false forces the one-part page (page-sql.ts, keysetPageSql), which otherwise
   * runs only when the three-part one would be larger than D1 accepts. Tests. Default true.
   */
  splitKeyset?: boolean | undefined;
}

export interface PlannedStatement {
  sql: string;
  params: unknown[];
  plan: ListPlan;
}

export interface Planner {
  /** Capped counts to run before choosing: `SELECT count(*) AS n ...`. Empty when the plan is fixed. */
  estimates: { sql: string; params: unknown[] }[];
  /** The page statement for the counts, in the order of `estimates`. */
  choose(counts: readonly number[]): PlannedStatement;
}

export function statementBytes(sql: string): number {
  return new TextEncoder().encode(sql).length;
}

/** The window for skip + take rows, or undefined when the walk would read too much. */
export function walkWindow(need: number): number | undefined {
  const window = Math.max(MIN_WALK_WINDOW, need * WALK_WINDOW_PER_ROW);
  return window <= MAX_WALK_WINDOW ? window : undefined;
}

/**
 * The planner of one request. `lists` is the lists-plan statement, which compile.ts has already
 * built and checked against the size limit; the other shapes fall back to it when they would be
 * larger than D1 accepts.
 */
export function planner(
  parts: ListQueryParts,
  paging: { skip: number; take: number },
  lists: PlannedStatement,
  options: PlanOptions = {},
): Planner {
  const build = (plan: ListPlan, sql: (values: SqlValues) => string | undefined): PlannedStatement => {
    const values = new SqlValues();
    const text = sql(values);
    if (text === undefined || statementBytes(text) > MAX_STATEMENT_BYTES) return lists;
    return { sql: text, params: [values.toJson(), paging.take, paging.skip], plan };
  };
  const operands = andOperands(parts.filter);
  // Conditions with a probe (a plant, tags) usually match many rows: where the filter is cheap to
  // read whole it drives, even a filter of one term, and they are probed (page-sql.ts).
  const probing = parts.conditions.some((condition) => condition.probe);
  const driven = (driver: number | "ids") =>
    build("driven", (values) => {
      if (driver === "ids") return parts.ids && parts.filter ? pageSql(parts, { kind: "probes" }, values) : undefined;
      return (operands.length > 1 || probing) && driver < operands.length ? pageSql(parts, { kind: "driven", driver }, values) : undefined;
    });
  const walk = (window: number | undefined) =>
    build("walk", (values) => (window === undefined ? undefined : walkSql(parts, values, window)));
  const fixed = (statement: PlannedStatement): Planner => ({ estimates: [], choose: () => statement });
  const need = paging.skip + paging.take;

  switch (options.plan) {
    case "lists":
      return fixed(lists);
    case "driven":
      return fixed(driven(options.driver ?? (parts.ids ? "ids" : 0)));
    case "walk":
      return fixed(walk(options.walkWindow ?? walkWindow(need) ?? MAX_WALK_WINDOW));
    case undefined:
      break;
  }

  if (paging.take === 0) return fixed(lists);
  if (parts.ids) return fixed(parts.filter && parts.ids.length <= IDS_THAT_DRIVE ? driven("ids") : lists);
  const first = parts.orders[0];
  if (!first) return fixed(lists);
  if (first.kind === "field") {
    // A canonical order walks only when something must be checked row by row; otherwise SQLite
    // reads an index (conditions..., field, id) in order and stops at the page by itself.
    if (!first.indexed || (!parts.filter && !probing)) return fixed(lists);
  } else if (!indexedOrderColumn(first)) {
    return fixed(lists);
  }

  const terms = termsOf(operands);
  if (terms.length === 0) return fixed(walk(walkWindow(need)));
  const counted = terms.slice(0, MAX_ESTIMATES);
  return {
    estimates: counted.map((term) => {
      const values = new SqlValues();
      const { rows } = termRows(term, parts.list.entityKind, values);
      return {
        sql: `SELECT count(*) AS n FROM (SELECT 1 FROM property_values pv WHERE ${rows} LIMIT ?2)`,
        params: [values.toJson(), ESTIMATE_CAP],
      };
    }),
    choose(counts) {
      // A count that reached the cap (or a term not counted) only says "at least the cap": unbounded.
      const rows = new Map(terms.map((term, i) => [term, known(counts[i])]));
      const costs = [
        ...(probing ? [] : [{ plan: () => lists, cost: ROW_COST.list * [...rows.values()].reduce((sum, n) => sum + n, 0) }]),
        ...(operands.length > 1 || probing
          ? operands.map((operand, driver) => ({
              plan: () => driven(driver),
              cost: matchBound(operand, rows) * (ROW_COST.list + probeCost(operands.filter((other) => other !== operand))),
            }))
          : []),
      ];
      const cheapest = costs.reduce((best, option) => (option.cost < best.cost ? option : best));
      const window = walkWindow(need);
      return cheapest.cost <= WALK_ABOVE || window === undefined ? cheapest.plan() : walk(window);
    },
  };
}

function known(count: number | undefined): number {
  return count === undefined || count >= ESTIMATE_CAP ? Number.POSITIVE_INFINITY : count;
}

/** What probing one candidate for every term of these operands costs. */
function probeCost(operands: readonly TypedNode[]): number {
  return termsOf(operands).reduce((sum, term) => sum + (isEqualityProbe(term) ? ROW_COST.equalityProbe : ROW_COST.probe), 0);
}

/** Every term of the operands, the top-level ones first (they are counted first). */
function termsOf(operands: readonly TypedNode[]): TypedTerm[] {
  const all = (node: TypedNode): TypedTerm[] => (node.kind === "term" ? [node] : node.children.flatMap(all));
  return [...operands.filter((o): o is TypedTerm => o.kind === "term"), ...operands.filter((o) => o.kind !== "term").flatMap(all)];
}

/**
 * An upper bound of the entities an operand matches: a term's rows (a negated term matches the
 * entities WITHOUT its rows: no bound), the least of an `and`, the sum of an `or`.
 */
function matchBound(node: TypedNode, rows: ReadonlyMap<TypedTerm, number>): number {
  if (node.kind === "term") return isNegated(node) ? Number.POSITIVE_INFINITY : (rows.get(node) ?? Number.POSITIVE_INFINITY);
  const bounds = node.children.map((child) => matchBound(child, rows));
  return node.kind === "and" ? Math.min(...bounds) : bounds.reduce((sum, bound) => sum + bound, 0);
}
