// `npm run bench`: builds the Worker exactly as it deploys, runs it under Miniflare with direct
// sockets on 127.0.0.1 (never `wrangler dev`), loads it with autocannon and reports ratios from one
// run. Writes .bench/results.json and prints a markdown summary for docs/benchmarks.md.
//
// Env: BENCH_CONNECTIONS (10), BENCH_DURATION (s per target per round, 4), BENCH_ROUNDS (5),
// BENCH_WARMUP (s, 2), BENCH_STARTUP_RUNS (3), BENCH_ANALYZE (1: run `PRAGMA optimize` after seeding,
// so SQLite plans with statistics; default off, as a database created by the migrations has none).
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchCredentials } from "./lib/auth.mjs";
import { auditSummary, runAuditSection } from "./lib/audit.mjs";
import { readingsSummary, runReadingsSection } from "./lib/readings.mjs";
import { buildEngineWorker, buildWorkerBundle } from "./lib/build.mjs";
import { ownWorkerdCpuSeconds } from "./lib/cpu.mjs";
import { applyMigrations, seedBenchDefinitions, seedBenchEntities } from "./lib/db.mjs";
import { benchList } from "./lib/list.mjs";
import { LOAD, measureRounds, round, roundRatio } from "./lib/load.mjs";
import { startWorkers } from "./lib/miniflare.mjs";
import { machine, markdownSummary } from "./lib/report.mjs";
import { bundleInventory, checkStartup, writeProbe } from "./lib/startup.mjs";
import { runTemplatesSection } from "./lib/templates.mjs";
import { runUploadSection } from "./lib/upload.mjs";
import { runBodiesSection } from "./lib/bodies.mjs";
import { runScaleSection } from "./lib/scale.mjs";
import { deviationSummary, runDeviationSection } from "./lib/deviations.mjs";
import { runImageSection, runPngSection } from "./image-bench.mjs";
import { runFormatsSection } from "./formats-bench.mjs";
import { runJobsSection } from "./lib/jobs.mjs";
import { runMonitorsSection } from "./lib/monitors.mjs";
import { runPlansSection } from "./lib/plans.mjs";
import { runSearchSection } from "./lib/search.mjs";
import { runSandboxSection, sandboxSummary } from "./lib/sandbox.mjs";
import { readsSummary, runReadsSection } from "./lib/reads.mjs";
import { listsSummary, runListsSection } from "./lib/lists.mjs";
import { exportSummary, runExportSection } from "./lib/export.mjs";
import { importSummary, runImportSection } from "./lib/imports.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const benchDir = join(root, ".bench");
const started = Date.now();
const loadBefore = loadavg()
  .map((x) => round(x))
  .join(" ");
const seconds = () => round((Date.now() - started) / 1000, 1);
const step = (text) => console.log(`[${seconds()} s] ${text}`);
// `npm run bench -- --only upload` runs the upload section alone (it starts its own Miniflare);
// `--only list` runs bench B alone (no bundle build, no bench A, no startup check); `--only core`
// runs bench A, bench B and the startup check (not the upload and image sections); `--only templates`
// runs the template copy section (PUT that copies vs PUT in place) alone; `--only deviations`
// runs bench B's query on the real GET /Deviations (bench/lib/deviations.mjs); `--only jobs` runs the
// job dispatcher and job read section (bench/lib/jobs.mjs); `--only search` the search section
// (bench/lib/search.mjs); `--only reads` bench A with server CPU, the price of each layer of the
// request path and the deviation read against the job read (bench/lib/reads.mjs); `--only bodies`
// 95 MiB uploads with and without Idempotency-Key, memory and time (bench/lib/bodies.mjs); `--only scale` bytes per stored entity
// and D1's write rate for
// docs/scale.md (bench/lib/scale.mjs); `--only monitors` the monitor dispatcher and
// monitor read section (bench/lib/monitors.mjs); `--only formats` every image format at 12 and 48 MP
// against sharp (bench/formats-bench.mjs); `--only images` the JPEG, PNG and formats sections;
// `--only lists` every list's filters at 10,000 and 100,000 rows (bench/lib/lists.mjs, issue 22);
// `--only sandbox` request latency while hostile index libraries run (bench/lib/sandbox.mjs, issue 32);
// `--only audit` a write route with and without the audit trail, and bytes per record (bench/lib/audit.mjs, issue 34);
// `--only readings` bulk ingest, a year of minutes read raw and by day, the analysis per reading (bench/lib/readings.mjs, issue 35);
// `--only export` 100,000 deviations exported as CSV and XLSX: time and memory (bench/lib/export.mjs, issue 37);
// `--only import` 100,000 deviations imported from CSV and from XLSX: rows per second, peak isolate heap (bench/lib/imports.mjs, issue 37).
// `--only plans` the minute dispatcher with 10,000 and 100,000 inspection plans (bench/lib/plans.mjs, issue 36).
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;

