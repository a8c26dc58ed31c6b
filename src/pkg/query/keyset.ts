/**
 * Keyset paging: a list read whole, page after page (an export), where each page starts after the
 * last row of the page before it, in the list's order, instead of at an offset.
 *
 * An offset counts rows again on every page, so a row deleted or inserted before it, between two
 * pages, shifts every later page by one: an unchanged row is skipped or written twice. A keyset page
 * is "the rows that sort after this row's keys" (the value of each order term, then the id), so a
 * row that is there and unchanged for the whole read is read exactly once, whatever else is written
 * meanwhile, and no page walks over the rows before it.
 *
 * The keys travel as bound parameters `?4` and on, not in the JSON of `?1` (sql-values.ts): SQLite's
 * JSON reader does not give every double back bit for bit (a value near 1e300 came back as its
 * neighbour), and a key must compare equal to the row it came from.
 */
import { queryError } from "./problems";
import type { ResolvedOrder } from "./order";
import type { SqlScalar } from "./sql-values";

/** A keyset read: the page after the row whose keys `after` holds (a previous page's `next`), or the first. */
export interface Keyset {
  after?: readonly SqlScalar[] | undefined;
}

/** The first bound parameter of the keys (`?1` values, `?2` take, `?3` skip). */
const FIRST_KEY_PARAMETER = 4;
/**
 * Order terms a keyset read accepts. Each term nests the rest of the condition two levels deeper,
 * and SQLite refuses an expression deeper than 100 (at 96 terms it did); every term and the id are
 * also a bound parameter each, of D1's 100.
 */
export const MAX_KEYSET_ORDER_TERMS = 32;

const KEY_COLUMN = "__key";

/** Refuses an order with more terms than a keyset page can bind (InvalidQuery on `query.order`). */
export function checkKeysetOrder(orders: readonly ResolvedOrder[]): void {
  if (orders.length > MAX_KEYSET_ORDER_TERMS) {
    throw queryError(
      "query.order",
      "limit",
      `A list read whole (an export) orders by at most ${MAX_KEYSET_ORDER_TERMS} terms, not ${orders.length}.`,
    );
  }
}

/** The select columns that carry a row's keys: each order term's value, then the id. */
export function keyColumns(expressions: readonly string[], idExpression: string): string {
  return [...expressions, idExpression].map((expression, i) => `${expression} AS ${KEY_COLUMN}${i}`).join(", ");
}

/** The SQL of key `i` (a bound parameter). */
export const keyParameter = (i: number) => `?${FIRST_KEY_PARAMETER + i}`;

/**
 * The rows after `after` in the order `orders` (nulls last in both directions, then id ascending):
 * for each term, a later value, or the same value and the rest after. A null key is followed only
 * by nulls (nulls sort last), and a null of the row is after every value. `from` leaves out the
 * terms before it (the caller has fixed them to their keys).
 */
export function keysetCondition(
  orders: readonly ResolvedOrder[],
  expressions: readonly string[],
  idExpression: string,
  after: readonly SqlScalar[],
  from = 0,
): string {
  if (after.length !== orders.length + 1) throw new Error(`keyset: ${after.length} keys for ${orders.length} order terms and the id`);
  let condition = `${idExpression} > ${keyParameter(orders.length)}`;
  for (let i = orders.length - 1; i >= from; i--) {
    const expression = expressions[i];
    const later = orders[i]?.direction === "desc" ? "<" : ">";
    condition =
      after[i] === null
        ? `(${expression} IS NULL AND ${condition})`
        : `(${expression} IS NULL OR ${expression} ${later} ${keyParameter(i)} OR (${expression} = ${keyParameter(i)} AND ${condition}))`;
  }
  return condition;
}

/**
 * Takes the key columns out of every row (they are not fields of the list's items) and returns the
 * last row's keys: where the next page starts.
 */
export function takeKeys(rows: readonly Record<string, unknown>[], count: number): SqlScalar[] | undefined {
  let last: SqlScalar[] | undefined;
  for (const row of rows) {
    last = [];
    for (let i = 0; i < count; i++) {
      const value = row[`${KEY_COLUMN}${i}`];
      if (value !== null && typeof value !== "string" && typeof value !== "number") throw new Error(`keyset: key ${i} is not a scalar`);
      last.push(value);
      delete row[`${KEY_COLUMN}${i}`];
    }
  }
  return last;
}
