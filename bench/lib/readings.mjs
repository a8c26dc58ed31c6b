// Readings (issue 35, docs/benchmarks.md "Readings"): the measurement service's own figures, on the
// deployed bundle under Miniflare with a fresh persistence folder.
//
// - Bulk ingest: POST /signals/bulk of 10,000 readings a request (the documented limit), to one channel
//   and spread over ten, one request at a time: readings per second.
// - A year of one-minute readings (525,600) in one channel, then read raw (GET /Channels/{id}/Readings,
//   one page of 1,000 at a random point of the year) and by day over the whole year (GET .../Aggregates,
//   which reads the series' rollups): p50 over BENCH_READINGS_READS requests each.
// - The analysis per reading: the same ingest into a thickness channel (the API 570/510 analysis runs
//   on every write) and a pressure channel (none), alternating, and the difference per reading.
import { join } from "node:path";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { median, round } from "./load.mjs";

const PER_REQUEST = 10_000;
const INGEST_REQUESTS = Number(process.env.BENCH_READINGS_REQUESTS ?? 10);
const YEAR_MINUTES = 525_600;
const READS = Number(process.env.BENCH_READINGS_READS ?? 30);
const THICKNESS = "00000000-0000-4000-8000-0000000c0101";
const PRESSURE = "00000000-0000-4000-8000-0000000c0102";
const START = Date.parse("2025-01-01T00:00:00Z");

