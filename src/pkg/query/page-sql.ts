/**
 * The SQL shapes of a list page. All bind `?1` (the JSON array of every value, see SqlValues),
 * `?2` (take) and `?3` (skip); plan.ts decides which one a request runs.
 *
 * - lists: every filter term is an `id IN (subquery)` list (filter-sql.ts), order values are LEFT
 *   JOINed, and SQLite sorts every match. Cost grows with the rows each term matches.
 * - driven: one top-level `and` operand (or the `ids` list) stays a list and drives; every other
 *   term is a per-entity probe (probe-sql.ts). Cost grows with the driver's matches only.
 * - walk: for a list ordered first by a property: read that property's index in order and probe
 *   each candidate, stopping at skip + take rows, so cost grows with skip + take divided by the
 *   share of entities the filter keeps, not with the table. See walkSql.
 */
import { filterSql } from "./filter-sql";
import { keyColumns, keyParameter, keysetCondition } from "./keyset";
import type { SqlScalar } from "./sql-values";
import type { ListDefinition } from "./list";
import { indexedOrderColumn, orderSql, type ResolvedOrder } from "./order";
import { probeSql } from "./probe-sql";
import { joinBalanced, type Condition, type SqlValues } from "./sql-values";
import type { TypedNode } from "./typing";

/** A compiled list request, before a plan is chosen. */
export interface ListQueryParts {
  list: ListDefinition;
  filter: TypedNode | undefined;
  /** The `ids` parameter, when given. */
  ids: readonly string[] | undefined;
  /** ids, excludeIds, searchText and the list's own conditions, in that order. */
  conditions: readonly Condition[];
  orders: readonly ResolvedOrder[];
}

/**
 * How the filter takes part in a page: every term as a list; every term as a probe (when something
 * else drives: the `ids` list, or the order walk); or one top-level `and` operand as a list that
 * drives and probes for the others.
 */
export type FilterForm = { kind: "lists" } | { kind: "probes" } | { kind: "driven"; driver: number };

/** The operands of the filter's top-level `and` (the filter itself when it is not an `and`). */
export function andOperands(filter: TypedNode | undefined): TypedNode[] {
  if (!filter) return [];
  return filter.kind === "and" ? filter.children : [filter];
}

function filterCondition(parts: ListQueryParts, form: FilterForm, values: SqlValues, idExpression: string): string | undefined {
  if (!parts.filter) return undefined;
  const context = { idExpression, entityKind: parts.list.entityKind, values };
  if (form.kind === "lists") return filterSql(parts.filter, context);
  if (form.kind === "probes") return probeSql(parts.filter, context);
  const operands = andOperands(parts.filter);
  return joinBalanced(
    operands.map((operand, i) => (i === form.driver ? filterSql(operand, context) : probeSql(operand, context))),
    "AND",
  );
}

/**
 * The list's own conditions in a page whose filter takes the given form: as sets in the lists plan
 * (SQLite may drive from them), and as per-entity probes where they have one (see Condition) when
 * something else drives or walks, so a set such as every entity of a plant is never read whole to
 * check a few candidates.
 */
function conditionsSql(parts: ListQueryParts, form: FilterForm, values: SqlValues): string[] {
  return parts.conditions.map((condition) => (form.kind !== "lists" && condition.probe ? condition.probe(values) : condition(values)));
}

function where(parts: readonly (string | undefined)[]): string {
  const present = parts.filter((p): p is string => p !== undefined);
  return present.length === 0 ? "" : `WHERE ${joinBalanced(present, "AND")}`;
}

/**
 * `SELECT ... FROM <list> ... WHERE ... ORDER BY ... LIMIT <limit>` with the filter in the given
 * form. `extra` adds a condition over the order terms' value expressions (the walk's remainder, a
 * keyset page's start); `keys` selects each row's keys too (keyset.ts).
 */
export function pageSql(
  parts: ListQueryParts,
  form: FilterForm,
  values: SqlValues,
  options: { limit: string; extra?: ((orderExpressions: readonly string[]) => string) | undefined; keys?: boolean } = {
    limit: "?2 OFFSET ?3",
  },
): string {
  const { list } = parts;
  const filter = filterCondition(parts, form, values, list.idExpression);
  const conditions = conditionsSql(parts, form, values);
  const order = orderSql(parts.orders, list, values);
  const keys = options.keys ? `, ${keyColumns(order.expressions, list.idExpression)}` : "";
  return [
    `SELECT ${list.select ?? `${list.alias}.*`}${keys} FROM ${list.table} ${list.alias}`,
    ...(list.joins ?? []),
    ...order.joins,
    where([filter, ...conditions, options.extra?.(order.expressions)]),
    `ORDER BY ${order.orderBy}`,
    `LIMIT ${options.limit}`,
  ]
    .filter(Boolean)
    .join(" ");
}

