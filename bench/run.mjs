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
import { buildEngineWorker, buildWorkerBundle } from "./lib/build.mjs";
import { applyMigrations, seedBenchDefinitions, seedBenchEntities } from "./lib/db.mjs";
import { LOAD, measureRounds, median, round, roundRatio } from "./lib/load.mjs";
import { startWorkers } from "./lib/miniflare.mjs";
import { machine, markdownSummary } from "./lib/report.mjs";
import { bundleInventory, checkStartup, writeProbe } from "./lib/startup.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const benchDir = join(root, ".bench");
const started = Date.now();
const loadBefore = loadavg().map((x) => round(x)).join(" ");
const seconds = () => round((Date.now() - started) / 1000, 1);
const step = (text) => console.log(`[${seconds()} s] ${text}`);

const SIZES = [
  { kind: "bench10k", entities: 10_000 },
  { kind: "bench100k", entities: 100_000 },
];
const BENCH_B_QUERY = new URLSearchParams({ properties: "severity ge 4 and area eq 'north'", order: "properties.inspectedAt desc", take: "50" }).toString();

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
    const category = expectOk("POST /Categories", await call(urls.app, "/Categories", { method: "POST", token, body: { name: "Bench category" } }));
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
  const [minimalFigures, fullFigures] = await measureRounds([
    { label: "minimal Worker", url: new URL(path, urls.minimal) },
    { label: "full Worker", url: new URL(path, urls.app), headers: { authorization: `Bearer ${token}` } },
  ]);
  const ratio = roundRatio(fullFigures, minimalFigures, (x) => x.reqPerSec);
  console.log(`  ratio full/minimal: ${ratio} (target >= 0.8)`);
  return { resource, path, minimal: minimalFigures, full: fullFigures, ratio, target: 0.8 };
}

async function benchB(urls, seeded) {
  step("bench B: property filter + order over 10k and 100k entities");
  const sizes = [];
  for (const { kind, entities } of SIZES) {
    const planPath = `/${kind}/plan?${BENCH_B_QUERY}`;
    const plan = expectOk(`plan ${kind}`, await call(urls.engine, planPath));
    if (plan.returned === 0) throw new Error(`bench B: the filter matches nothing in ${kind}`);
    // D1's own execution time per statement, from sequential calls (no load).
    const timings = [];
    for (let i = 0; i < 21; i++) timings.push(expectOk(`plan ${kind}`, await call(urls.engine, planPath)).sqlMs);
    sizes.push({
      kind,
      entities,
      values: seeded[kind].values,
      total: plan.total,
      sql: plan.sql,
      params: plan.params,
      plan: plan.plan,
      countSql: plan.countSql,
      countPlan: plan.countPlan,
      // Median and minimum: on a busy machine the minimum is the better estimate of the query's own cost.
      sqlMs: Object.fromEntries(["catalog", "page", "count"].map((k) => [k, round(median(timings.map((t) => t[k])), 3)])),
      sqlMsMin: Object.fromEntries(["catalog", "page", "count"].map((k) => [k, round(Math.min(...timings.map((t) => t[k])), 3)])),
    });
    console.log(`  ${kind}: ${plan.total} of ${entities} match; SQL ms page ${sizes.at(-1).sqlMs.page}, count ${sizes.at(-1).sqlMs.count}`);
  }
  const [small, large] = sizes;
  const target = (size, variant) => ({
    label: `${size.kind} ${variant === "page" ? "page only" : "page + total"}`,
    url: new URL(`/${size.kind}/entities${variant === "page" ? "/page" : ""}?${BENCH_B_QUERY}`, urls.engine),
  });
  [small.list, large.list, small.page, large.page] = await measureRounds([
    target(small, "list"),
    target(large, "list"),
    target(small, "page"),
    target(large, "page"),
  ]);
  const latency = (x) => x.latencyMs.mean;
  const ratio = {
    list: roundRatio(large.list, small.list, latency),
    page: roundRatio(large.page, small.page, latency),
    sqlPage: round(large.sqlMs.page / Math.max(small.sqlMs.page, 0.001), 2),
    sqlCount: round(large.sqlMs.count / Math.max(small.sqlMs.count, 0.001), 2),
    sqlPageMin: round(large.sqlMsMin.page / Math.max(small.sqlMsMin.page, 0.001), 2),
    sqlCountMin: round(large.sqlMsMin.count / Math.max(small.sqlMsMin.count, 0.001), 2),
  };
  console.log(`  ratio 100k/10k mean latency: page + total ${ratio.list}, page only ${ratio.page} (target <= 2)`);
  return { query: decodeURIComponent(BENCH_B_QUERY).replace(/\+/g, " "), sizes, ratio, target: 2 };
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

async function main() {
  mkdirSync(benchDir, { recursive: true });
  step("building the Worker bundle (wrangler deploy --dry-run) and the engine worker (esbuild)");
  const appModules = buildWorkerBundle(root, join(benchDir, "build"));
  const engineScript = await buildEngineWorker(root, join(benchDir, "engine"));
  const probe = writeProbe(benchDir, appModules);

  // Before Miniflare starts, so the profile does not share the CPU with it.
  step("startup CPU (wrangler check startup)");
  const startupProfile = checkStartup(root, benchDir);
  console.log(`  least ${startupProfile.cpuMs} ms CPU (runs: ${startupProfile.cpuMsRuns.join(", ")} ms)`);

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
    const wasmCalls = expectOk("probe", await call(urls.probe, "/__bench/wasm"));
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

    const a = await benchA(urls, credentials.token);
    const b = await benchB(urls, seeded);
    const wasmAfter = await wasmAfterExpression(urls, credentials.token);

    const results = {
      finishedAt: new Date().toISOString(),
      command: "npm run bench",
      machine: machine(),
      load: LOAD,
      migrations,
      // The machine may be shared (other builds, tests): the 1/5/15-minute load averages give context.
      loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x)).join(" ") },
      benchA: a,
      benchB: { ...b, statistics: analyzed ? "PRAGMA optimize after seeding" : "none (as after the migrations)" },
      startup: {
        profile: startupProfile,
        bundle: bundleInventory(appModules),
        wasm: { atStartup: wasmCalls.filter((c) => c.phase === "startup").length, calls: wasmCalls, afterExpression: wasmAfter },
      },
      totalSeconds: seconds(),
    };
    writeFileSync(join(benchDir, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
    step("done; .bench/results.json written. Summary for docs/benchmarks.md:\n");
    console.log(markdownSummary(results));
  } finally {
    await stop();
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
