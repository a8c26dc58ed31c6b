// Export bench (issue 37): GET /Deviations?format=csv|xlsx over 100,000 deviations, through the whole
// app (auth, validation, the query engine page after page, hydration, the CSV or XLSX writer, the
// response stream) on the bench's local D1 under bare workerd (never `wrangler dev`).
//
// The deviations are the lists bench's (bench/lib/list-seed.mjs: statuses, owners, plants, a severity
// property), generated inside SQLite. Each case is one request read to its end by Node's fetch:
// time to the first byte, total time, bytes and rows, and the growth of workerd's resident set
// during it (VmHWM after `clear_refs` 5, minus VmRSS before, as the bodies and image benches measure
// it; workerd also runs the local D1, so its page cache is in the figure). A filter that keeps 10% of
// the rows (statuses=new) beside the whole list shows whether memory grows with the rows (it must not:
// the export holds one page of 1,000 rows).
//
// Knobs: BENCH_EXPORT_ROWS (100000), BENCH_EXPORT_ROUNDS (3).
import { join } from "node:path";
import { peakGrowth, workerdPid } from "../image-measure.mjs";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { listSeedStatements } from "./list-seed.mjs";
import { median, round } from "./load.mjs";

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_EXPORT_ROUNDS ?? 3);

const CASES = [
  { name: "CSV, every deviation", path: "/Deviations?format=csv" },
  { name: "XLSX, every deviation", path: "/Deviations?format=xlsx" },
  { name: "CSV, statuses=new (10%)", path: "/Deviations?format=csv&statuses=new" },
  { name: "XLSX, statuses=new (10%)", path: "/Deviations?format=xlsx&statuses=new" },
  // Ordered by a property: no index reads the list in this order, so each page is sorted; keyset
  // pages (src/pkg/query/keyset.ts) sort only the rows after the last one read.
  { name: "CSV, ordered by severity desc", path: "/Deviations?format=csv&order=properties.benchDeviationSeverity%20desc" },
];

/** The lists bench's seed up to its deviations (with their designations and severity), nothing after. */
function deviationSeed(count) {
  const all = listSeedStatements(count, "unused");
  const end = all.findIndex((statement) => statement.includes("INSERT INTO work_items"));
  return [...all.slice(0, end), "DROP TABLE bench_seq"];
}

/** One export read to its end: ms to the first byte and to the last, bytes, and data rows (CSV lines less the header). */
async function exportOnce(url, headers, csv) {
  const t0 = performance.now();
  // Never waits forever: an export that stalls fails the bench.
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(600_000) }).catch((error) => {
    throw new Error(`${url}: ${error.message} (${error.cause?.message ?? "no cause"})`);
  });
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
  const reader = response.body.getReader();
  let first;
  let bytes = 0;
  let lines = 0;
  let chunks = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    first ??= performance.now() - t0;
    bytes += next.value.byteLength;
    chunks += 1;
    if (csv) for (const byte of next.value) if (byte === 10) lines += 1;
  }
  return { firstByteMs: round(first ?? 0, 1), ms: round(performance.now() - t0, 1), bytes, chunks, rows: csv ? lines - 1 : null };
}

/** `npm run bench -- --only export`. */
export async function runExportSection({ root, benchDir, appModules, credentials, step }) {
  step(`export: starting Miniflare and seeding ${ROWS.toLocaleString("en")} deviations`);
  const { mf, url, db } = await startAppMiniflare({ root, stateDir: join(benchDir, "export-state"), appModules, credentials });
  try {
    await applyMigrations(db, root);
    const t0 = performance.now();
    for (const statement of deviationSeed(ROWS)) await db.prepare(statement).run();
    const seeded = (await db.prepare("SELECT count(*) AS n FROM deviations").first()).n;
    step(`export: ${seeded.toLocaleString("en")} deviations seeded in ${round((performance.now() - t0) / 1000, 1)} s`);
    const pid = workerdPid();
    // A fresh connection per request: workerd may close an idle kept-alive one as the next request goes out.
    const headers = { authorization: `Bearer ${credentials.token}`, connection: "close" };
    // Warm-up: the isolate's JIT and the page cache, on a small export of each format.
    step("export: warm-up (5,000 rows in each format)");
    for (const format of ["csv", "xlsx"])
      await exportOnce(new URL(`/Deviations?format=${format}&take=10&statuses=onHold`, url), headers, false);

    const runs = Object.fromEntries(CASES.map((c) => [c.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      const line = [];
      for (const target of CASES) {
        step(`export: ${target.name}, round ${r + 1}`);
        const measured = await peakGrowth(pid, () => exportOnce(new URL(target.path, url), headers, target.path.includes("csv")));
        runs[target.name].push({ ...measured.result, growthMiB: measured.peakGrowthMiB, rssBeforeMiB: measured.rssBeforeMiB });
        line.push(`${target.name}: ${round(measured.result.ms / 1000, 2)} s, +${measured.peakGrowthMiB} MiB`);
      }
      console.log(`  round ${r + 1} of ${ROUNDS}: ${line.join("; ")}`);
    }
    const cases = CASES.map((target) => {
      const list = runs[target.name];
      const seconds = median(list.map((x) => x.ms)) / 1000;
      return {
        name: target.name,
        path: target.path,
        rows: list[0].rows,
        bytes: list[0].bytes,
        chunks: list[0].chunks,
        seconds: round(seconds, 2),
        firstByteMs: round(median(list.map((x) => x.firstByteMs)), 1),
        growthMiB: round(median(list.map((x) => x.growthMiB)), 1),
        maxGrowthMiB: round(Math.max(...list.map((x) => x.growthMiB)), 1),
        runs: list,
      };
    });
    for (const c of cases) {
      const rate = c.rows ? `, ${Math.round(c.rows / c.seconds).toLocaleString("en")} rows/s` : "";
      console.log(
        `  ${c.name}: ${c.seconds} s (first byte ${c.firstByteMs} ms)${rate}, ${round(c.bytes / 1048576, 1)} MiB in ` +
          `${c.chunks} chunks; workerd +${c.growthMiB} MiB (max +${c.maxGrowthMiB})`,
      );
    }
    return { rows: seeded, rounds: ROUNDS, cases };
  } finally {
    await mf.dispose().catch(() => undefined);
  }
}

/** The markdown of a run, for docs/benchmarks.md. */
export function exportSummary(result, { command, loadAverage, finishedAt }) {
  const lines = [
    `Run ${finishedAt} (\`${command}\`); load average before/after: ${loadAverage.before} / ${loadAverage.after}.`,
    `${result.rows.toLocaleString("en")} deviations; ${result.rounds} rounds; medians; memory: growth of workerd's resident set ` +
      "during the request (it also runs the local D1).",
    "",
    "| export | rows | size | time | rows/s | first byte | workerd growth (max) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const c of result.cases) {
    const rows = c.rows ?? (c.name.includes("10%") ? "(as CSV)" : result.rows);
    const rate = c.rows ? Math.round(c.rows / c.seconds).toLocaleString("en") : "-";
    lines.push(
      `| ${c.name} | ${typeof rows === "number" ? rows.toLocaleString("en") : rows} | ${round(c.bytes / 1048576, 1)} MiB | ` +
        `${c.seconds} s | ${rate} | ${c.firstByteMs} ms | +${c.growthMiB} MiB (+${c.maxGrowthMiB}) |`,
    );
  }
  return lines.join("\n");
}