const SIZES = [
  { kind: "bench10k", entities: 10_000 },
  { kind: "bench100k", entities: 100_000 },
];

async function call(base, path, { method = "GET", token, body } = {}) {
  const response = await fetch(new URL(path, base), {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

function expectOk(what, response) {
  if (response.status < 200 || response.status > 299) throw new Error(`${what}: HTTP ${response.status}: ${response.text.slice(0, 500)}`);
  return response.json;
}

/**
 * Bench A's row: a property definition created through the API. While that route does not exist
 * yet (404), a category (the exemplar resource, same read path shape) stands in, and the report says so.
 */
async function createBenchARow(urls, token) {
  const definition = await call(urls.app, "/PropertyDefinitions", {
    method: "POST",
    token,
    body: { name: "benchProbe", format: "text", applicationRule: "Deviation" },
  });
  if (definition.status === 404 || definition.status === 405) {
    console.log("  POST /PropertyDefinitions is not available yet: falling back to GET /Categories/{id}");
    const category = expectOk(
      "POST /Categories",
      await call(urls.app, "/Categories", { method: "POST", token, body: { name: "Bench category" } }),
    );
    return { resource: "Categories", id: category.id };
  }
  return { resource: "PropertyDefinitions", id: expectOk("POST /PropertyDefinitions", definition).id };
}

async function benchA(urls, token) {
  step("bench A: GET one row, full Worker vs minimal Worker");
  const { resource, id } = await createBenchARow(urls, token);
  const path = `/${resource}/${id}`;
  const full = expectOk(`full GET ${path}`, await call(urls.app, path, { token }));
  const minimal = expectOk(`minimal GET ${path}`, await call(urls.minimal, path));
  if (full.id !== id || minimal.id !== id) throw new Error(`bench A: the workers did not return row ${id}`);
  // workerd's CPU per answered request beside req/s: a busy neighbour moves it far less than req/s,
  // so a run whose req/s ratio swings can still be read (docs/benchmarks.md, "Reads").
  const [minimalFigures, fullFigures] = await measureRounds(
    [
      { label: "minimal Worker", url: new URL(path, urls.minimal) },
      { label: "full Worker", url: new URL(path, urls.app), headers: { authorization: `Bearer ${token}` } },
    ],
    { cpuSeconds: ownWorkerdCpuSeconds },
  );
  const ratio = roundRatio(fullFigures, minimalFigures, (x) => x.reqPerSec);
  // The same ratio by CPU: the minimal Worker's CPU per request over the full one's.
  const cpuRatio = roundRatio(minimalFigures, fullFigures, (x) => x.cpuUsPerRequest);
  // Issue 22: at least 0.9 in the median, and no round under 0.8.
  const perRound = fullFigures.rounds.map((x, i) => x.reqPerSec / minimalFigures.rounds[i].reqPerSec);
  const lowestRound = round(Math.min(...perRound), 3);
  console.log(`  ratio full/minimal: ${ratio} (target >= 0.9, every round >= 0.8; lowest round ${lowestRound})`);
  const cpu = `minimal ${minimalFigures.cpuUsPerRequest} µs, full ${fullFigures.cpuUsPerRequest} µs`;
  console.log(`  server CPU per request: ${cpu}; ratio by CPU ${cpuRatio}`);
  return {
    resource,
    path,
    minimal: minimalFigures,
    full: fullFigures,
    ratio,
    cpuRatio,
    target: 0.9,
    roundTarget: 0.8,
    lowestRound,
  };
}

/**
 * The other half of the lazy-WASM check: saving a definition with a valueExpression runs QuickJS (a
 * syntax check), so the probe must now have seen an instantiation, in the request phase. Zero means
 * the sandbox is not wired yet and the startup figure proves nothing about it.
 */
async function wasmAfterExpression(urls, token) {
  step("lazy WASM: one valueExpression through the probe worker");
  const created = await call(urls.probe, "/PropertyDefinitions", {
    method: "POST",
    token,
    body: { name: "benchExpression", format: "integer", unit: "metre", applicationRule: "Deviation", valueExpression: "return 1 + 1;" },
  });
  const calls = expectOk("probe", await call(urls.probe, "/__bench/wasm"));
  const inRequests = calls.filter((c) => c.phase === "request").length;
  console.log(`  POST /PropertyDefinitions with a valueExpression: HTTP ${created.status}; WASM instantiations in requests: ${inRequests}`);
  return { status: created.status, instantiations: inRequests };
}

/** The arguments of every section that runs the deployed bundle with the bench's token. */
async function bundleSection() {
  step("building the Worker bundle (wrangler deploy --dry-run)");
  return { root, benchDir, appModules: buildWorkerBundle(root, join(benchDir, "build")), credentials: await benchCredentials(root), step };
}

/** The 1/5/15-minute load averages before the run and now: the machine may be shared (other builds, tests). */
const loadAverages = () => ({
  before: loadBefore,
  after: loadavg()
    .map((x) => round(x))
    .join(" "),
});

/**
 * A section run alone that writes .bench/{name}-results.json: when, the command, the machine, the load
 * settings and averages, and the section's result; then prints `summary` of it, for docs/benchmarks.md.
 */
function withResults(name, run, summary) {
  return async () => {
    const result = await run();
    const record = {
      finishedAt: new Date().toISOString(),
      command: `npm run bench -- --only ${name}`,
      machine: machine(),
      load: LOAD,
      loadAverage: loadAverages(),
      ...result,
    };
    writeFileSync(join(benchDir, `${name}-results.json`), `${JSON.stringify(record, null, 2)}\n`);
    step(`done; .bench/${name}-results.json written${summary ? ". Summary for docs/benchmarks.md:\n" : ""}`);
    if (summary) console.log(summary(result, record));
  };
}

/** The template copy section (issue 3). */
const templatesSection = (appModules, credentials) =>
  withResults("templates", () => runTemplatesSection({ root, benchDir, appModules, credentials, step }))();

/** What `--only NAME` runs instead of the core run (bench A, bench B, startup). */
const SECTIONS = {
  upload: async () => runUploadSection(await bundleSection()),
  bodies: async () => runBodiesSection(await bundleSection()),
  scale: async () => runScaleSection(await bundleSection()),
  templates: async () => {
    const { appModules, credentials } = await bundleSection();
    await templatesSection(appModules, credentials);
  },
  deviations: withResults(
    "deviations",
    async () => runDeviationSection({ root, benchDir, credentials: await benchCredentials(root), step }),
    (result, record) => deviationSummary(result, record.command),
  ),
  jobs: withResults("jobs", async () => runJobsSection(await bundleSection())),
  monitors: withResults("monitors", async () => runMonitorsSection(await bundleSection())),
  plans: withResults("plans", async () => runPlansSection(await bundleSection())),
  search: withResults("search", async () => runSearchSection(await bundleSection())),
  sandbox: withResults("sandbox", async () => runSandboxSection(await bundleSection()), sandboxSummary),
  lists: withResults("lists", async () => runListsSection(await bundleSection()), listsSummary),
  audit: withResults("audit", async () => runAuditSection(await bundleSection()), auditSummary),
  readings: withResults("readings", async () => runReadingsSection(await bundleSection()), readingsSummary),
  export: withResults("export", async () => runExportSection(await bundleSection()), exportSummary),
  import: withResults("import", async () => runImportSection(await bundleSection()), importSummary),
  reads: withResults(
    "reads",
    async () => runReadsSection({ root, benchDir, credentials: await benchCredentials(root), step }),
    readsSummary,
  ),
  png: async () => {
    await runPngSection({ root, benchDir, step });
    step("done; .bench/png.json written");
  },
  formats: async () => {
    await runFormatsSection({ root, benchDir, step });
    step("done; .bench/formats.json written");
  },
  images: async () => {
    await runImageSection(await bundleSection());
    await runPngSection({ root, benchDir, step });
    await runFormatsSection({ root, benchDir, step });
  },
};

async function main() {
  mkdirSync(benchDir, { recursive: true });
  if (only && Object.hasOwn(SECTIONS, only)) {
    await SECTIONS[only]();
    return;
  }
  const listOnly = only === "list";
  step(
    listOnly
      ? "building the engine worker (esbuild)"
      : "building the Worker bundle (wrangler deploy --dry-run) and the engine worker (esbuild)",
  );
  const appModules = listOnly ? undefined : buildWorkerBundle(root, join(benchDir, "build"));
  const engineScript = await buildEngineWorker(root, join(benchDir, "engine"));
  const probe = appModules ? writeProbe(benchDir, appModules) : undefined;

  // Before Miniflare starts, so the profile does not share the CPU with it.
  let startupProfile;
  if (!listOnly) {
    step("startup CPU (wrangler check startup)");
    startupProfile = checkStartup(root, benchDir);
    console.log(`  least ${startupProfile.cpuMs} ms CPU (runs: ${startupProfile.cpuMsRuns.join(", ")} ms)`);
  }

  const credentials = await benchCredentials(root);
  // On Ctrl-C: wrangler (imported for its config reader) already listens and calls process.exit()
  // synchronously, and Miniflare's exit hook then kills workerd. Prepended, this runs first and
  // disposes properly whenever nothing else exits before it.
  let stop = async () => undefined;
  const onSignal = (signal) => {
    console.error(`\n${signal}: stopping Miniflare`);
    stop().finally(() => process.exit(130));
  };
  process.prependOnceListener("SIGINT", onSignal);
  process.prependOnceListener("SIGTERM", onSignal);
  step("starting Miniflare (direct sockets on 127.0.0.1)");
  const { mf, urls, db } = await startWorkers({
    root,
    stateDir: join(benchDir, "state"),
    appModules,
    minimalScript: join(root, "bench", "minimal-worker.js"),
    engineScript,
    jwksJson: credentials.jwksJson,
    probe,
  });
  console.log("  (wrangler's .dev.vars notice above is harmless: only wrangler.toml's [vars] are bound)");
  stop = () => mf.dispose().catch(() => undefined);
  try {
    // The probe answers before any other request can have made the Worker load WASM lazily.
    const wasmCalls = listOnly ? [] : expectOk("probe", await call(urls.probe, "/__bench/wasm"));
    step("applying migrations and seeding");
    const migrations = await applyMigrations(db, root);
    await seedBenchDefinitions(db);
    const seeded = {};
    for (const { kind, entities } of SIZES) {
      const t = Date.now();
      seeded[kind] = await seedBenchEntities(db, kind, entities);
      console.log(`  ${kind}: ${entities} entities, ${seeded[kind].values} property values in ${round((Date.now() - t) / 1000, 1)} s`);
    }

    const analyzed = process.env.BENCH_ANALYZE === "1";
    if (analyzed) await db.prepare("PRAGMA optimize=0x10002").run();

    const a = listOnly ? undefined : await benchA(urls, credentials.token);
    const b = await benchList(
      urls,
      SIZES.map((size) => ({ ...size, values: seeded[size.kind].values })),
      step,
    );
    const wasmAfter = listOnly ? undefined : await wasmAfterExpression(urls, credentials.token);

    const results = {
      finishedAt: new Date().toISOString(),
      command: only ? `npm run bench -- --only ${only}` : "npm run bench",
      machine: machine(),
      load: LOAD,
      migrations,
      loadAverage: loadAverages(),
      benchA: a,
      benchB: { ...b, statistics: analyzed ? "PRAGMA optimize after seeding" : "none (as after the migrations)" },
      startup: appModules && {
        profile: startupProfile,
        bundle: bundleInventory(appModules),
        wasm: { atStartup: wasmCalls.filter((c) => c.phase === "startup").length, calls: wasmCalls, afterExpression: wasmAfter },
      },
      totalSeconds: seconds(),
    };
    const file = listOnly ? "list-results.json" : "results.json";
    writeFileSync(join(benchDir, file), `${JSON.stringify(results, null, 2)}\n`);
    step(`done; .bench/${file} written. Summary for docs/benchmarks.md:\n`);
    console.log(markdownSummary(results));
  } finally {
    await stop();
  }
  if (!only) await runUploadSection({ root, benchDir, appModules, credentials, step });
  if (!only) await runBodiesSection({ root, benchDir, appModules, credentials, step });
  if (!only) await runScaleSection({ root, benchDir, appModules, credentials, step });
  if (!only) await runImageSection({ root, benchDir, appModules, credentials, step });
  if (!only) await runPngSection({ root, benchDir, step });
  if (!only) await runFormatsSection({ root, benchDir, step });
  if (!only) await templatesSection(appModules, credentials);
}

main().catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
