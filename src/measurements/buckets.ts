/**
 * Aggregation by a granularity in a time zone: the series' rollups (UTC hours and days) or raw
 * groups are merged into local minutes, hours, days, ISO weeks (from Monday) or months. A bucket
 * starts at the local time's start (its `start` the UTC instant, its `label` the local one).
 */
export const GRANULARITIES = ["minute", "hour", "day", "week", "month"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A group of readings: count, sum, min, max, first and last (with their timestamps). */
export type Bucket = {
  start: number;
  n: number;
  sum: number;
  min: number;
  max: number;
  first_ts: number;
  first: number;
  last_ts: number;
  last: number;
};

export interface Aggregate {
  /** The UTC instant the local bucket starts at. */
  start: string;
  /** The local bucket: `2026-03-29`, `2026-03-29T14:00`, `2026-W13`, `2026-03`. */
  label: string;
  count: number;
  min: number;
  max: number;
  avg: number;
  first: number;
  last: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether `timeZone` is an IANA zone the runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** A cached formatter of the wall-clock parts (h23) of instants in `timeZone`. */
export function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The zone's offset from UTC at `t`, in ms (local = t + offset). */
export function zoneOffset(timeZone: string, t: number): number {
  if (timeZone === "UTC") return 0;
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(t))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return Math.round((local - Math.floor(t / 1000) * 1000) / MINUTE) * MINUTE;
}

/** Offsets per UTC day, computed once a day (and per hour only on days the offset changes). */
class Offsets {
  private readonly days = new Map<number, [number, number]>();
  constructor(private readonly timeZone: string) {}
  at(t: number): number {
    if (this.timeZone === "UTC") return 0;
    const day = Math.floor(t / DAY) * DAY;
    let pair = this.days.get(day);
    if (!pair) this.days.set(day, (pair = [zoneOffset(this.timeZone, day), zoneOffset(this.timeZone, day + DAY)]));
    return pair[0] === pair[1] ? pair[0] : zoneOffset(this.timeZone, t);
  }
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** The local bucket of a local time (ms, as if UTC): its start (local ms) and label. */
function localBucket(local: number, granularity: Granularity): { start: number; label: string } {
  const d = new Date(local);
  const ymd = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  switch (granularity) {
    case "minute":
    case "hour": {
      const size = granularity === "minute" ? MINUTE : HOUR;
      const start = Math.floor(local / size) * size;
      const s = new Date(start);
      return { start, label: `${ymd}T${pad(s.getUTCHours())}:${pad(s.getUTCMinutes())}` };
    }
    case "day":
      return { start: Math.floor(local / DAY) * DAY, label: ymd };
    case "week": {
      const dayIndex = Math.floor(local / DAY);
      const monday = dayIndex - ((((dayIndex + 3) % 7) + 7) % 7);
      const thursday = new Date((monday + 3) * DAY);
      const yearStart = Date.UTC(thursday.getUTCFullYear(), 0, 1);
      const week = Math.floor((thursday.getTime() - yearStart) / DAY / 7) + 1;
      return { start: monday * DAY, label: `${thursday.getUTCFullYear()}-W${pad(week)}` };
    }
    case "month":
      return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), label: `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}` };
  }
}

/** Merges ordered buckets (UTC-aligned, no wider than the granularity's local buckets) into local ones. */
export function aggregateBuckets(rows: readonly Bucket[], granularity: Granularity, timeZone: string): Aggregate[] {
  const offsets = new Offsets(timeZone);
  const out: (Bucket & { label: string; localStart: number })[] = [];
  for (const row of rows) {
    const { start, label } = localBucket(row.start + offsets.at(row.start), granularity);
    const current = out[out.length - 1];
    if (current && current.localStart === start) {
      current.n += row.n;
      current.sum += row.sum;
      current.min = Math.min(current.min, row.min);
      current.max = Math.max(current.max, row.max);
      if (row.first_ts < current.first_ts) [current.first_ts, current.first] = [row.first_ts, row.first];
      if (row.last_ts > current.last_ts) [current.last_ts, current.last] = [row.last_ts, row.last];
    } else out.push({ ...row, label, localStart: start });
  }
  return out.map((b) => {
    // The local start as a UTC instant: its offset is the one in force then (one step settles it).
    const guess = b.localStart - offsets.at(b.localStart);
    return {
      start: new Date(b.localStart - offsets.at(guess)).toISOString(),
      label: b.label,
      count: b.n,
      min: b.min,
      max: b.max,
      avg: b.sum / b.n,
      first: b.first,
      last: b.last,
    };
  });
}
