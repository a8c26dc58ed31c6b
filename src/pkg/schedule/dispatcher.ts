/**
 * The minute dispatcher: one Cron Trigger, every area's schedules. An area that runs things on a
 * schedule registers one {@link ScheduleKind} (in src/handlers.ts) and keeps one row per schedule in the
 * shared `schedules` table, written with {@link scheduleStatement} in the same `db.batch()` as its own
 * row. Each tick claims the rows whose `next_run_at` has come (an index range scan, never a scan of
 * every schedule), hands them to their kind, and moves each to its next run.
 *
 * Exactly once, from at-least-once parts: Cron Triggers may fire twice, and ticks may overlap. A tick
 * claims rows with one UPDATE ... RETURNING (SQLite serialises it, so two ticks get disjoint rows) and a
 * lease; a tick that dies mid-way leaves its lease to expire and the next tick runs those occurrences
 * again with the same run key, which the kind stores under a unique constraint with whatever the run
 * creates. So a run key is started once however often it is dispatched.
 *
 * Catch-up: occurrences missed while the service was down are run once (the earliest missed occurrence
 * is the one dispatched), then the schedule moves to its first occurrence after now.
 */
import { platform } from "../../platform/services";
import type { Database } from "../../db/statements";
import type { Bindings } from "../../env";
import { errorFields, type Logger } from "../logger";
import { nextRunAfter, type ScheduleRule } from "./rule";

export interface DueRun {
  kind: string;
  ownerId: string;
  /** The occurrence being run, ISO 8601 UTC. */
  dueAt: string;
  /**
   * `{kind}:{ownerId}:{dueAt}`, unique per occurrence. Store it under a unique constraint with what
   * the run creates (a job, a monitor job, a synchronisation), so a run dispatched twice creates one.
   */
  runKey: string;
}

export interface ScheduleKind {
  /** Stable name stored in `schedules.kind`, e.g. `job-config`, `monitor`, `search-index`. */
  readonly kind: string;
  /** Schedules that always exist for this kind (e.g. a daily synchronisation); the dispatcher creates them. */
  readonly fixed?: readonly { ownerId: string; rule: ScheduleRule }[];
  /**
   * Starts the due runs. Resolves with the run keys that could not be started, which are retried on
   * the next tick (up to {@link MAX_ATTEMPTS} times, then skipped with the error recorded); throwing
   * fails them all.
   */
  start(env: Bindings, runs: readonly DueRun[], log: Logger): Promise<readonly string[] | void>;
}

/** Failed starts of one occurrence before it is skipped for the next one. */
export const MAX_ATTEMPTS = 5;
/** A claim older than this is taken over by a later tick (the claiming tick is presumed dead). */
export const LEASE_MS = 5 * 60 * 1000;
/** Rows claimed per round; a tick goes on claiming until nothing is due or {@link DispatchOptions.maxRuns}. */
const CLAIM_BATCH = 500;

export function runKeyOf(kind: string, ownerId: string, dueAt: string): string {
  return `${kind}:${ownerId}:${dueAt}`;
}

/**
 * The write that keeps an area's schedule in step with its row: creates or replaces the schedule of
 * (kind, ownerId), or removes it when `rule` is null. Put it in the same batch as the area's write.
 * An unchanged rule keeps its pending occurrence, so saving an object does not skip a run that is due.
 * The caller validates the rule first ({@link scheduleRuleProblem}).
 */
export function scheduleStatement(db: Database, kind: string, ownerId: string, rule: ScheduleRule | null, now: Date): D1PreparedStatement {
  if (rule === null) return db.prepare("DELETE FROM schedules WHERE kind = ?1 AND owner_id = ?2").bind(kind, ownerId);
  const next = nextRunAfter(rule, now)?.toISOString() ?? null;
  return db
    .prepare(
      `INSERT INTO schedules (kind, owner_id, rule, next_run_at, attempts, updated_at) VALUES (?1, ?2, ?3, ?4, 0, ?5)
       ON CONFLICT (kind, owner_id) DO UPDATE SET
         next_run_at = CASE WHEN schedules.rule = excluded.rule THEN schedules.next_run_at ELSE excluded.next_run_at END,
         lease_token = CASE WHEN schedules.rule = excluded.rule THEN schedules.lease_token ELSE NULL END,
         lease_until = CASE WHEN schedules.rule = excluded.rule THEN schedules.lease_until ELSE NULL END,
         attempts = CASE WHEN schedules.rule = excluded.rule THEN schedules.attempts ELSE 0 END,
         rule = excluded.rule, updated_at = excluded.updated_at`,
    )
    .bind(kind, ownerId, JSON.stringify(canonicalRule(rule)), next, now.toISOString());
}

/** The stored form: fixed key order and no absent parts, so equal rules compare equal as text. */
function canonicalRule(rule: ScheduleRule): ScheduleRule {
  return { cron: rule.cron.trim().replace(/\s+/g, " "), timeZone: rule.timeZone ?? null, startAt: rule.startAt ?? null };
}

export interface ScheduleState {
  kind: string;
  ownerId: string;
  rule: ScheduleRule;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastRunKey: string | null;
  lastError: string | null;
}

interface ScheduleRow {
  kind: string;
  owner_id: string;
  rule: string;
  next_run_at: string | null;
  attempts: number;
  last_run_at: string | null;
  last_run_key: string | null;
  last_error: string | null;
}

/** A schedule as an area shows it (next run, last run and its outcome), or null when it has none. */
export async function readSchedule(db: Database, kind: string, ownerId: string): Promise<ScheduleState | null> {
  const row = await db.prepare("SELECT * FROM schedules WHERE kind = ?1 AND owner_id = ?2").bind(kind, ownerId).first<ScheduleRow>();
  if (!row) return null;
  return {
    kind: row.kind,
    ownerId: row.owner_id,
    rule: JSON.parse(row.rule) as ScheduleRule,
    nextRunAt: row.next_run_at,
    lastRunAt: row.last_run_at,
    lastRunKey: row.last_run_key,
    lastError: row.last_error,
  };
}

