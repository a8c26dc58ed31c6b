/**
 * The corrosion analysis of a thickness channel, as API 570 (piping) and API 510 (pressure vessels)
 * define it, from the channel's live readings (voided ones never count):
 *
 * - long-term rate: (first − last) / years between them;
 * - short-term rate: (previous − last) / years between them;
 * - governing rate: the greater of the two;
 * - least-squares rate: minus the slope of the straight line fitted to every reading;
 * - remaining life: (last − minimum required thickness) / governing rate, in years;
 * - projected retirement: the last reading's date plus the remaining life;
 * - next inspection: the last reading's date plus the earlier of half the remaining life and the
 *   maximum interval (a setting of the channel, default 10 years).
 *
 * Rates are losses per year in the channel's unit (mm/year for mm): positive when the wall thins.
 * The cases where a rate or a life cannot be had are defined, never a division by zero or a negative
 * life (docs/decisions.md, "Measurements"):
 *
 * - no readings: no analysis;
 * - one reading: no rate, no remaining life; the next inspection is the maximum interval after it
 *   (due at once when it is already at or below the minimum);
 * - no measurable loss (governing rate ≤ 0: the wall kept its thickness or the readings scatter
 *   upwards): rates shown as computed, remaining life and retirement none (unbounded), next inspection
 *   the maximum interval after the last reading;
 * - the last reading at or below the minimum required thickness: remaining life 0, retirement and next
 *   inspection the last reading's date (due now);
 * - no minimum required thickness on the channel: rates only, next inspection the maximum interval;
 * - a reading above the nominal thickness (mill tolerance, a coating, a misreading): kept and counted
 *   like any other, and named in `notes`.
 *
 * Time is in years of 365.25 days. The least-squares fit runs on running sums (n, Σt, Σv, Σt², Σtv)
 * that the series keeps as readings come and go, so a new reading costs O(1) whatever the series' length.
 */
export const YEAR_MS = 365.25 * 24 * 60 * 60 * 1000;
/** The maximum interval between inspections when a channel names none (API 570's 10 years for class 1-3 piping at most). */
export const DEFAULT_MAX_INTERVAL_YEARS = 10;

export type Point = {
  ts: number;
  value: number;
};

/** Running sums for the least-squares fit; t in years since the epoch. */
export interface Sums {
  n: number;
  t: number;
  v: number;
  tt: number;
  tv: number;
}

export const EMPTY_SUMS: Sums = { n: 0, t: 0, v: 0, tt: 0, tv: 0 };

/** The sums with a point added (`sign` 1) or removed (`sign` -1). */
export function addToSums(sums: Sums, ts: number, value: number, sign: 1 | -1): Sums {
  const t = ts / YEAR_MS;
  return { n: sums.n + sign, t: sums.t + sign * t, v: sums.v + sign * value, tt: sums.tt + sign * t * t, tv: sums.tv + sign * t * value };
}

export type AnalysisStatus = "oneReading" | "noMeasurableLoss" | "corroding" | "belowMinimum" | "noMinimumThickness";

export interface ThicknessAnalysis {
  method: "API 570/510";
  status: AnalysisStatus;
  readingCount: number;
  first: { timestamp: number; value: number };
  previous: { timestamp: number; value: number } | null;
  last: { timestamp: number; value: number };
  /** Loss per year in the channel's unit; null without two readings. */
  longTermRate: number | null;
  shortTermRate: number | null;
  governingRate: number | null;
  governingBasis: "longTerm" | "shortTerm" | null;
  leastSquaresRate: number | null;
  rateUnit: string;
  nominalThickness: number | null;
  minimumThickness: number | null;
  /** Years from the last reading until the minimum required thickness; null when unbounded or unknown; never negative. */
  remainingLifeYears: number | null;
  retirementDate: string | null;
  nextInspectionDate: string;
  maxIntervalYears: number;
  notes: string[];
}