/**
 * A keyset page (keyset.ts): the lists plan, with each row's keys, after the row whose keys `after`
 * holds. When the first key is a value, the page is three parts in a row, as the order has them:
 *
 *   SELECT * FROM (... WHERE <first> = <key 0> AND <the rest after> ... LIMIT take)   -- the tie
 *   UNION ALL SELECT * FROM (... WHERE <first> < <key 0> ... LIMIT take)             -- later values (desc)
 *   UNION ALL SELECT * FROM (... WHERE <first> IS NULL ... LIMIT take)               -- nulls, last
 *   LIMIT take
 *
 * Each part is a range of an index that starts with the first term's column (a list's default
 * order has one), so SQLite starts the page at the key instead of walking the index from its start
 * and testing every entry against one condition with ORs (measured: a page of 1,000 deviations
 * at row 99,000 read in 34 ms instead of 51), and runs a later part only when the earlier ones came
 * up short. Without such an index each part is sorted on its own, over fewer rows than the whole.
 * `split` false gives the one-part form (the same rows), for a filter too large to write three times.
 */
export function keysetPageSql(parts: ListQueryParts, values: SqlValues, after: readonly SqlScalar[] | undefined, split = true): string {
  const { list, orders } = parts;
  const page = (limit: string, extra?: (expressions: readonly string[]) => string) =>
    pageSql(parts, { kind: "lists" }, values, { limit, keys: true, extra });
  const first = orders[0];
  if (!after) return page("?2 OFFSET ?3");
  if (!first || after[0] === null || !split) return page("?2 OFFSET ?3", (x) => keysetCondition(orders, x, list.idExpression, after));
  const later = first.direction === "desc" ? "<" : ">";
  const tie = page("?2", (x) => `${x[0]} = ${keyParameter(0)} AND ${keysetCondition(orders, x, list.idExpression, after, 1)}`);
  const rest = page("?2", (x) => `${x[0]} ${later} ${keyParameter(0)}`);
  const nulls = page("?2", (x) => `${x[0]} IS NULL`);
  return `SELECT * FROM (${tie}) UNION ALL SELECT * FROM (${rest}) UNION ALL SELECT * FROM (${nulls}) LIMIT ?2 OFFSET ?3`;
}

/** `SELECT count(*) AS total ...` over the same conditions (filter as lists), without order and paging. */
export function countSql(parts: ListQueryParts, values: SqlValues): string {
  const { list } = parts;
  const filter = filterCondition(parts, { kind: "lists" }, values, list.idExpression);
  const conditions = parts.conditions.map((condition) => condition(values));
  return [`SELECT count(*) AS total FROM ${list.table} ${list.alias}`, ...(list.joins ?? []), where([filter, ...conditions])]
    .filter(Boolean)
    .join(" ");
}

/**
 * The order walk, for a list whose first order term is a property with an indexed column:
 *
 *   SELECT * FROM (              -- 1. the window: fewer than `window` index entries, in order
 *     SELECT ... FROM property_values pw CROSS JOIN <list> e
 *     WHERE pw.(kind, name) = (?, P) AND pw.value > <bound> AND e.id = pw.entity_id
 *       AND <filter as probes on pw.entity_id> AND <other conditions>
 *     ORDER BY pw.value DESC, <other order terms>, e.id LIMIT skip + take)
 *   UNION ALL
 *   SELECT * FROM (              -- 2. the rest: as the lists plan, at or below the bound, or null
 *     <lists plan> AND (po0.value IS NULL OR po0.value <= <bound>) ... LIMIT skip + take)
 *   LIMIT take OFFSET skip
 *
 * (for `asc`: `<`, `>=`, and the bound is the window's largest value). `<bound>` is the value of
 * the window-th entry of the index in walk order (or of the last one), so the window holds whole
 * groups of equal values, fewer than `window` entries, and the two parts split the order exactly:
 * every row of part 1 sorts before every row of part 2. Part 1 reads the index from the start and
 * stops after skip + take rows or at the bound, whichever comes first; SQLite runs part 2 only
 * when part 1 came up short. So a filter that keeps few of the walked entities, or an order by a
 * property with few distinct values (a group larger than the window leaves part 1 empty), costs at
 * most `window` probes plus the lists plan. CROSS JOIN keeps property_values outermost (SQLite
 * never reorders a CROSS JOIN), and the filter probes name pw.entity_id so they run before the
 * entity row is read. pw needs no `position = 0`: an orderable property is single-valued, with one
 * row per entity (see probe-sql.ts), so the walk reads the covering index alone. Ties within a
 * group are sorted by id in a small temporary B-tree per group (the index holds them by id in the
 * walk's direction, which is the wrong one for `desc`).
 *
 * Entities whose value is null or absent are in part 2, which is what puts nulls last. Part 1
 * leaves out NULLS LAST: its values are never null, and ASC NULLS LAST would stop SQLite from
 * reading the index in order.
 */
export function walkSql(parts: ListQueryParts, values: SqlValues, window: number): string | undefined {
  const first = parts.orders[0];
  if (first?.kind === "field") return first.indexed ? fieldWalkSql(parts, values, window) : undefined;
  return propertyWalkSql(parts, values, window);
}

