/**
 * Dates in XLSX cells (issue 37): Excel stores a date as a number (days since its epoch, the time as the
 * fraction) and says it is a date only by the cell's number format (`s`, an index into styles.xml's
 * cellXfs, whose numFmtId is a built-in date format or a custom one with date or time codes). An
 * import reads such a cell as the ISO 8601 text a single request takes: `2026-11-28` for a whole day
 * shown without a time, `2026-11-28T10:30:00Z` otherwise. Excel's dates carry no time zone: they are
 * read as UTC (docs/decisions.md, "Spreadsheet imports").
 */

/** The built-in number formats that show a date or a time (ECMA-376 Part 1, 18.8.30). */
const BUILT_IN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);
/** Built-in formats that show a time of day (the rest of BUILT_IN_DATE_FORMATS show only a date). */
const BUILT_IN_TIME_FORMATS = new Set([18, 19, 20, 21, 22, 45, 46, 47]);

export type DateFormat = "date" | "dateTime";

/**
 * What a custom format code shows: a date, a date and time, or neither (a number). Quoted text,
 * escaped characters and bracketed parts (colours, conditions; elapsed times [h] are durations, not
 * dates) are not codes.
 */
export function customFormatKind(code: string): DateFormat | null {
  const bare = code
    .split(";")[0]!
    .replace(/"[^"]*"/g, "")
    .replace(/\\./g, "")
    .replace(/\[[^\]]*\]/g, "")
    .toLowerCase();
  const hasTime = /[hs]/.test(bare);
  // `m` is minutes beside an hour or seconds, else a month.
  const hasDate = /[yd]/.test(bare) || (!hasTime && bare.includes("m"));
  if (hasDate) return hasTime ? "dateTime" : "date";
  return hasTime ? "dateTime" : null;
}

/** The kind of a built-in format, or null when it is no date. */
export function builtInFormatKind(id: number): DateFormat | null {
  if (!BUILT_IN_DATE_FORMATS.has(id)) return null;
  return BUILT_IN_TIME_FORMATS.has(id) ? "dateTime" : "date";
}

const DAY_MS = 86_400_000;
/** Day 0 of the 1900 system as Excel counts from day 61 on (it counts a 29 February 1900 that never was). */
const EPOCH_1900 = Date.UTC(1899, 11, 30);
const EPOCH_1904 = Date.UTC(1904, 0, 1);

/** The last serial Excel shows as a date (9999-12-31). */
export const LAST_SERIAL = 2_958_465;

/** A serial date as milliseconds since 1970 (UTC), or null when it is no date Excel shows (negative, past 9999, not a number). */
export function serialToMs(serial: number, date1904 = false): number | null {
  if (!Number.isFinite(serial) || serial < 0 || serial > LAST_SERIAL) return null;
  // Serials 1 to 60 of the 1900 system are one day off (its phantom 29 February 1900 is day 60).
  const epoch = date1904 ? EPOCH_1904 : serial < 61 ? EPOCH_1900 + DAY_MS : EPOCH_1900;
  return epoch + Math.round(serial * DAY_MS);
}

/** A serial date as ISO 8601 text, or null when it is no date Excel shows. */
export function serialToIso(serial: number, kind: DateFormat, date1904: boolean): string | null {
  const ms = serialToMs(serial, date1904);
  if (ms === null) return null;
  // Fractions of a day rarely land on a whole millisecond: snap to the second when within a millisecond of one.
  const snapped = Math.abs(ms - Math.round(ms / 1000) * 1000) <= 1 ? Math.round(ms / 1000) * 1000 : ms;
  const iso = new Date(snapped).toISOString();
  if (kind === "date" && snapped % DAY_MS === 0) return iso.slice(0, 10);
  return snapped % 1000 === 0 ? `${iso.slice(0, 19)}Z` : iso;
}
