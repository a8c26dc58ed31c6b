/**
 * When a plan's next item is due (issue 36), as pure functions of the plan, where its target stands and
 * what its channel says. Calendar intervals and from-completion intervals are counted in the plan's IANA
 * time zone (a yearly inspection at 08:00 stays at 08:00 local across daylight saving changes); CRON
 * calendars are the schedule rules jobs and monitors use (src/pkg/schedule/rule.ts). The earliest
 * candidate wins.
 */
import { formatter } from "../measurements/buckets";
import { nextRunAfter } from "../pkg/schedule";
import type { ConditionRule, DueReason, Interval } from "./schema";

const DAY_MS = 86_400_000;

interface LocalParts {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall-clock time of `at` in `timeZone`. */
export function localParts(at: Date, timeZone: string): LocalParts {
  const out: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(at)) if (part.type !== "literal") out[part.type] = Number(part.value);
  return { year: out.year!, month: out.month!, day: out.day!, hour: out.hour! % 24, minute: out.minute!, second: out.second! };
}

const asUtc = (p: LocalParts) => Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);

/**
 * The instant a wall-clock time in `timeZone` names. A time skipped by a spring-forward change is moved
 * forward by the gap; an ambiguous one (fall-back) is its first instance.
 */
export function zonedToUtc(p: LocalParts, timeZone: string): Date {
  const wanted = asUtc(p);
  // Two rounds of "guess, see what local time that is, correct by the difference" settle every offset.
  let guess = wanted;
  for (let i = 0; i < 3; i++) {
    const diff = wanted - asUtc(localParts(new Date(guess), timeZone));
    if (diff === 0) break;
    guess += diff;
  }
  // Of two instants with the same wall time (fall-back), the earlier one.
  const hourEarlier = guess - 3_600_000;
  if (asUtc(localParts(new Date(hourEarlier), timeZone)) === wanted) guess = hourEarlier;
  return new Date(guess);
}

/** `YYYY-MM-DD` or `YYYY-MM-DDTHH:mm[:ss]` as wall-clock parts. */
export function parseLocal(text: string): LocalParts {
  const [date, time = "00:00"] = text.split("T");
  const [year, month, day] = date!.split("-").map(Number);
  const [hour, minute, second = 0] = time.split(":").map(Number);
  return { year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second };
}

/** Whether `text` names a real calendar date and time (not 2027-02-30). */
export function isRealLocal(text: string): boolean {
  const p = parseLocal(text);
  const d = new Date(asUtc(p));
  return (
    d.getUTCFullYear() === p.year &&
    d.getUTCMonth() === p.month - 1 &&
    d.getUTCDate() === p.day &&
    p.hour < 24 &&
    p.minute < 60 &&
    p.second < 60
  );
}

