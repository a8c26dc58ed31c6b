/**
 * The plain list parameters: ids, excludeIds, searchText, skip and take, and the SQL conditions
 * they become.
 */
import type { ListDefinition } from "./list";
import { queryError, quote, type QueryField } from "./problems";
import { inList, joinBalanced, splitCsv, type Condition } from "./sql-values";

export const DEFAULT_TAKE = 100;
export const MAX_TAKE = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Splits a comma-separated id list (any length: the ids travel in one JSON parameter). For a list
 * with UUID ids each item must be a UUID and is lower-cased, the form the API stores. An absent or
 * empty parameter gives undefined: no restriction.
 */
export function parseIdList(
  list: Pick<ListDefinition, "idFormat">,
  raw: string | readonly string[] | undefined,
  field: Extract<QueryField, "query.ids" | "query.excludeIds">,
): string[] | undefined {
  const items = splitCsv(raw);
  if (items.length === 0) return undefined;
  if ((list.idFormat ?? "uuid") === "text") return items;
  return items.map((item, index) => {
    if (!UUID.test(item)) throw queryError(field, "format", `Item ${index + 1} of ${field.slice(6)}, ${quote(item)}, is not a UUID.`);
    return item.toLowerCase();
  });
}

/**
 * A comma-separated UUID list of any filter parameter (e.g. `equipmentIds`), lower-cased; an item
 * that is not a UUID is an InvalidQuery naming the parameter. Empty or absent: an empty list.
 */
export function parseUuidList(raw: string | readonly string[] | undefined, field: `query.${string}`): string[] {
  return splitCsv(raw).map((item, index) => {
    if (!UUID.test(item)) throw queryError(field, "format", `Item ${index + 1} of ${field.slice(6)}, ${quote(item)}, is not a UUID.`);
    return item.toLowerCase();
  });
}

/** Parses skip (default 0) and take (default {@link DEFAULT_TAKE}, at most {@link MAX_TAKE}). */
export function parsePaging(skip: number | string | undefined, take: number | string | undefined): { skip: number; take: number } {
  return {
    skip: wholeNumber(skip, "query.skip", 0, Number.MAX_SAFE_INTEGER),
    take: wholeNumber(take, "query.take", DEFAULT_TAKE, MAX_TAKE),
  };
}

function wholeNumber(raw: number | string | undefined, field: "query.skip" | "query.take", fallback: number, max: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = typeof raw === "number" ? raw : /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  const name = field.slice(6);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw queryError(field, "format", `${name} must be a whole number of 0 or more, not ${quote(String(raw))}.`);
  }
  if (value > max) throw queryError(field, "limit", `${name} may be at most ${max}, not ${value}.`);
  return value;
}

/** Conditions for ids (keep only these) and excludeIds (drop these). */
export function idConditions(list: ListDefinition, ids: string[] | undefined, excludeIds: string[] | undefined): Condition[] {
  const conditions: Condition[] = [];
  if (ids) conditions.push((v) => `${list.idExpression} IN ${v.list(ids)}`);
  if (excludeIds) conditions.push((v) => `${list.idExpression} NOT IN ${v.list(excludeIds)}`);
  return conditions;
}

/**
 * searchText: a case-insensitive substring match in any of the list's search columns. It uses
 * instr() rather than LIKE because D1 caps LIKE patterns at 50 bytes and LIKE would need its
 * wildcards escaped. SQLite's lower() folds ASCII letters only, so `É` and `é` differ. Leading and
 * trailing whitespace is ignored; a blank text adds no condition.
 */
export function searchCondition(list: ListDefinition, searchText: string | undefined): Condition | undefined {
  const text = searchText?.trim();
  if (!text || list.searchColumns.length === 0) return undefined;
  return (v) => {
    const needle = `lower(${v.value(text)})`;
    return joinBalanced(
      list.searchColumns.map((column) => `instr(lower(${column}), ${needle}) > 0`),
      "OR",
    );
  };
}

/**
 * A comma-separated filter over a closed set of values (statuses, kinds, types): every value must be
 * one of `allowed` (400 naming the parameter otherwise) and the condition is `column IN (...)`.
 * `what` names the set in the message (`is not a job status (...)`); without it the message lists
 * the values (`is not one of ...`).
 */
export function enumCondition(
  raw: string | undefined,
  allowed: readonly string[],
  field: `query.${string}`,
  column: string,
  what?: string,
): Condition[] {
  const values = splitCsv(raw);
  const name = field.slice("query.".length);
  for (const value of values) {
    if (!allowed.includes(value)) {
      throw queryError(
        field,
        "enum",
        `${name}: '${value}' is not ${what ? `${what} (${allowed.join(", ")})` : `one of ${allowed.join(", ")}`}.`,
      );
    }
  }
  return values.length > 0 ? [inList(column, values)] : [];
}
