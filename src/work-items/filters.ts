/**
 * List filters shared by GET /WorkItems and GET /Activities: date-time ranges and day lists over a
 * date-time column stored as ISO 8601 UTC text (so every condition is a range on the column's index),
 * and a catalog of property definitions by application rule for the `properties` filter and order.
 */
import { z } from "@hono/zod-openapi";
import { parseDateValue, queryError, splitCsv, withProbe, type Condition, type SqlValues } from "../pkg/query";
import { joinBalanced } from "../pkg/query";

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

function instant(raw: string, field: `query.${string}`): { iso: string; dateOnly: boolean } {
  const epoch = parseDateValue(raw);
  if (epoch === undefined)
    throw queryError(field, "format", `${field.slice(6)}: '${raw}' is not a date-time (ISO 8601, e.g. 2026-11-22T10:00:00Z).`);
  return { iso: new Date(epoch).toISOString(), dateOnly: DAY.test(raw.trim()) };
}

/**
 * `from` (inclusive) and `to` (inclusive; a date without time means the whole of that UTC day) over
 * `column`, plus `days`: comma-separated yyyy-MM-dd, matching values on any of those UTC days.
 */
export function dateConditions(
  column: string,
  from: string | undefined,
  to: string | undefined,
  days: string | undefined,
  names: { from: string; to: string; days: string },
): Condition[] {
  const conditions: Condition[] = [];
  // Each condition is a range SQLite may read from the column's index (then it sorts the range's
  // rows into the list's order, which is not this column's), and has a probe form, `+column`, which
  // no index serves: a page that walks its order index checks each row's date instead and stops
  // at the page (query engine, walkSql). Unary + leaves the value (TEXT) and the comparison as they are.
  const ranged = (sql: (value: string, v: SqlValues) => string): Condition =>
    withProbe(
      (v) => sql(column, v),
      (v) => sql(`+${column}`, v),
    );
  if (from?.trim()) {
    const start = instant(from, `query.${names.from}`).iso;
    conditions.push(ranged((c, v) => `${c} >= ${v.value(start)}`));
  }
  if (to?.trim()) {
    const end = instant(to, `query.${names.to}`);
    if (end.dateOnly) {
      const next = new Date(Date.parse(end.iso) + DAY_MS).toISOString();
      conditions.push(ranged((c, v) => `${c} < ${v.value(next)}`));
    } else {
      conditions.push(ranged((c, v) => `${c} <= ${v.value(end.iso)}`));
    }
  }
  const dayList = splitCsv(days);
  if (dayList.length > 0) {
    const ranges = [...new Set(dayList)].map((day, i) => {
      const epoch = DAY.test(day) ? parseDateValue(day) : undefined;
      if (epoch === undefined)
        throw queryError(`query.${names.days}`, "format", `Item ${i + 1} of ${names.days}, '${day}', is not a day (yyyy-MM-dd).`);
      return [new Date(epoch).toISOString(), new Date(epoch + DAY_MS).toISOString()] as const;
    });
    conditions.push(
      ranged(
        (c, v) =>
          `(${joinBalanced(
            ranges.map(([start, end]) => `(${c} >= ${v.value(start)} AND ${c} < ${v.value(end)})`),
            "OR",
          )})`,
      ),
    );
  }
  return conditions;
}

export function dateFilterShape<F extends string, T extends string, D extends string>(
  from: F,
  to: T,
  days: D,
  what: string,
): Record<F | T | D, z.ZodOptional<z.ZodString>> {
  return {
    [from]: z
      .string()
      .optional()
      .openapi({
        description: `Only entities whose ${what} is at or after this ISO 8601 date-time (UTC without a zone).`,
        example: "2026-11-01T00:00:00Z",
      }),
    [to]: z
      .string()
      .optional()
      .openapi({
        description: `Only entities whose ${what} is at or before this date-time; a date alone includes that whole UTC day.`,
        example: "2026-11-30",
      }),
    [days]: z
      .string()
      .optional()
      .openapi({
        description: `Only entities whose ${what} falls on one of these UTC days (comma-separated yyyy-MM-dd).`,
        example: "2026-11-22,2026-11-24",
      }),
  } as Record<F | T | D, z.ZodOptional<z.ZodString>>;
}