export async function runReadingsSection({ root, benchDir, appModules, credentials, step }) {
  const stateDir = join(benchDir, "readings-state");
  const { mf, url, db } = await startAppMiniflare({ root, stateDir, appModules, credentials });
  await applyMigrations(db, root);
  const headers = { authorization: `Bearer ${credentials.token}`, "content-type": "application/json", connection: "close" };
  const call = async (method, path, body) => {
    const response = await fetch(new URL(path, url), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (response.status > 299) throw new Error(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  const timed = async (method, path, body) => {
    const started = performance.now();
    const answer = await call(method, path, body);
    return { ms: performance.now() - started, answer };
  };
  try {
    const plant = await call("POST", "/Assets", { kind: "plant", name: "Bench plant" });
    const system = await call("POST", "/Assets", { kind: "mainSystem", name: "Bench system", parentId: plant.id });
    const equipment = await call("POST", "/Assets", { kind: "equipment", name: "Bench vessel", parentId: system.id });
    let n = 0;
    const channel = (channelTypeId, extra = {}) =>
      call("POST", "/Channels", { name: `bench ${++n}`, assetId: equipment.id, channelTypeId, ...extra });
    /** `count` requests of PER_REQUEST readings at one a minute from `startMs` over `channels`, round robin; readings per second. */
    const ingest = async (channels, count, startMs) => {
      let total = 0;
      let ms = 0;
      for (let r = 0; r < count; r++) {
        const body = [];
        for (let i = 0; i < PER_REQUEST; i++) {
          const k = r * PER_REQUEST + i;
          const ch = channels[k % channels.length];
          const ts = startMs + Math.floor(k / channels.length) * 60_000;
          body.push({ channelNumber: ch.channelNumber, timestamp: ts, value: 20 - (k % 1000) / 1e4 });
        }
        const { ms: took } = await timed("POST", "/signals/bulk", body);
        ms += took;
        total += body.length;
      }
      return { readings: total, seconds: round(ms / 1000, 2), perSecond: round(total / (ms / 1000), 0) };
    };

    step(`readings: ingest into one channel (${INGEST_REQUESTS} × ${PER_REQUEST})`);
    const one = await ingest([await channel(PRESSURE)], INGEST_REQUESTS, START);
    step(`readings: ingest over ten channels (${INGEST_REQUESTS} × ${PER_REQUEST})`);
    const tenChannels = [];
    for (let i = 0; i < 10; i++) tenChannels.push(await channel(PRESSURE));
    const ten = await ingest(tenChannels, INGEST_REQUESTS, START);

    step(`readings: the analysis per reading (thickness vs pressure, ${INGEST_REQUESTS} × ${PER_REQUEST} each, alternating)`);
    const thickness = await channel(THICKNESS, { nominalThickness: 25, minimumThickness: 10 });
    const pressure = await channel(PRESSURE);
    const perReadingUs = { thickness: [], pressure: [] };
    for (let r = 0; r < INGEST_REQUESTS; r++) {
      for (const [label, ch] of r % 2 === 0
        ? [
            ["thickness", thickness],
            ["pressure", pressure],
          ]
        : [
            ["pressure", pressure],
            ["thickness", thickness],
          ]) {
        const result = await ingest([ch], 1, START + r * PER_REQUEST * 60_000);
        perReadingUs[label].push((result.seconds * 1e6) / result.readings);
      }
    }
    const analysis = {
      thicknessUsPerReading: round(median(perReadingUs.thickness), 2),
      pressureUsPerReading: round(median(perReadingUs.pressure), 2),
    };
    analysis.differenceUs = round(analysis.thicknessUsPerReading - analysis.pressureUsPerReading, 2);
    analysis.ratio = round(analysis.thicknessUsPerReading / analysis.pressureUsPerReading, 3);

    step(`readings: a year of one-minute readings (${YEAR_MINUTES}) into one channel`);
    const year = await channel(PRESSURE);
    const yearIngest = await ingest([year], Math.ceil(YEAR_MINUTES / PER_REQUEST), START);
    const end = START + YEAR_MINUTES * 60_000;
    step(`readings: ${READS} raw pages and ${READS} daily aggregates over the year`);
    const raw = [];
    const daily = [];
    let days = 0;
    for (let i = 0; i < READS; i++) {
      const from = START + Math.floor(Math.random() * (YEAR_MINUTES - 2000)) * 60_000;
      raw.push((await timed("GET", `/Channels/${year.id}/Readings?from=${from}&to=${end}&take=1000`)).ms);
      const agg = await timed("GET", `/Channels/${year.id}/Aggregates?granularity=day&timeZone=UTC&from=${START}&to=${end}`);
      daily.push(agg.ms);
      days = agg.answer.buckets?.length ?? days;
    }
    return {
      perRequest: PER_REQUEST,
      ingest: { oneChannel: one, tenChannels: ten, yearOfMinutes: yearIngest },
      analysis,
      year: {
        readings: YEAR_MINUTES,
        rawPage1000P50Ms: round(median(raw), 1),
        dailyAggregateP50Ms: round(median(daily), 1),
        days,
        reads: READS,
      },
    };
  } finally {
    await mf.dispose().catch(() => undefined);
  }
}

export function readingsSummary(r, record) {
  return [
    "| measure | value |",
    "|---|---|",
    `| bulk ingest, one channel (${r.perRequest} a request) | ${r.ingest.oneChannel.perSecond} readings/s |`,
    `| bulk ingest, ten channels (${r.perRequest} a request) | ${r.ingest.tenChannels.perSecond} readings/s |`,
    `| a year of one-minute readings (${r.year.readings}) ingested | ${r.ingest.yearOfMinutes.seconds} s ` +
      `(${r.ingest.yearOfMinutes.perSecond} readings/s) |`,
    `| raw page of 1,000 from that year (p50 of ${r.year.reads}) | ${r.year.rawPage1000P50Ms} ms |`,
    `| the year by day, ${r.year.days} buckets (p50 of ${r.year.reads}) | ${r.year.dailyAggregateP50Ms} ms |`,
    `| write cost per reading, thickness (analysis) vs pressure | ${r.analysis.thicknessUsPerReading} µs vs ` +
      `${r.analysis.pressureUsPerReading} µs (ratio ${r.analysis.ratio}, +${r.analysis.differenceUs} µs) |`,
    `(${record.command})`,
  ].join("\n");
}