/** The wall-clock parts `times` intervals after `p` (months keep the day, clamped to the month's last). */
export function addInterval(p: LocalParts, interval: Interval, times = 1): LocalParts {
  const n = interval.count * times;
  if (interval.unit === "days" || interval.unit === "weeks") {
    const days = interval.unit === "days" ? n : n * 7;
    const d = new Date(Date.UTC(p.year, p.month - 1, p.day) + days * DAY_MS);
    return { ...p, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
  }
  const months = interval.unit === "months" ? n : n * 12;
  const index = p.year * 12 + (p.month - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return { ...p, year, month, day: Math.min(p.day, last) };
}

/** Roughly how long an interval is, for estimating how many fit in a span. */
export function intervalMs(interval: Interval): number {
  const unit = { days: 1, weeks: 7, months: 30.436875, years: 365.2425 }[interval.unit];
  return interval.count * unit * DAY_MS;
}

/** What the calendar of a plan is: its rule, zone and start. */
export interface Calendar {
  cron: string | null;
  every: Interval | null;
  timeZone: string;
  /** The local start date-time (`YYYY-MM-DDTHH:mm`). */
  start: string;
}

/** The first calendar occurrence strictly after `after` (at or after the start), or null when none comes. */
export function nextCalendarAfter(calendar: Calendar, after: Date): Date | null {
  const start = zonedToUtc(parseLocal(calendar.start), calendar.timeZone);
  if (calendar.cron) {
    const from = after.getTime() < start.getTime() ? new Date(start.getTime() - 1) : after;
    return nextRunAfter({ cron: calendar.cron, timeZone: calendar.timeZone }, from);
  }
  if (!calendar.every) return null;
  if (after.getTime() < start.getTime()) return start;
  const base = parseLocal(calendar.start);
  // Estimate the occurrence number, then step to the first one after `after`.
  let k = Math.max(0, Math.floor((after.getTime() - start.getTime()) / intervalMs(calendar.every)) - 1);
  for (;;) {
    const at = zonedToUtc(addInterval(base, calendar.every, k), calendar.timeZone);
    if (at.getTime() > after.getTime()) return at;
    k++;
  }
}

/** The last calendar occurrence at or before `until` that comes after `after` (or null: none). */
export function lastCalendarUpTo(calendar: Calendar, after: Date, until: Date): Date | null {
  let last: Date | null = null;
  let cursor = after;
  // Bounded: a plan down for a long time with a frequent calendar walks at most this many occurrences.
  for (let i = 0; i < 100_000; i++) {
    const next = nextCalendarAfter(calendar, cursor);
    if (!next || next.getTime() > until.getTime()) break;
    last = next;
    cursor = next;
  }
  return last;
}

/** A due-date candidate and its reason. */
export interface Due {
  at: Date;
  reason: DueReason;
}

/** What a target's next due date is computed from. */
export interface DueInputs {
  calendar: Calendar | null;
  fromCompletion: Interval | null;
  condition: ConditionRule | null;
  timeZone: string;
  /** The plan's start (local) in its zone: the first due date of a from-completion plan. */
  start: string;
  target: {
    calendarAfter: string | null;
    conditionAfter: string | null;
    meterBase: number | null;
    /** Something was generated and not yet completed or cancelled. */
    open: boolean;
    lastGeneratedAt: string | null;
    lastCompletedAt: string | null;
  };
  channel: { nextInspectionAt: string | null; lastValue: number | null; lastReadingAt: string | null } | null;
}

/** Each rule's next due date (those that have one). */
export function candidates(inputs: DueInputs): Due[] {
  const out: Due[] = [];
  const { target } = inputs;
  if (inputs.calendar) {
    const after = target.calendarAfter ? new Date(target.calendarAfter) : new Date(0);
    const at = nextCalendarAfter(inputs.calendar, after);
    if (at) out.push({ at, reason: "calendar" });
  }
  if (inputs.fromCompletion) {
    if (target.lastGeneratedAt === null) {
      out.push({ at: zonedToUtc(parseLocal(inputs.start), inputs.timeZone), reason: "completion" });
    } else if (!target.open && target.lastCompletedAt !== null) {
      const completed = localParts(new Date(target.lastCompletedAt), inputs.timeZone);
      out.push({ at: zonedToUtc(addInterval(completed, inputs.fromCompletion), inputs.timeZone), reason: "completion" });
    }
  }
  const channel = inputs.channel;
  if (inputs.condition && channel) {
    if (inputs.condition.kind === "nextInspection") {
      const next = channel.nextInspectionAt;
      if (next !== null && (target.conditionAfter === null || Date.parse(next) > Date.parse(target.conditionAfter)))
        out.push({ at: new Date(next), reason: "condition" });
    } else if (channel.lastValue !== null && channel.lastReadingAt !== null) {
      const base = target.meterBase ?? 0;
      if (channel.lastValue - base >= inputs.condition.every) out.push({ at: new Date(channel.lastReadingAt), reason: "condition" });
    }
  }
  return out;
}

/** The earliest candidate (the calendar first among equals), or null. */
export function earliest(list: readonly Due[]): Due | null {
  let best: Due | null = null;
  for (const due of list) if (!best || due.at.getTime() < best.at.getTime()) best = due;
  return best;
}

/** When an item due at `due` is generated: `leadTimeDays` whole days before. */
export function generateTime(due: Date, leadTimeDays: number): Date {
  return new Date(due.getTime() - leadTimeDays * DAY_MS);
}

/** The meter base after an item was generated at `value`: advanced by whole steps of `every`. */
export function advancedMeterBase(base: number, value: number, every: number): number {
  return base + Math.floor((value - base) / every) * every;
}

/**
 * The due dates coming up to `until` for a forecast: the next one as the target stands, then each one
 * after it as if every item were generated on time and completed on its due date. Conditions give
 * their one known date (a channel's next inspection), not a series.
 */
export function forecast(inputs: DueInputs, leadTimeDays: number, until: Date, limit = 500): Due[] {
  const out: Due[] = [];
  let state = { ...inputs.target };
  for (let i = 0; i < limit; i++) {
    const next = earliest(candidates({ ...inputs, target: state }));
    if (!next || next.at.getTime() > until.getTime()) break;
    out.push(next);
    const at = next.at.toISOString();
    const generatedAt = generateTime(next.at, leadTimeDays).toISOString();
    state = {
      ...state,
      // Everything due by this one's date counts as done by it (the calendar, the channel's date).
      calendarAfter: inputs.calendar
        ? (lastCalendarUpTo(inputs.calendar, new Date(state.calendarAfter ?? 0), next.at)?.toISOString() ?? state.calendarAfter)
        : null,
      conditionAfter: next.reason === "condition" || inputs.channel?.nextInspectionAt === at ? at : state.conditionAfter,
      meterBase:
        inputs.condition?.kind === "readingPasses" && inputs.channel?.lastValue != null
          ? advancedMeterBase(state.meterBase ?? 0, inputs.channel.lastValue, inputs.condition.every)
          : state.meterBase,
      open: false,
      lastGeneratedAt: generatedAt,
      lastCompletedAt: at,
    };
  }
  return out;
}
