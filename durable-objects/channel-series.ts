import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../src/env";
import {
  addToSums,
  analyseThickness,
  EMPTY_SUMS,
  type AnalysisSettings,
  type Point,
  type Sums,
  type ThicknessAnalysis,
} from "../src/measurements/analysis";
import { aggregateBuckets, zoneOffset, type Aggregate, type Bucket, type Granularity } from "../src/measurements/buckets";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** One reading as a batch gives it (checked by the Worker: a finite value, a timestamp in range). */
export interface IncomingReading {
  /** Its index in the request, for problems. */
  index: number;
  ts: number;
  value: number;
  /** Where it came from: `activity:{activityId}:{inputTemplateId}` for an inspection's input; null otherwise. */
  source: string | null;
}

export interface SeriesSettings extends AnalysisSettings {
  thickness: boolean;
}

export interface WriteOutcome {
  ok: boolean;
  /** Entries refused: a reading at the same timestamp with another value (void it first). */
  conflicts: { index: number; ts: number; existing: number }[];
  inserted: number;
  duplicates: number;
  version: number;
  readingCount: number;
  last: Point | null;
  batch: { count: number; first: number; last: number; min: number; max: number; lastValue: number } | null;
  analysis: ThicknessAnalysis | null;
  analysisChanged: boolean;
}

export interface RawReading {
  timestamp: number;
  value: number;
  source: string | null;
  voided?: { at: number; reason: string; by: string | null };
}

class Refused extends Error {}

type RollupRow = Bucket;

/**
 * The readings of ONE channel (`idFromName(channelId)`), in this object's own SQLite, so storage grows
 * with the number of channels instead of filling one D1 database (docs/scale.md, "Readings").
 *
 * - `readings`: the live readings, keyed by their timestamp in ms (the rowid: about 20 bytes a reading),
 *   so a reading is unique per channel and timestamp; `voided`: the readings voided, with the reason.
 *   A correction voids a reading (moves it to `voided`); nothing is edited.
 * - `hours` and `days`: rollups (count, sum, min, max, first, last) per UTC hour and day, kept as
 *   readings come and go, so a year by day reads 365 rows (or 8,760 hours for a zone), never the raw ones.
 * - `meta`: the series' version (one more per write), the running sums of the least-squares fit and
 *   the count of readings above nominal, so the analysis of a new reading costs O(1).
 * - `analyses`: every analysis computed, with what caused it (its history).
 *
 * Every write runs in one transaction: a batch with a conflicting entry stores nothing.
 */
