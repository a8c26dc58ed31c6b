// Lists bench (issue 22): every list's documented filters alone with the default order, and the
// combinations clients use most (status with owner, with plant, with a date range), first page of
// 20, at 10,000 and 100,000 rows per list, through the whole app (auth, validation, the query
// engine, hydration of the page) on the bench's local D1 under bare workerd (never `wrangler dev`).
//
// Each size runs in its own Miniflare (own D1 database), seeded by bench/lib/list-seed.mjs; the
// cases are bench/list-matrix.json (also read by test/query/list-plans.test.ts, which pins their
// plans). Time is a client's: one request at a time, wall time from Node's fetch to the end of the
// body, keep-alive. Rounds alternate the sizes (10k then 100k, then 100k then 10k, ...) case by
// case, so a slow spell of the shared machine lands on both sides of a ratio; figures are medians
// over every request, the ratio the median over rounds of each round's median ratio.
//
// Knobs: BENCH_LIST_ROUNDS (5), BENCH_LIST_REQUESTS (requests per case, size and round: 6),
// BENCH_LIST_TOTAL_ROUNDS (includeTotal=true, 3), BENCH_LIST_ONLY (a list name prefix, while
// investigating), BENCH_LIST_SIZES (10000,100000).
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { webcrypto } from "node:crypto";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { listSeedStatements } from "./list-seed.mjs";
import { measureRounds, median, round } from "./load.mjs";

export const LIST_TARGET = { ratio: 1.5, p50Ms: 30 };
const ROUNDS = Number(process.env.BENCH_LIST_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_LIST_REQUESTS ?? 6);
const TOTAL_ROUNDS = Number(process.env.BENCH_LIST_TOTAL_ROUNDS ?? 3);
const SIZES = (process.env.BENCH_LIST_SIZES ?? "10000,100000").split(",").map(Number);
/** The tables the seed fills: their indexes are dropped while it runs and built again after (same schema, minutes faster). */
const SEEDED_TABLES = [
  "deviations",
  "work_items",
  "activities",
  "work_templates",
  "activity_templates",
  "files",
  "medias",
  "jobs",
  "job_configurations",
  "models",
  "monitors",
  "monitor_jobs",
  "designations",
  "entity_tags",
  "property_values",
  "work_item_templates",
  "work_item_activity_templates",
];

const b64url = (bytes) => Buffer.from(bytes).toString("base64url");
async function seal(rawKey, options) {
  const key = await webcrypto.subtle.importKey("raw", rawKey, "AES-GCM", false, ["encrypt"]);
  const iv = webcrypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(
    await webcrypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(JSON.stringify(options))),
  );
  return `v1.${b64url(iv)}.${b64url(data)}`;
}

export function readMatrix(root) {
  return JSON.parse(readFileSync(join(root, "bench", "list-matrix.json"), "utf8"));
}

/** The URL path and query of one case (take=20 on paged lists). */
export function casePath(matrix, list, entry, { total = false } = {}) {
  const query = new URLSearchParams({
    ...entry.query,
    ...(list.paged === false ? {} : { take: String(matrix.take) }),
    ...(total ? { includeTotal: "true" } : {}),
  });
  const text = query.toString();
  return text ? `${list.path}?${text}` : list.path;
}

async function seed(db, count, sealed) {
  const placeholders = SEEDED_TABLES.map(() => "?").join(", ");
  const { results: indexes } = await db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${placeholders})`)
    .bind(...SEEDED_TABLES)
    .all();
  for (const { name } of indexes) await db.prepare(`DROP INDEX "${name}"`).run();
  for (const statement of listSeedStatements(count, sealed)) await db.prepare(statement).run();
  for (const { sql } of indexes) await db.prepare(sql).run();
  return indexes.length;
}

/** One request's wall time in ms; fails on anything but 200. Returns [ms, rows (array length) or null]. */
async function timed(url, headers) {
  const t0 = performance.now();
  const response = await fetch(url, { headers });
  const text = await response.text();
  const ms = performance.now() - t0;
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}: ${text.slice(0, 400)}`);
  let rows = null;
  try {
    const body = JSON.parse(text);
    rows = Array.isArray(body) ? body.length : Array.isArray(body?.items) ? body.items.length : null;
  } catch {
    rows = null;
  }
  return [ms, rows, response.headers.get("x-total-count")];
}

/**
 * Alternating rounds over cases x sizes. `targets[i]` is one case with one URL per size. Returns,
 * per target: every sample per size, per-round medians, and rows seen.
 */
