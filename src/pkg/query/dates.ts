/**
 * Date values of `date`-format properties. They are stored in property_values.value_num as epoch
 * milliseconds (UTC), so filters and orders compare numbers on an index. These parsers are shared
 * by the filter engine and by whoever writes property values, so both sides agree on what a date is.
 */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const TIME = String.raw`(?:[Tt ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?`;
const US_SLASH = new RegExp(String.raw`^(\d{1,2})/(\d{1,2})/(\d{4})${TIME}$`);
const YMD_SLASH = new RegExp(String.raw`^(\d{4})/(\d{1,2})/(\d{1,2})${TIME}$`);

interface DateParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  /** Minutes east of UTC. */
  offsetMinutes: number;
}

/**
 * Parses a date value as clients write it and returns epoch milliseconds (UTC), or undefined when
 * the text is not a valid date. Accepted forms (surrounding whitespace ignored):
 * - ISO 8601 / RFC 3339: `2024-03-15`, `2024-03-15T14:30`, `2024-03-15T14:30:00`,
 *   `2024-03-15T14:30:00.123Z`, `2024-03-15T14:30:00+02:00` (also `+0200`, `+02`, and a space for `T`).
 *   A date alone is midnight UTC; a time without a zone is UTC.
 * - The slash-separated form of the interface: `MM/dd/yyyy HH:mm[:ss[.fff]]` and
 *   `yyyy/MM/dd HH:mm[:ss[.fff]]` (always UTC); the time may be left out (midnight).
 *   Month, day and hour may have one digit.
 * Fractions below a millisecond are truncated. Impossible dates (`2023-02-29`, `13/01/2024`) and
 * times (`24:00`, `12:60`) are rejected rather than rolled over, so a typo never becomes another day.
 */
export function parseDateValue(s: string): number | undefined {
  const text = s.trim();
  const parts = matchIso(text) ?? matchSlash(text);
  return parts ? toEpoch(parts) : undefined;
}

/** Renders epoch milliseconds as an ISO 8601 UTC string (`2024-03-15T14:30:00.000Z`). */
export function formatDateValue(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

function matchIso(text: string): DateParts | undefined {
  const m = ISO_DATE.exec(text);
  if (!m) return undefined;
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    millisecond: fractionToMs(m[7]),
    offsetMinutes: parseOffset(m[8]),
  };
}

function matchSlash(text: string): DateParts | undefined {
  const us = US_SLASH.exec(text);
  if (us) return slashParts(Number(us[3]), Number(us[1]), Number(us[2]), us.slice(4));
  const ymd = YMD_SLASH.exec(text);
  if (ymd) return slashParts(Number(ymd[1]), Number(ymd[2]), Number(ymd[3]), ymd.slice(4));
  return undefined;
}

function slashParts(year: number, month: number, day: number, time: (string | undefined)[]): DateParts {
  return {
    year,
    month,
    day,
    hour: Number(time[0] ?? 0),
    minute: Number(time[1] ?? 0),
    second: Number(time[2] ?? 0),
    millisecond: fractionToMs(time[3]),
    offsetMinutes: 0,
  };
}

function fractionToMs(fraction: string | undefined): number {
  if (!fraction) return 0;
  return Number(fraction.slice(0, 3).padEnd(3, "0"));
}

function parseOffset(zone: string | undefined): number {
  if (!zone || zone === "Z" || zone === "z") return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || "0");
  if (hours > 23 || minutes > 59) return Number.NaN;
  return sign * (hours * 60 + minutes);
}

function toEpoch(p: DateParts): number | undefined {
  if (!Number.isFinite(p.offsetMinutes)) return undefined;
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.day > daysInMonth(p.year, p.month)) return undefined;
  if (p.hour > 23 || p.minute > 59 || p.second > 59) return undefined;
  // Date.UTC maps years 0-99 to 1900-1999, so set the full year explicitly.
  const date = new Date(0);
  date.setUTCFullYear(p.year, p.month - 1, p.day);
  date.setUTCHours(p.hour, p.minute, p.second, p.millisecond);
  return date.getTime() - p.offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
