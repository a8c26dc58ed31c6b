/**
 * When a schedule runs: a 5-field CRON expression evaluated in an IANA time zone (UTC when none is
 * named), optionally from a start date. Job configs' weekly frequency, monitors' trigger schedules and
 * search indices' trigger schedules and daily synchronisation are all rules of this one shape, computed
 * by croner (a maintained parser, DST-correct through Intl), never by a hand-written parser.
 */
import { Cron } from "croner";

export interface ScheduleRule {
  /** Five fields: minute hour day-of-month month day-of-week. */
  cron: string;
  /** IANA zone the expression is read in, e.g. `Europe/Berlin`; null or absent means UTC. */
  timeZone?: string | null;
  /** No run before this local date-time (ISO 8601 without a zone, read in `timeZone`). */
  startAt?: string | null;
}

const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

function cronFor(rule: ScheduleRule): Cron {
  return new Cron(rule.cron, {
    paused: true,
    timezone: rule.timeZone ?? "UTC",
    ...(rule.startAt ? { startAt: rule.startAt } : {}),
    // When both day-of-month and day-of-week are restricted, either matches, as in every crontab.
    legacyMode: true,
  });
}

/** Why a rule cannot be used, in words a client can show, naming the part at fault; null when it is valid. */
export function scheduleRuleProblem(rule: ScheduleRule): { part: "cron" | "timeZone" | "startAt"; message: string } | null {
  const fields = rule.cron.trim().split(/\s+/);
  if (fields.length !== 5 || rule.cron.trim().startsWith("@")) {
    return {
      part: "cron",
      message: `A CRON expression has 5 fields (minute hour day-of-month month day-of-week); '${rule.cron}' has ${fields.length}.`,
    };
  }
  if (rule.timeZone) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: rule.timeZone });
    } catch {
      return { part: "timeZone", message: `'${rule.timeZone}' is not an IANA time zone (e.g. Europe/Berlin, America/Houston).` };
    }
  }
  if (rule.startAt && !LOCAL_DATE_TIME.test(rule.startAt)) {
    return { part: "startAt", message: `'${rule.startAt}' is not an ISO 8601 date-time without a zone (e.g. 2026-01-05T06:00:00).` };
  }
  try {
    cronFor(rule);
  } catch (error) {
    return {
      part: "cron",
      message: `'${rule.cron}' is not a valid CRON expression: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  return null;
}

/** The first run strictly after `after`, or null when the rule has none (e.g. 30 February). */
export function nextRunAfter(rule: ScheduleRule, after: Date): Date | null {
  return cronFor(rule).nextRun(after);
}