async function sequentialRounds(targets, sizes, rounds, headers, label) {
  const out = targets.map(() => ({
    samples: sizes.map(() => []),
    roundMedians: sizes.map(() => []),
    rows: sizes.map(() => null),
    totals: sizes.map(() => null),
  }));
  // One warm-up request per target and size (the isolate's JIT, the page cache, the counts cache).
  for (const target of targets) for (const url of target.urls) await timed(url, headers);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? sizes.map((_, i) => i) : sizes.map((_, i) => sizes.length - 1 - i);
    for (const [t, target] of targets.entries()) {
      for (const s of order) {
        const times = [];
        for (let k = 0; k < REQUESTS; k++) {
          const [ms, rows, total] = await timed(target.urls[s], headers);
          times.push(ms);
          out[t].rows[s] = rows;
          out[t].totals[s] = total;
        }
        out[t].samples[s].push(...times);
        out[t].roundMedians[s].push(median(times));
      }
    }
    console.log(
      `  ${label}: round ${r + 1} of ${rounds} done (load average ${loadavg()
        .map((x) => round(x))
        .join(" ")})`,
    );
  }
  return out;
}

function summarise(target, measured, sizes) {
  const p50 = measured.samples.map((samples) => round(median(samples), 1));
  const p90 = measured.samples.map((samples) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))], 1);
  });
  const last = sizes.length - 1;
  const ratio = round(median(measured.roundMedians[last].map((m, r) => m / measured.roundMedians[0][r])), 2);
  return {
    list: target.list,
    case: target.case,
    path: target.paths,
    rows: measured.rows,
    totals: measured.totals,
    p50Ms: p50,
    p90Ms: p90,
    ratio,
    roundRatios: measured.roundMedians[last].map((m, r) => round(m / measured.roundMedians[0][r], 2)),
  };
}

/** `npm run bench -- --only lists`. */
export async function runListsSection({ root, benchDir, appModules, credentials, step }) {
  const matrix = readMatrix(root);
  const only = process.env.BENCH_LIST_ONLY;
  const lists = matrix.lists.filter((list) => !only || list.name.startsWith(only));
  const rawKey = webcrypto.getRandomValues(new Uint8Array(32));
  const sealed = await seal(rawKey, { MODE: "bench" });
  const started = [];
  const headers = { authorization: `Bearer ${credentials.token}` };
  const seeded = [];
  try {
    for (const count of SIZES) {
      step(`lists: starting Miniflare for ${count.toLocaleString("en")} rows per list and seeding`);
      const app = await startAppMiniflare({
        root,
        stateDir: join(benchDir, `lists-state-${count}`),
        appModules,
        credentials,
        bindings: { DATAPROCESSING_ENCRYPTION_KEY: `1:${Buffer.from(rawKey).toString("base64")}` },
      });
      started.push(app);
      await applyMigrations(app.db, root);
      const t0 = performance.now();
      const indexes = await seed(app.db, count, sealed);
      const seconds = round((performance.now() - t0) / 1000, 1);
      const rows = await app.db
        .prepare(
          "SELECT (SELECT count(*) FROM deviations) AS deviations, (SELECT count(*) FROM designations) AS designations, " +
            "(SELECT count(*) FROM property_values) AS property_values",
        )
        .first();
      console.log(`  ${count.toLocaleString("en")}: seeded in ${seconds} s (${indexes} indexes rebuilt); ${JSON.stringify(rows)}`);
      seeded.push({ count, seconds, rows });
    }
    const targets = lists.flatMap((list) =>
      list.cases.map((entry) => ({
        list: list.name,
        case: entry.name,
        paged: list.paged !== false,
        paths: casePath(matrix, list, entry),
        urls: started.map(({ url }) => new URL(casePath(matrix, list, entry), url)),
        totalUrls:
          list.paged === false ? undefined : started.map(({ url }) => new URL(casePath(matrix, list, entry, { total: true }), url)),
      })),
    );
    step(`lists: ${targets.length} cases, first page, ${ROUNDS} alternating rounds of ${REQUESTS} requests per case and size`);
    const pages = await sequentialRounds(targets, SIZES, ROUNDS, headers, "pages");
    const pageResults = targets.map((target, i) => summarise(target, pages[i], SIZES));

    const totalTargets = targets
      .filter((t) => t.totalUrls)
      .map((t) => ({ ...t, urls: t.totalUrls, paths: `${t.paths}&includeTotal=true` }));
    step(`lists: the same with includeTotal=true, ${TOTAL_ROUNDS} rounds`);
    const totals = await sequentialRounds(totalTargets, SIZES, TOTAL_ROUNDS, headers, "totals");
    const totalResults = totalTargets.map((target, i) => summarise(target, totals[i], SIZES));

    // The issue's own measurement: the search bench's GET /Deviations?statuses=active&take=20 under
    // 10 connections (autocannon), where latency is mostly queueing (10 x the service time).
    step("lists: GET /Deviations?statuses=active&take=20 under load (autocannon, as the search bench measured it)");
    const underLoad = await measureRounds(
      started.map(({ url }, i) => ({
        label: `GET /Deviations?statuses=active&take=20 (${SIZES[i] / 1000}k)`,
        url: new URL("/Deviations?statuses=active&take=20", url),
        headers,
      })),
    );
    // With one size (BENCH_LIST_SIZES=10000 while investigating) both ends are that size.
    const small = underLoad[0];
    const large = underLoad[underLoad.length - 1];
    const load = {
      path: "/Deviations?statuses=active&take=20",
      small,
      large,
      ratio: round(median(large.rounds.map((x, i) => x.latencyMs.p50 / small.rounds[i].latencyMs.p50)), 2),
    };

    const met = pageResults.filter((r) => r.ratio <= LIST_TARGET.ratio && r.p50Ms[r.p50Ms.length - 1] <= LIST_TARGET.p50Ms).length;
    console.log(
      `  pages: ${met} of ${pageResults.length} cases meet both targets (ratio <= ${LIST_TARGET.ratio}, p50 <= ` +
        `${LIST_TARGET.p50Ms} ms at ${SIZES[SIZES.length - 1].toLocaleString("en")})`,
    );
    for (const r of pageResults) {
      const flag = r.ratio <= LIST_TARGET.ratio && r.p50Ms[r.p50Ms.length - 1] <= LIST_TARGET.p50Ms ? "" : "  <-- NOT met";
      console.log(`  ${r.list} / ${r.case}: p50 ${r.p50Ms.join(" / ")} ms, ratio ${r.ratio}, rows ${r.rows.join("/")}${flag}`);
    }
    return {
      sizes: SIZES,
      rounds: ROUNDS,
      requests: REQUESTS,
      totalRounds: TOTAL_ROUNDS,
      target: LIST_TARGET,
      seeded,
      pages: pageResults,
      totals: totalResults,
      load,
    };
  } finally {
    for (const { mf } of started) await mf.dispose().catch(() => undefined);
  }
}