export interface AnalysisSettings {
  unit: string;
  nominalThickness: number | null;
  minimumThickness: number | null;
  maxIntervalYears: number | null;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const iso = (ms: number) => new Date(Math.round(ms)).toISOString();

/**
 * The analysis from the first, previous and last live readings, the running sums and whether any
 * reading is above nominal; null without readings.
 */
export function analyseThickness(
  points: { first: Point; previous: Point | null; last: Point } | null,
  sums: Sums,
  settings: AnalysisSettings,
  aboveNominal: number,
): ThicknessAnalysis | null {
  if (!points || sums.n < 1) return null;
  const { first, previous, last } = points;
  const maxInterval = settings.maxIntervalYears ?? DEFAULT_MAX_INTERVAL_YEARS;
  const notes: string[] = [];
  const rate = (from: Point, to: Point) => (from.value - to.value) / ((to.ts - from.ts) / YEAR_MS);
  const longTerm = previous && last.ts > first.ts ? rate(first, last) : null;
  const shortTerm = previous && last.ts > previous.ts ? rate(previous, last) : null;
  let governing: number | null = null;
  let basis: ThicknessAnalysis["governingBasis"] = null;
  if (longTerm !== null && shortTerm !== null) {
    governing = Math.max(longTerm, shortTerm);
    basis = shortTerm > longTerm ? "shortTerm" : "longTerm";
  }
  let leastSquares: number | null = null;
  const denominator = sums.n * sums.tt - sums.t * sums.t;
  // Two or more readings at distinct times give a positive denominator; rounding can leave a tiny one.
  if (sums.n >= 2 && denominator > 1e-12 * Math.max(1, sums.n * sums.tt))
    leastSquares = -(sums.n * sums.tv - sums.t * sums.v) / denominator;

  const tmin = settings.minimumThickness;
  let status: AnalysisStatus;
  let remaining: number | null = null;
  let retirement: number | null = null;
  let next: number;
  const maxIntervalMs = maxInterval * YEAR_MS;
  if (tmin !== null && last.value <= tmin) {
    status = "belowMinimum";
    remaining = 0;
    retirement = last.ts;
    next = last.ts;
    notes.push(
      `The last reading (${last.value} ${settings.unit}) is at or below the minimum required thickness (${tmin} ${settings.unit}).`,
    );
  } else if (governing === null) {
    status = "oneReading";
    next = last.ts + maxIntervalMs;
    notes.push("One reading: no rate yet; the next inspection is the maximum interval after it.");
  } else if (governing <= 0) {
    status = "noMeasurableLoss";
    next = last.ts + maxIntervalMs;
    notes.push(
      "No measurable loss (governing rate ≤ 0): remaining life unbounded; the next inspection is the maximum interval after " +
        "the last reading.",
    );
  } else if (tmin === null) {
    status = "noMinimumThickness";
    next = last.ts + maxIntervalMs;
    notes.push(
      "The channel has no minimum required thickness: no remaining life; the next inspection is the maximum interval " +
        "after the last reading.",
    );
  } else {
    status = "corroding";
    remaining = (last.value - tmin) / governing;
    retirement = last.ts + remaining * YEAR_MS;
    next = last.ts + Math.min(remaining / 2, maxInterval) * YEAR_MS;
  }
  if (aboveNominal > 0 && settings.nominalThickness !== null)
    notes.push(`${aboveNominal} reading(s) above the nominal thickness (${settings.nominalThickness} ${settings.unit}): kept and counted.`);
  return {
    method: "API 570/510",
    status,
    readingCount: sums.n,
    first: { timestamp: first.ts, value: first.value },
    previous: previous ? { timestamp: previous.ts, value: previous.value } : null,
    last: { timestamp: last.ts, value: last.value },
    longTermRate: longTerm === null ? null : round(longTerm),
    shortTermRate: shortTerm === null ? null : round(shortTerm),
    governingRate: governing === null ? null : round(governing),
    governingBasis: basis,
    leastSquaresRate: leastSquares === null ? null : round(leastSquares),
    rateUnit: `${settings.unit}/year`,
    nominalThickness: settings.nominalThickness,
    minimumThickness: tmin,
    remainingLifeYears: remaining === null ? null : round(remaining),
    retirementDate: retirement === null ? null : iso(retirement),
    nextInspectionDate: iso(next),
    maxIntervalYears: maxInterval,
    notes,
  };
}