export class ChannelSeries extends DurableObject<Bindings> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    const rollup =
      "(start INTEGER PRIMARY KEY, n INTEGER NOT NULL, sum REAL NOT NULL, min REAL NOT NULL, max REAL NOT NULL, " +
      "first_ts INTEGER NOT NULL, first REAL NOT NULL, last_ts INTEGER NOT NULL, last REAL NOT NULL)";
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS readings (ts INTEGER PRIMARY KEY, value REAL NOT NULL, source TEXT);
      CREATE INDEX IF NOT EXISTS readings_source ON readings (source) WHERE source IS NOT NULL;
      CREATE TABLE IF NOT EXISTS voided (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, value REAL NOT NULL, source TEXT,
        voided_at INTEGER NOT NULL, reason TEXT NOT NULL, voided_by TEXT);
      CREATE INDEX IF NOT EXISTS voided_ts ON voided (ts);
      CREATE TABLE IF NOT EXISTS hours ${rollup};
      CREATE TABLE IF NOT EXISTS days ${rollup};
      CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS analyses (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, cause TEXT NOT NULL, analysis TEXT);
    `);
  }

  private meta<T>(key: string, fallback: T): T {
    const row = this.sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = ?", key).toArray()[0];
    return row ? (JSON.parse(row.v) as T) : fallback;
  }

  private setMeta(key: string, value: unknown): void {
    this.sql.exec("INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v", key, JSON.stringify(value));
  }

  private count(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM readings").one().n;
  }

  private lastPoints(): { first: Point; previous: Point | null; last: Point } | null {
    const first = this.sql.exec<Point>("SELECT ts, value FROM readings ORDER BY ts ASC LIMIT 1").toArray()[0];
    if (!first) return null;
    const [last, previous] = this.sql.exec<Point>("SELECT ts, value FROM readings ORDER BY ts DESC LIMIT 2").toArray();
    return { first, previous: previous ?? null, last: last! };
  }

  /** Adds a batch's readings to their hour and day rollups (merged into what is there). */
  private rollUp(points: readonly Point[]): void {
    for (const [table, size] of [
      ["hours", HOUR],
      ["days", DAY],
    ] as const) {
      const buckets = new Map<number, RollupRow>();
      for (const p of points) {
        const start = Math.floor(p.ts / size) * size;
        const b = buckets.get(start);
        if (!b)
          buckets.set(start, {
            start,
            n: 1,
            sum: p.value,
            min: p.value,
            max: p.value,
            first_ts: p.ts,
            first: p.value,
            last_ts: p.ts,
            last: p.value,
          });
        else {
          b.n++;
          b.sum += p.value;
          b.min = Math.min(b.min, p.value);
          b.max = Math.max(b.max, p.value);
          if (p.ts < b.first_ts) [b.first_ts, b.first] = [p.ts, p.value];
          if (p.ts > b.last_ts) [b.last_ts, b.last] = [p.ts, p.value];
        }
      }
      for (const b of buckets.values()) {
        // Every SET expression reads the row as it was: the CASEs compare with the old first and last.
        this.sql.exec(
          `INSERT INTO ${table} (start, n, sum, min, max, first_ts, first, last_ts, last) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (start) DO UPDATE SET n = n + excluded.n, sum = sum + excluded.sum, min = min(min, excluded.min),
             max = max(max, excluded.max),
             first = CASE WHEN excluded.first_ts < first_ts THEN excluded.first ELSE first END,
             first_ts = min(first_ts, excluded.first_ts),
             last = CASE WHEN excluded.last_ts > last_ts THEN excluded.last ELSE last END,
             last_ts = max(last_ts, excluded.last_ts)`,
          b.start,
          b.n,
          b.sum,
          b.min,
          b.max,
          b.first_ts,
          b.first,
          b.last_ts,
          b.last,
        );
      }
    }
  }

  /** Recomputes the hour of `ts` from the raw readings and its day from the hours (after a void). */
  private recomputeBuckets(ts: number): void {
    const hour = Math.floor(ts / HOUR) * HOUR;
    const day = Math.floor(ts / DAY) * DAY;
    this.sql.exec("DELETE FROM hours WHERE start = ?", hour);
    this.sql.exec(
      `INSERT INTO hours (start, n, sum, min, max, first_ts, first, last_ts, last)
       SELECT ?1, count(*), sum(value), min(value), max(value), min(ts),
         (SELECT value FROM readings WHERE ts >= ?1 AND ts < ?2 ORDER BY ts LIMIT 1), max(ts),
         (SELECT value FROM readings WHERE ts >= ?1 AND ts < ?2 ORDER BY ts DESC LIMIT 1)
       FROM readings WHERE ts >= ?1 AND ts < ?2 HAVING count(*) > 0`,
      hour,
      hour + HOUR,
    );
    this.sql.exec("DELETE FROM days WHERE start = ?", day);
    this.sql.exec(
      `INSERT INTO days (start, n, sum, min, max, first_ts, first, last_ts, last)
       SELECT ?1, sum(n), sum(sum), min(min), max(max), min(first_ts),
         (SELECT first FROM hours WHERE start >= ?1 AND start < ?2 ORDER BY start LIMIT 1), max(last_ts),
         (SELECT last FROM hours WHERE start >= ?1 AND start < ?2 ORDER BY start DESC LIMIT 1)
       FROM hours WHERE start >= ?1 AND start < ?2 HAVING count(*) > 0`,
      day,
      day + DAY,
    );
  }

  /** After a write: the version, the count, the analysis (thickness channels) and its history entry. */
  private finish(settings: SeriesSettings, cause: string, now: number, sums: Sums, aboveNominal: number) {
    const version = this.meta("version", 0) + 1;
    this.setMeta("version", version);
    this.setMeta("sums", sums);
    this.setMeta("aboveNominal", aboveNominal);
    const points = this.lastPoints();
    let analysis: ThicknessAnalysis | null = null;
    let analysisChanged = false;
    if (settings.thickness) {
      analysis = analyseThickness(points, sums, settings, aboveNominal);
      const before = this.meta<string | null>("analysis", null);
      const text = analysis === null ? null : JSON.stringify(analysis);
      analysisChanged = before !== text;
      if (analysisChanged) {
        this.setMeta("analysis", text);
        this.sql.exec("INSERT INTO analyses (at, cause, analysis) VALUES (?, ?, ?)", now, cause, text);
      }
    }
    return { version, readingCount: sums.n, last: points?.last ?? null, analysis, analysisChanged };
  }

  private isAboveNominal(settings: SeriesSettings, value: number): boolean {
    return settings.thickness && settings.nominalThickness !== null && value > settings.nominalThickness;
  }

  /**
   * Records readings (idempotent per timestamp: the same value again is a duplicate, another value a
   * conflict that refuses the whole batch). `dryRun` checks without storing (the first phase of a
   * request that spans channels).
   */
  record(readings: readonly IncomingReading[], settings: SeriesSettings, cause: string, now: number, dryRun = false): WriteOutcome {
    let outcome: WriteOutcome | undefined;
    const conflicts: WriteOutcome["conflicts"] = [];
    try {
      this.ctx.storage.transactionSync(() => {
        let sums = this.meta<Sums>("sums", EMPTY_SUMS);
        let aboveNominal = this.meta("aboveNominal", 0);
        const added: Point[] = [];
        let duplicates = 0;
        for (const r of readings) {
          const written = this.sql.exec(
            "INSERT INTO readings (ts, value, source) VALUES (?, ?, ?) ON CONFLICT (ts) DO NOTHING",
            r.ts,
            r.value,
            r.source,
          ).rowsWritten;
          if (written > 0) {
            added.push({ ts: r.ts, value: r.value });
            sums = addToSums(sums, r.ts, r.value, 1);
            if (this.isAboveNominal(settings, r.value)) aboveNominal++;
            continue;
          }
          const existing = this.sql.exec<{ value: number }>("SELECT value FROM readings WHERE ts = ?", r.ts).one().value;
          if (existing === r.value) duplicates++;
          else conflicts.push({ index: r.index, ts: r.ts, existing });
        }
        if (conflicts.length > 0 || dryRun) throw new Refused();
        if (added.length === 0) {
          outcome = { ok: true, conflicts, inserted: 0, duplicates, batch: null, analysisChanged: false, ...this.current(settings) };
          return;
        }
        this.rollUp(added);
        let min = Infinity;
        let max = -Infinity;
        let first = added[0]!;
        let last = added[0]!;
        for (const p of added) {
          min = Math.min(min, p.value);
          max = Math.max(max, p.value);
          if (p.ts < first.ts) first = p;
          if (p.ts > last.ts) last = p;
        }
        const done = this.finish(settings, cause, now, sums, aboveNominal);
        outcome = {
          ok: true,
          conflicts,
          inserted: added.length,
          duplicates,
          batch: { count: added.length, first: first.ts, last: last.ts, min, max, lastValue: last.value },
          ...done,
        };
      });
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      return {
        ok: conflicts.length === 0,
        conflicts,
        inserted: 0,
        duplicates: 0,
        batch: null,
        analysisChanged: false,
        ...this.current(settings),
      };
    }
    return outcome!;
  }

  /** What the series holds now, without writing. */
  private current(settings: SeriesSettings) {
    const analysisText = settings.thickness ? this.meta<string | null>("analysis", null) : null;
    return {
      version: this.meta("version", 0),
      readingCount: this.count(),
      last: this.lastPoints()?.last ?? null,
      analysis: analysisText === null ? null : (JSON.parse(analysisText) as ThicknessAnalysis),
    };
  }

  /**
   * Voids the live reading at `ts` (or, with `source`, the one that source gave) with a reason; null
   * when there is none. A voided reading leaves the rollups, the sums and the analysis.
   */
  void(target: { ts?: number; source?: string }, reason: string, by: string | null, settings: SeriesSettings, now: number) {
    return this.ctx.storage.transactionSync(() => {
      const row =
        target.source !== undefined
          ? this.sql
              .exec<{ ts: number; value: number; source: string | null }>(
                "SELECT ts, value, source FROM readings WHERE source = ?",
                target.source,
              )
              .toArray()[0]
          : this.sql
              .exec<{ ts: number; value: number; source: string | null }>(
                "SELECT ts, value, source FROM readings WHERE ts = ?",
                target.ts ?? 0,
              )
              .toArray()[0];
      if (!row) return null;
      this.sql.exec("DELETE FROM readings WHERE ts = ?", row.ts);
      this.sql.exec(
        "INSERT INTO voided (ts, value, source, voided_at, reason, voided_by) VALUES (?, ?, ?, ?, ?, ?)",
        row.ts,
        row.value,
        row.source,
        now,
        reason,
        by,
      );
      this.recomputeBuckets(row.ts);
      const sums = addToSums(this.meta<Sums>("sums", EMPTY_SUMS), row.ts, row.value, -1);
      const aboveNominal = this.meta("aboveNominal", 0) - (this.isAboveNominal(settings, row.value) ? 1 : 0);
      const done = this.finish(settings, `void:${reason}`, now, sums, Math.max(0, aboveNominal));
      return { voided: { timestamp: row.ts, value: row.value, source: row.source }, ...done };
    });
  }

  /** The reading a source gave (an activity's input), if it is live. */
  bySource(source: string): Point | null {
    return this.sql.exec<Point>("SELECT ts, value FROM readings WHERE source = ?", source).toArray()[0] ?? null;
  }

  /** Live readings in [from, to), oldest first, at most `limit`; with `includeVoided`, the voided ones beside them. */
  raw(from: number, to: number, limit: number, includeVoided: boolean): { readings: RawReading[]; more: boolean } {
    const rows = this.sql
      .exec<{ ts: number; value: number; source: string | null }>(
        "SELECT ts, value, source FROM readings WHERE ts >= ? AND ts < ? ORDER BY ts LIMIT ?",
        from,
        to,
        limit + 1,
      )
      .toArray();
    const more = rows.length > limit;
    const readings: RawReading[] = rows.slice(0, limit).map((r) => ({ timestamp: r.ts, value: r.value, source: r.source }));
    if (includeVoided) {
      const end = more ? readings[readings.length - 1]!.timestamp + 1 : to;
      const voided = this.sql
        .exec<{ ts: number; value: number; source: string | null; voided_at: number; reason: string; voided_by: string | null }>(
          "SELECT ts, value, source, voided_at, reason, voided_by FROM voided WHERE ts >= ? AND ts < ? ORDER BY ts, id",
          from,
          end,
        )
        .toArray();
      for (const v of voided)
        readings.push({
          timestamp: v.ts,
          value: v.value,
          source: v.source,
          voided: { at: v.voided_at, reason: v.reason, by: v.voided_by },
        });
      readings.sort((a, b) => a.timestamp - b.timestamp);
    }
    return { readings, more };
  }

  /**
   * Aggregates over [from, to) by `granularity` in `timeZone`: from the day rollups (UTC days and
   * longer), the hour rollups (hours, and days or longer in a zone a whole number of hours from UTC)
   * or the raw readings (minutes, and zones with a part-hour offset).
   */
  aggregate(
    from: number,
    to: number,
    granularity: Granularity,
    timeZone: string,
    source: "auto" | "raw",
  ): { buckets: Aggregate[]; source: string } {
    const read = (table: string) =>
      this.sql
        .exec<RollupRow>(
          `SELECT start, n, sum, min, max, first_ts, first, last_ts, last FROM ${table} WHERE start >= ? AND start < ? ORDER BY start`,
          from,
          to,
        )
        .toArray();
    const fromRaw = (size: number) =>
      this.sql
        .exec<RollupRow>(
          `SELECT (ts / ?1) * ?1 AS start, count(*) AS n, sum(value) AS sum, min(value) AS min, max(value) AS max, min(ts) AS first_ts,
             0 AS first, max(ts) AS last_ts, 0 AS last FROM readings WHERE ts >= ?2 AND ts < ?3 GROUP BY ts / ?1 ORDER BY start`,
          size,
          from,
          to,
        )
        .toArray()
        .map((b) => ({
          ...b,
          first: this.sql.exec<{ value: number }>("SELECT value FROM readings WHERE ts = ?", b.first_ts).one().value,
          last: this.sql.exec<{ value: number }>("SELECT value FROM readings WHERE ts = ?", b.last_ts).one().value,
        }));
    const zoned = timeZone !== "UTC";
    const wholeHours = !zoned || wholeHourZone(timeZone, from, to);
    let rows: Bucket[];
    let used: string;
    if (source === "raw" || granularity === "minute" || !wholeHours) {
      const size = granularity === "minute" ? 60_000 : wholeHours ? HOUR : 15 * 60_000;
      rows = fromRaw(size);
      used = "raw";
    } else if (!zoned && granularity !== "hour") {
      rows = read("days");
      used = "days";
    } else {
      rows = read("hours");
      used = "hours";
    }
    return { buckets: aggregateBuckets(rows, granularity, timeZone), source: used };
  }

  /** The analysis history, newest first. */
  analyses(limit: number): { at: number; cause: string; analysis: ThicknessAnalysis | null }[] {
    return this.sql
      .exec<{ at: number; cause: string; analysis: string | null }>(
        "SELECT at, cause, analysis FROM analyses ORDER BY id DESC LIMIT ?",
        limit,
      )
      .toArray()
      .map((r) => ({ at: r.at, cause: r.cause, analysis: r.analysis === null ? null : (JSON.parse(r.analysis) as ThicknessAnalysis) }));
  }

  /** Recomputes the analysis with new settings (a channel's nominal, minimum or interval changed). */
  reanalyse(settings: SeriesSettings, now: number) {
    return this.ctx.storage.transactionSync(() =>
      this.finish(settings, "settings", now, this.meta<Sums>("sums", EMPTY_SUMS), this.recountAboveNominal(settings)),
    );
  }

  private recountAboveNominal(settings: SeriesSettings): number {
    if (!settings.thickness || settings.nominalThickness === null) return 0;
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM readings WHERE value > ?", settings.nominalThickness).one().n;
  }

  /** Storage used, for docs/scale.md and the bench. */
  size(): { readings: number; bytes: number } {
    return { readings: this.count(), bytes: this.sql.databaseSize };
  }

  /** Drops every reading (the channel was deleted). */
  async drop(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}

/** Whether the zone is a whole number of hours from UTC over [from, to) (checked at both ends and each month between). */
function wholeHourZone(timeZone: string, from: number, to: number): boolean {
  const start = Math.max(from, -2_208_988_800_000);
  const end = Math.min(to, start + 50 * 365 * DAY);
  for (let t = start; t <= end; t += 30 * DAY) if (zoneOffset(timeZone, t) % HOUR !== 0) return false;
  return zoneOffset(timeZone, end) % HOUR === 0;
}