/** The markdown of a run, for docs/benchmarks.md. */
export function listsSummary(result, { command, loadAverage, finishedAt }) {
  // The first and the last size (one size alone, BENCH_LIST_SIZES=10000, is both).
  const labels = result.sizes.map((n) => `${n / 1000}k`);
  const [small, large] = [labels[0], labels.at(-1)];
  const byList = new Map();
  for (const r of result.pages) byList.set(r.list, [...(byList.get(r.list) ?? []), r]);
  const totals = new Map(result.totals.map((t) => [`${t.list}/${t.case}`, t]));
  const lines = [
    `Run ${finishedAt} (\`${command}\`); load average before/after: ${loadAverage.before} / ${loadAverage.after}.`,
    `${result.rounds} alternating rounds of ${result.requests} sequential requests per case and size (totals: ` +
      `${result.totalRounds} rounds);`,
    `p50 over every request; ratio: median over rounds of the round's p50 at ${large} / at ${small}.`,
    "",
    `| list | case | rows | p50 ms ${small} | p50 ms ${large} | ratio | met | with total: p50 ms ${small} / ${large} (ratio) |`,
    "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
  ];
  for (const [list, rows] of byList) {
    for (const r of rows) {
      const met = r.ratio <= result.target.ratio && r.p50Ms.at(-1) <= result.target.p50Ms;
      const t = totals.get(`${r.list}/${r.case}`);
      const total = t ? `${t.p50Ms[0]} / ${t.p50Ms.at(-1)} (${t.ratio})` : "-";
      lines.push(
        `| ${list} | ${r.case} | ${r.rows.join(" / ")} | ${r.p50Ms[0]} | ${r.p50Ms.at(-1)} | ${r.ratio} | ` +
          `${met ? "yes" : "**no**"} | ${total} |`,
      );
    }
  }
  const met = result.pages.filter((r) => r.ratio <= result.target.ratio && r.p50Ms.at(-1) <= result.target.p50Ms).length;
  lines.push(
    "",
    `Pages: **${met} of ${result.pages.length}** cases meet both targets (ratio <= ${result.target.ratio}, p50 <= ` +
      `${result.target.p50Ms} ms at ${large}).`,
    `Under 10 connections (autocannon), \`GET ${result.load.path}\`: p50 ${result.load.small.latencyMs.p50} ms at ` +
      `${small}, ${result.load.large.latencyMs.p50} ms at ${large}` +
      ` (${result.load.small.reqPerSec} and ${result.load.large.reqPerSec} req/s; ratio of p50 ${result.load.ratio}).`,
  );
  return lines.join("\n");
}