function propertyWalkSql(parts: ListQueryParts, values: SqlValues, window: number): string | undefined {
  const [first, ...rest] = parts.orders;
  const column = first ? indexedOrderColumn(first) : undefined;
  if (!first || first.kind !== "property" || !column) return undefined;
  const { list } = parts;
  const descending = first.direction === "desc";
  const direction = descending ? "DESC" : "ASC";
  const kind = values.value(list.entityKind);
  const name = values.value(first.property.name);
  const bound =
    `(SELECT ${descending ? "min" : "max"}(pbound.v) FROM (SELECT pb.${column} AS v FROM property_values pb` +
    ` WHERE pb.entity_kind = ${kind} AND pb.name = ${name} AND pb.${column} IS NOT NULL` +
    ` ORDER BY pb.${column} ${direction} LIMIT ${values.value(window)}) pbound)`;

  const filter = filterCondition(parts, { kind: "probes" }, values, "pw.entity_id");
  const conditions = conditionsSql(parts, { kind: "probes" }, values);
  const order = orderSql(rest, list, values);
  const windowPart = [
    `SELECT ${list.select ?? `${list.alias}.*`} FROM property_values pw CROSS JOIN ${list.table} ${list.alias}`,
    ...(list.joins ?? []),
    ...order.joins,
    where([
      `pw.entity_kind = ${kind} AND pw.name = ${name} AND pw.${column} ${descending ? ">" : "<"} ${bound}`,
      `${list.idExpression} = pw.entity_id`,
      filter,
      ...conditions,
    ]),
    `ORDER BY pw.${column} ${direction}, ${order.orderBy}`,
    "LIMIT ?2 + ?3",
  ].join(" ");
  const restPart = pageSql(parts, { kind: "lists" }, values, {
    limit: "?2 + ?3",
    extra: ([value]) => `${value} IS NULL OR ${value} ${descending ? "<=" : ">="} ${bound}`,
  });
  return `SELECT * FROM (${windowPart}) UNION ALL SELECT * FROM (${restPart}) LIMIT ?2 OFFSET ?3`;
}

/**
 * The walk of a canonical field (declared `indexed` by the list: an index of its table starts with
 * the field's column after the list's fixed conditions), for a page whose filter terms or
 * conditions are checked row by row: property terms, and conditions with a probe (a plant, tags).
 * Without it SQLite reads every entity of the plant, or every value of the property, and sorts
 * them: time in proportion to the table. The same two parts as the property walk:
 *
 *   SELECT * FROM (              -- 1. the window: the first `window` rows in the field's order
 *     SELECT ... FROM <list> e WHERE e.f > <bound> AND <filter and probe conditions as probes>
 *       AND <the other conditions> ORDER BY e.f DESC, <other order terms>, e.id LIMIT skip + take)
 *   UNION ALL
 *   SELECT * FROM (              -- 2. the rest: the lists plan, at or below the bound, or null
 *     <lists plan> AND (e.f IS NULL OR e.f <= <bound>) ... LIMIT skip + take)
 *   LIMIT take OFFSET skip
 *
 * `<bound>` is the field's value at the window-th row of the rows the conditions without a probe
 * keep (status, owner, `is_latest = 1`: columns of the indexes this walks), read from the index in
 * order, so part 1 reads that index from its start and stops after skip + take matches or at the
 * bound: at most `window` rows, each probed, whatever the table's size. SQLite runs part 2 only
 * when part 1 came up short (a filter that keeps less than about take / window of the rows), and
 * part 2 costs what the lists plan costs, over fewer rows. Nulls, which sort last, are in part 2.
 */
function fieldWalkSql(parts: ListQueryParts, values: SqlValues, window: number): string | undefined {
  const [first, ...rest] = parts.orders;
  if (!first || first.kind !== "field" || !first.indexed) return undefined;
  const { list } = parts;
  const descending = first.direction === "desc";
  const direction = descending ? "DESC" : "ASC";
  const value = first.column;
  const plain = parts.conditions.filter((condition) => !condition.probe).map((condition) => condition(values));
  const bound =
    `(SELECT ${descending ? "min" : "max"}(pbound.v) FROM (SELECT ${value} AS v FROM ${list.table} ${list.alias}` +
    ` ${where([`${value} IS NOT NULL`, ...plain])} ORDER BY ${value} ${direction} LIMIT ${values.value(window)}) pbound)`;

  const filter = filterCondition(parts, { kind: "probes" }, values, list.idExpression);
  const conditions = conditionsSql(parts, { kind: "probes" }, values);
  const order = orderSql(rest, list, values);
  const windowPart = [
    `SELECT ${list.select ?? `${list.alias}.*`} FROM ${list.table} ${list.alias}`,
    ...(list.joins ?? []),
    ...order.joins,
    where([`${value} ${descending ? ">" : "<"} ${bound}`, filter, ...conditions]),
    `ORDER BY ${value} ${direction}, ${order.orderBy}`,
    "LIMIT ?2 + ?3",
  ].join(" ");
  const restPart = pageSql(parts, { kind: "lists" }, values, {
    limit: "?2 + ?3",
    extra: ([first]) => `${first} IS NULL OR ${first} ${descending ? "<=" : ">="} ${bound}`,
  });
  return `SELECT * FROM (${windowPart}) UNION ALL SELECT * FROM (${restPart}) LIMIT ?2 OFFSET ?3`;
}
