/** The UTC date-time form of a work item's dueDate and an activity's dateOfActivity. */
import { invalid } from "../pkg/errors";
import { formatDateValue, parseDateValue } from "../pkg/query";

/**
 * A date-time as stored and returned: ISO 8601 UTC with milliseconds, so text order is time order
 * and the day filters are range conditions on the index. Accepts what date properties accept
 * (ISO 8601 with or without zone, read as UTC without one; the interface's slash form).
 */
export function toUtcDateTime(value: string | null | undefined, field: string): string | null {
  if (value === null || value === undefined) return null;
  const epoch = parseDateValue(value);
  if (epoch === undefined) throw invalid(field, "format", `'${value}' is not a date-time (ISO 8601, e.g. 2026-11-22T10:00:00Z).`);
  return formatDateValue(epoch);
}