export interface DispatchOptions {
  /** Stop after this many claimed runs in one tick (the rest stay due for the next tick). */
  maxRuns?: number;
  /** Identifies this tick's claims; random by default. */
  leaseToken?: string;
}

export interface DispatchReport {
  claimed: number;
  started: number;
  failed: number;
}

/**
 * One tick: claims every due schedule (up to `maxRuns`), starts them through their kinds and moves
 * each to its next occurrence. Safe to run twice for the same minute and concurrently with itself.
 */
export async function dispatchDueRuns(
  env: Bindings,
  now: Date,
  kinds: readonly ScheduleKind[],
  log: Logger,
  options: DispatchOptions = {},
): Promise<DispatchReport> {
  const report: DispatchReport = { claimed: 0, started: 0, failed: 0 };
  const byKind = new Map(kinds.map((k) => [k.kind, k]));
  await seedFixedSchedules(env.DB, kinds, now);
  const leaseToken = options.leaseToken ?? platform().ids.uuid();
  const maxRuns = options.maxRuns ?? 5_000;
  const nowIso = now.toISOString();

  while (report.claimed < maxRuns) {
    const limit = Math.min(CLAIM_BATCH, maxRuns - report.claimed);
    const { results: claimed } = await env.DB.prepare(
      `UPDATE schedules SET lease_token = ?1, lease_until = ?2
       WHERE rowid IN (
         SELECT rowid FROM schedules
         WHERE next_run_at <= ?3 AND (lease_until IS NULL OR lease_until < ?3)
         ORDER BY next_run_at LIMIT ?4)
       RETURNING kind, owner_id, rule, next_run_at, attempts`,
    )
      .bind(leaseToken, new Date(now.getTime() + LEASE_MS).toISOString(), nowIso, limit)
      .all<ScheduleRow>();
    if (claimed.length === 0) break;
    report.claimed += claimed.length;

    const groups = new Map<string, ScheduleRow[]>();
    for (const row of claimed) groups.set(row.kind, [...(groups.get(row.kind) ?? []), row]);

    const finish: D1PreparedStatement[] = [];
    for (const [kindName, rows] of groups) {
      const runs = rows.map((row) => ({
        kind: row.kind,
        ownerId: row.owner_id,
        dueAt: row.next_run_at!,
        runKey: runKeyOf(row.kind, row.owner_id, row.next_run_at!),
      }));
      const failures = new Map<string, string>();
      const kind = byKind.get(kindName);
      if (!kind) {
        for (const run of runs) failures.set(run.runKey, `no schedule kind '${kindName}' is registered`);
      } else {
        try {
          const failedKeys = (await kind.start(env, runs, log.with({ scheduleKind: kindName }))) ?? [];
          for (const key of failedKeys) failures.set(key, "the run could not be started");
        } catch (error) {
          log.error("scheduled runs failed to start", { scheduleKind: kindName, runs: runs.length, ...errorFields(error) });
          const message = error instanceof Error ? error.message : String(error);
          for (const run of runs) failures.set(run.runKey, message);
        }
      }
      rows.forEach((row, i) => finish.push(finishStatement(env.DB, row, runs[i]!, failures.get(runs[i]!.runKey) ?? null, now, leaseToken)));
      report.failed += failures.size;
      report.started += runs.length - failures.size;
    }
    await env.DB.batch(finish);
    if (claimed.length < limit) break;
  }
  if (report.claimed > 0) log.info("schedules dispatched", { ...report });
  return report;
}

/** Moves a claimed schedule on: to its next occurrence after a start, or back to due after a failed one. */
function finishStatement(
  db: Database,
  row: ScheduleRow,
  run: DueRun,
  error: string | null,
  now: Date,
  leaseToken: string,
): D1PreparedStatement {
  const giveUp = error !== null && row.attempts + 1 >= MAX_ATTEMPTS;
  if (error !== null && !giveUp) {
    return db
      .prepare(
        "UPDATE schedules SET lease_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = ?1 WHERE " +
          "kind = ?2 AND owner_id = ?3 AND lease_token = ?4",
      )
      .bind(error, row.kind, row.owner_id, leaseToken);
  }
  // Catch-up: the next occurrence is the first after now, not after the (possibly old) occurrence just run.
  const rule = JSON.parse(row.rule) as ScheduleRule;
  const after = new Date(Math.max(now.getTime(), Date.parse(run.dueAt)));
  const next = nextRunAfter(rule, after)?.toISOString() ?? null;
  return db
    .prepare(
      `UPDATE schedules SET next_run_at = ?1, lease_token = NULL, lease_until = NULL, attempts = 0,
         last_run_at = ?2, last_run_key = ?3, last_error = ?4
       WHERE kind = ?5 AND owner_id = ?6 AND lease_token = ?7`,
    )
    .bind(
      next,
      now.toISOString(),
      run.runKey,
      error ? `skipped after ${MAX_ATTEMPTS} failed starts: ${error}` : null,
      row.kind,
      row.owner_id,
      leaseToken,
    );
}

async function seedFixedSchedules(db: Database, kinds: readonly ScheduleKind[], now: Date): Promise<void> {
  const fixed = kinds.flatMap((k) => (k.fixed ?? []).map((f) => scheduleStatement(db, k.kind, f.ownerId, f.rule, now)));
  // An unchanged fixed schedule keeps its pending occurrence and lease; a changed one takes the new rule.
  if (fixed.length > 0) await db.batch(fixed);
}
