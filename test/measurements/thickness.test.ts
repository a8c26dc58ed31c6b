/**
 * Issue 35: the thickness analysis (API 570/510) on a channel, recomputed with every reading and
 * void, checked against a worked example computed by hand, and its edge cases.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { at, createChannel } from "./support";

const DAY = 86_400_000;
const YEAR_DAYS = 365.25;

async function record(channelNumber: number, readings: [string, number][]) {
  const res = await call("/signals/bulk", {
    method: "POST",
    body: readings.map(([iso, value]) => ({ channelNumber, timestamp: at(iso), value })),
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe("thickness analysis", () => {
  it("computes the rates, remaining life, retirement and next inspection of a worked example", async () => {
    const ch = await createChannel({ nominalThickness: 12.7, minimumThickness: 8.0 });
    await record(ch.channelNumber, [
      ["2016-01-01T00:00:00Z", 12.5],
      ["2021-01-01T00:00:00Z", 11.5],
      ["2024-01-01T00:00:00Z", 10.6],
    ]);
    const { analysis } = (await call(`/Channels/${ch.id}`)).body;
    // By hand: 2016-01-01 → 2021-01-01 is 1827 days (two leap years), 2021 → 2024 is 1095 days; 2922 days = 8.0 years of 365.25 days.
    // Long-term: (12.5 − 10.6) / 8 = 0.2375 mm/year.
    expect(analysis.longTermRate).toBeCloseTo(0.2375, 6);
    // Short-term: (11.5 − 10.6) / (1095 / 365.25) = 0.9 × 365.25 / 1095 = 0.300205… mm/year.
    const shortTerm = (0.9 * YEAR_DAYS) / 1095;
    expect(analysis.shortTermRate).toBeCloseTo(0.300205, 5);
    // Governing: the greater, the short-term one.
    expect(analysis).toMatchObject({ governingBasis: "shortTerm", status: "corroding", rateUnit: "mm/year", readingCount: 3 });
    expect(analysis.governingRate).toBeCloseTo(shortTerm, 5);
    // Least squares over t = 0, 5.0020534, 8 years and v = 12.5, 11.5, 10.6: mean t 4.3340178, mean v 11.5333333;
    // Σ(t−t̄)(v−v̄) = −7.6334018, Σ(t−t̄)² = 32.669407; slope −0.233656, so a loss of 0.233656 mm/year.
    expect(analysis.leastSquaresRate).toBeCloseTo(0.233656, 5);
    // Remaining life: (10.6 − 8.0) / 0.300205 = 8.66074 years; retirement that long after 2024-01-01.
    expect(analysis.remainingLifeYears).toBeCloseTo(2.6 / shortTerm, 4);
    expect(analysis.remainingLifeYears).toBeCloseTo(8.66074, 4);
    const retirement = at("2024-01-01T00:00:00Z") + (2.6 / shortTerm) * YEAR_DAYS * DAY;
    expect(Math.abs(Date.parse(analysis.retirementDate) - retirement)).toBeLessThan(1000);
    // Next inspection: the earlier of half the remaining life (4.33 years) and 10 years after the last reading.
    const next = at("2024-01-01T00:00:00Z") + (2.6 / shortTerm / 2) * YEAR_DAYS * DAY;
    expect(Math.abs(Date.parse(analysis.nextInspectionDate) - next)).toBeLessThan(1000);
    expect((await call(`/Channels/${ch.id}`)).body.nextInspectionAt).toBe(analysis.nextInspectionDate);

    // A void recomputes it: without 2021, both rates are 2016 → 2024, 0.2375 mm/year.
    const voided = await call(`/Channels/${ch.id}/Readings/${at("2021-01-01T00:00:00Z")}/Void`, {
      method: "POST",
      body: { reason: "wrong CML" },
    });
    expect(voided.status, voided.text).toBe(200);
    const after = (await call(`/Channels/${ch.id}/Analysis`)).body;
    expect(after.analysis.shortTermRate).toBeCloseTo(0.2375, 6);
    expect(after.analysis.remainingLifeYears).toBeCloseTo(2.6 / 0.2375, 4);
    expect(after.history.map((h: { cause: string }) => h.cause.split(":")[0])).toEqual(["void", "signals"]);
  });

  it("defines one reading, no measurable loss, a reading above nominal and one below the minimum", async () => {
    const ch = await createChannel({ nominalThickness: 10, minimumThickness: 6 });
    await record(ch.channelNumber, [["2020-01-01T00:00:00Z", 10.2]]);
    let a = (await call(`/Channels/${ch.id}`)).body.analysis;
    // One reading: no rate, no life; the next inspection the maximum interval (10 years) after it.
    expect(a).toMatchObject({
      status: "oneReading",
      longTermRate: null,
      governingRate: null,
      remainingLifeYears: null,
      retirementDate: null,
    });
    expect(Date.parse(a.nextInspectionDate) - at("2020-01-01T00:00:00Z")).toBe(10 * YEAR_DAYS * DAY);
    expect(a.notes.join(" ")).toContain("above the nominal thickness");

    // Thicker later (scatter): no measurable loss, life unbounded, never negative.
    await record(ch.channelNumber, [["2022-01-01T00:00:00Z", 10.3]]);
    a = (await call(`/Channels/${ch.id}`)).body.analysis;
    expect(a.status).toBe("noMeasurableLoss");
    expect(a.governingRate).toBeLessThan(0);
    expect(a.remainingLifeYears).toBeNull();
    expect(Date.parse(a.nextInspectionDate) - at("2022-01-01T00:00:00Z")).toBe(10 * YEAR_DAYS * DAY);

    // At or below the minimum: life 0, due at once.
    await record(ch.channelNumber, [["2023-01-01T00:00:00Z", 5.9]]);
    a = (await call(`/Channels/${ch.id}`)).body.analysis;
    expect(a).toMatchObject({ status: "belowMinimum", remainingLifeYears: 0, retirementDate: "2023-01-01T00:00:00.000Z" });
    expect(a.nextInspectionDate).toBe("2023-01-01T00:00:00.000Z");
  });

  it("orders channels by the next inspection due, and filters those due before a date", async () => {
    const soon = await createChannel({ nominalThickness: 10, minimumThickness: 6 });
    const later = await createChannel({ nominalThickness: 10, minimumThickness: 6, maxIntervalYears: 5 });
    await record(soon.channelNumber, [
      ["2020-01-01T00:00:00Z", 9],
      ["2021-01-01T00:00:00Z", 8],
    ]);
    await record(later.channelNumber, [["2024-01-01T00:00:00Z", 9.5]]);
    const ids = `${soon.id},${later.id}`;
    const due = (await call(`/Channels?ids=${ids}&order=nextInspectionAt asc`)).body.map((c: { id: string }) => c.id);
    expect(due).toEqual([soon.id, later.id]);
    const before = (await call(`/Channels?ids=${ids}&nextInspectionBefore=2025-01-01T00:00:00Z`)).body.map((c: { id: string }) => c.id);
    expect(before).toEqual([soon.id]);
  });
});

describe("the chart and a change of settings", () => {
  it("draws the readings, the minimum and the projected retirement as SVG; a new minimum recomputes the analysis", async () => {
    const ch = await createChannel({ nominalThickness: 12.7, minimumThickness: 8.0 });
    await record(ch.channelNumber, [
      ["2016-01-01T00:00:00Z", 12.5],
      ["2024-01-01T00:00:00Z", 10.6],
    ]);
    const chart = await call(`/Channels/${ch.id}/Chart`);
    expect(chart.status).toBe(200);
    expect(chart.headers.get("content-type")).toContain("image/svg+xml");
    expect(chart.text).toContain('class="readings"');
    expect(chart.text).toContain('class="minimum"');
    expect(chart.text).toContain('class="projection"');
    const current = await call(`/Channels/${ch.id}`);
    const { plantId: _plant, ...body } = current.body;
    const updated = await call("/Channels", { method: "PUT", body: { ...body, minimumThickness: 9.0 } });
    expect(updated.status, updated.text).toBe(200);
    // (10.6 − 9.0) / 0.2375 = 6.736842 years.
    expect(updated.body.analysis.remainingLifeYears).toBeCloseTo(1.6 / 0.2375, 5);
  });
});
