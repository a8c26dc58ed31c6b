/**
 * Collects every value a statement compares against into ONE JSON array that is bound as `?1`.
 * SQL text refers to element i as `json_extract(?1, '$[i]')` and to a list as a `json_each`
 * subquery, so a statement uses a fixed number of bound parameters however large the filter is
 * (D1 allows 100 per statement), and no client value is ever spliced into SQL text.
 *
 * json_extract over a bound parameter is deterministic and does not reference any table, so SQLite
 * evaluates it once and can use it as an index key (see the EXPLAIN QUERY PLAN test).
 */
export type SqlScalar = string | number | boolean | null;

export class SqlValues {
  private readonly items: unknown[] = [];
  private readonly positions = new Map<string, number>();

  /** SQL for one value. Equal values share one slot, which keeps the JSON small. */
  value(value: SqlScalar): string {
    return `json_extract(?1, '$[${this.slot(value)}]')`;
  }

  /** SQL for a list of values, usable after `IN`: `(SELECT value FROM json_each(...))`. */
  list(values: readonly SqlScalar[]): string {
    return `(SELECT value FROM json_each(?1, '$[${this.slot(values)}]'))`;
  }

  /**
   * `expression = value` for one value, `expression IN (list)` for several (or none: matches
   * nothing). The same rows either way, but SQLite treats an IN over a subquery as a set of unknown
   * size: even with one value it cannot use an index (column, order...) to deliver rows in the
   * list's order, and sorts instead. An equality reads such an index in order and stops at the page.
   */
  oneOf(expression: string, values: readonly SqlScalar[]): string {
    return values.length === 1 ? `${expression} = ${this.value(values[0] ?? null)}` : `${expression} IN ${this.list(values)}`;
  }

  /** The JSON text to bind as `?1`. */
  toJson(): string {
    return JSON.stringify(this.items);
  }

  get size(): number {
    return this.items.length;
  }

  private slot(value: SqlScalar | readonly SqlScalar[]): number {
    const key = JSON.stringify(value);
    let position = this.positions.get(key);
    if (position === undefined) {
      position = this.items.length;
      this.items.push(value);
      this.positions.set(key, position);
    }
    return position;
  }
}

/**
 * A list-specific condition: it receives the statement's values and returns a SQL boolean
 * expression over the list's columns. Values must go through `values.value()`/`values.list()`.
 *
 * A condition that is a set of ids (`e.id IN (SELECT entity_id FROM ...)`) may carry a `probe`: the
 * same rows as a per-entity test (`EXISTS (... entity_id = e.id ...)`, one index lookup). SQLite
 * reads the set form whole (every entity of a plant, every tagged entity) before it can sort; a
 * page that walks an order index (page-sql.ts, walkSql) checks each candidate with the probe and
 * stops at the page. Give a probe to conditions that usually match many rows; a selective set
 * (one equipment, one work item) is cheaper read whole.
 */
export interface Condition {
  (values: SqlValues): string;
  /** The same condition as a test of the row at hand (correlated with the list's alias). */
  probe?: ((values: SqlValues) => string) | undefined;
}

/** A set condition with its per-entity probe (see Condition). */
export function withProbe(list: (values: SqlValues) => string, probe: (values: SqlValues) => string): Condition {
  return Object.assign((values: SqlValues) => list(values), { probe });
}

/**
 * `column IN (list)`, e.g. `inList("e.status", statuses)` for a `statuses` query parameter
 * (`column = value` when the list has one value, see SqlValues.oneOf). An empty list matches
 * nothing; callers leave the condition out when the parameter is absent.
 */
export function inList(column: string, list: readonly SqlScalar[]): Condition {
  return (values) => values.oneOf(column, list);
}

/**
 * `column IN (items)` for a comma-separated query parameter such as `statuses`, as a list to spread
 * into the extra conditions: empty when the parameter is absent or blank (no restriction).
 *
 * @example compileListQuery(list, query, catalog, [...csvInList("e.status", query.statuses)])
 */
export function csvInList(column: string, raw: string | readonly string[] | undefined): Condition[] {
  const items = splitCsv(raw);
  return items.length === 0 ? [] : [inList(column, items)];
}

/** `column = value`. */
export function equals(column: string, value: SqlScalar): Condition {
  return (values) => `${column} = ${values.value(value)}`;
}

/**
 * Joins boolean SQL expressions with AND or OR as a balanced tree, `((a OR b) OR (c OR d))`.
 * SQLite parses a flat chain as a left-deep tree one level per operator, and D1 limits expression
 * depth to 100, so a flat chain of 100 OR'ed terms fails; the balanced tree is log2(n) deep.
 */
export function joinBalanced(parts: readonly string[], operator: "AND" | "OR"): string {
  if (parts.length === 0) return operator === "AND" ? "1" : "0";
  if (parts.length === 1) return `(${parts[0]})`;
  const middle = Math.ceil(parts.length / 2);
  return `(${joinBalanced(parts.slice(0, middle), operator)} ${operator} ${joinBalanced(parts.slice(middle), operator)})`;
}

/** Splits a comma-separated query parameter into its trimmed, non-empty items. */
export function splitCsv(raw: string | readonly string[] | undefined): string[] {
  if (raw === undefined) return [];
  const joined = typeof raw === "string" ? raw : raw.join(",");
  return joined
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}
