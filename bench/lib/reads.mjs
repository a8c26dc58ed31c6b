// Reads (issue 22): `npm run bench -- --only reads`.
// 1. Bench A as in the core run (GET /PropertyDefinitions/{id}: the full Worker against
//    bench/minimal-worker.js, one select and Response.json), in alternating autocannon rounds, with
//    the workerd CPU time per request of each (bench/lib/cpu.mjs) beside req/s.
// 2. The price of each layer of that read: bench-only builds of the bundle with one layer taken out
//    (bench/lib/layers.mjs). Each build, the full Worker and the minimal one answer the read N times
//    in a row inside their isolate (D1 answered from memory after the first time, so the local D1's
//    cost and noise are out) and workerd's CPU time around that is divided by N, in alternating
//    rounds that each start at another build; a layer's price is the full Worker's figure minus the
//    variant's, median over the rounds. Some builds are also looped with the real local D1.
// 3. GET /Deviations/{id} against GET /Jobs/{id} in the same alternating autocannon rounds (target:
//    the deviation read at least 0.8x the job read's rate, round by round): a deviation with nothing
//    linked, and one showing everything a deviation can (two type properties, designated assets, a
//    relationship, a work item link); and the same three reads looped inside the isolate with the
//    real D1 (CPU per request).
// Everything runs in ONE Miniflare (direct sockets, never `wrangler dev`) over one D1 database, with
// the stub container host of bench/lib/jobs.mjs so that a job is started for real. The bundle is built
// into .bench/reads-build, so a bench of another section running at the same time keeps its own.
// Knobs: BENCH_READS_PARTS (a,layers,reads), BENCH_LAYER_ROUNDS (15), BENCH_LOOP_REQUESTS (1000),
// BENCH_REAL_LOOPS (builds also looped with the real D1), and those of bench/lib/load.mjs.
import { webcrypto } from "node:crypto";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { LOOPBACK, appWorkerOptions, benchAppBindings, benchMiniflareBase } from "./app-miniflare.mjs";
import { buildWorkerBundle } from "./build.mjs";
import { ownWorkerdCpuSeconds } from "./cpu.mjs";
import { applyMigrations } from "./db.mjs";
import { startStubHost } from "./jobs.mjs";
import { writeLayerVariants, writeMinimalLoop } from "./layers.mjs";
import { LOAD, measureRounds, median, round, roundRatio } from "./load.mjs";

export const READS = {
  parts: (process.env.BENCH_READS_PARTS ?? "a,layers,reads").split(","),
  layerRounds: Number(process.env.BENCH_LAYER_ROUNDS ?? 15),
  loopRequests: Number(process.env.BENCH_LOOP_REQUESTS ?? 1000),
  realLoops: (process.env.BENCH_REAL_LOOPS ?? "full,no-session,skeleton,minimal").split(","),
};

/** workerd CPU µs per request of `n` requests of `path` answered inside the isolate (bench/lib/layers.mjs). */
async function loopCpu(base, path, headers, n, db = "replay", attempt = 1) {
  const before = ownWorkerdCpuSeconds();
  let res;
  try {
    res = await fetch(new URL(`/__bench/loop?n=${n}&db=${db}&path=${encodeURIComponent(path)}`, base), { headers });
  } catch (error) {
    // A kept-alive socket that workerd closed meanwhile: measure again on a fresh one.
    if (attempt < 3) return loopCpu(base, path, headers, n, db, attempt + 1);
    throw error;
  }
  const text = await res.text();
  const after = ownWorkerdCpuSeconds();
  if (res.status !== 200 || JSON.parse(text).status !== 200)
    throw new Error(`loop of ${path} at ${base}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return ((after - before) * 1e6) / n;
}

/**
 * Loops `targets` ({ name, base, headers, path, db, n }) in `rounds` rounds, each round starting at
 * another target (the position in a round costs something; it is spread over all of them).
 * Returns the µs per request of each target, round by round.
 */
async function loopRounds(targets, rounds) {
  for (const t of targets) await loopCpu(t.base, t.path, t.headers, Math.ceil(t.n / 4), t.db);
  const figures = targets.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < targets.length; k++) {
      const i = (k + r * 5) % targets.length;
      const t = targets[i];
      figures[i].push(await loopCpu(t.base, t.path, t.headers, t.n, t.db));
    }
  }
  return figures;
}

const summary = (values) => ({ us: round(median(values), 1), rounds: values.map((x) => round(x, 1)) });

function api(base, token) {
  return async (method, path, body) => {
    const res = await fetch(new URL(path, base), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 400)}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/** A deviation showing everything a deviation can: type properties, designations, a relationship, a work item link. */
async function fullDeviation(call) {
  const severity = await call("POST", "/PropertyDefinitions", {
    name: "benchSeverity",
    format: "integer",
    unit: "metre",
    applicationRule: "Deviation",
  });
  const area = await call("POST", "/PropertyDefinitions", { name: "benchArea", format: "text", applicationRule: "Deviation" });
  const type = await call("POST", "/DeviationTypes", {
    name: "Bench corrosion",
    icon: { name: "corrosion", color: "#FF8800" },
    propertyDefinitions: [{ id: severity.id }, { id: area.id }],
  });
  const plant = await call("POST", "/Assets", { kind: "plant", name: "Bench plant", parentId: null });
  const mainSystem = await call("POST", "/Assets", { kind: "mainSystem", name: "Bench main system", parentId: plant.id });
  const equipment = await call("POST", "/Assets", { kind: "equipment", name: "Bench pump", parentId: mainSystem.id });
  const other = await call("POST", "/Deviations", { description: "bench related deviation" });
  const deviation = await call("POST", "/Deviations", {
    description: "bench deviation with everything",
    typeId: type.id,
    assetReference: { mainSystem: { id: mainSystem.id }, equipment: { id: equipment.id } },
    properties: [
      { name: "benchSeverity", value: 4 },
      { name: "benchArea", value: "north" },
    ],
    relationships: [{ id: other.id }],
  });
  const workItem = await call("POST", "/WorkItems", { displayName: "bench work item" });
  await call("POST", `/Deviations/${deviation.id}/WorkItems/${workItem.id}`);
  return deviation;
}

async function benchA({ aPath, appUrl, minimalUrl, url, auth, step }) {
  step("bench A: full Worker vs minimal Worker (alternating rounds, server CPU per request)");
  // A third target: the same bundle at LOG_LEVEL=warn, i.e. without its request line, to show what
  // that line costs end to end here (locally, a write to workerd's stdout pipe per line).
  const [minimal, full, quiet] = await measureRounds(
    [
      { label: "minimal Worker", url: new URL(aPath, minimalUrl) },
      { label: "full Worker", url: new URL(aPath, appUrl), headers: auth },
      { label: "full Worker, LOG_LEVEL=warn (no request line)", url: new URL(aPath, await url("app-quiet")), headers: auth },
    ],
    { cpuSeconds: ownWorkerdCpuSeconds },
  );
  const perRound = (f) => f.rounds.map((x, i) => round(x.reqPerSec / minimal.rounds[i].reqPerSec, 3));
  const cpuRatio = (f) => round(median(f.rounds.map((x, i) => minimal.rounds[i].cpuUsPerRequest / x.cpuUsPerRequest)), 3);
  const result = {
    path: aPath,
    minimal,
    full,
    quiet,
    ratio: roundRatio(full, minimal, (x) => x.reqPerSec),
    perRound: perRound(full),
    cpuRatio: cpuRatio(full),
    quietRatio: roundRatio(quiet, minimal, (x) => x.reqPerSec),
    quietPerRound: perRound(quiet),
    quietCpuRatio: cpuRatio(quiet),
    target: { median: 0.9, everyRound: 0.8 },
  };
  console.log(
    `  ratio full/minimal (req/s): ${result.ratio}; rounds ${result.perRound.join(", ")}; by CPU per request: ${result.cpuRatio}`,
  );
  console.log(
    `  without the request line: ${result.quietRatio}; rounds ${result.quietPerRound.join(", ")}; by CPU per ` +
      `request: ${result.quietCpuRatio}`,
  );
  return result;
}

async function layerPrices({ aPath, variants, url, auth, step }) {
  step(
    `layers: ${READS.loopRequests} reads in a row inside the isolate, per build (${variants.length} builds and the ` +
      `minimal Worker, ${READS.layerRounds} rounds)`,
  );
  const builds = [
    ...(await Promise.all(variants.map(async (v) => ({ name: v.name, base: await url(`layer-${v.name}`), headers: auth })))),
    { name: "minimal", base: await url("minimal-loop"), headers: {} },
  ];
  // The real-D1 loops run a quarter as many requests: each costs about eight times as much.
  const targets = [
    ...builds.map((b) => ({ ...b, path: aPath, db: "replay", n: READS.loopRequests })),
    ...builds
      .filter((b) => READS.realLoops.includes(b.name))
      .map((b) => ({ ...b, path: aPath, db: "real", n: Math.ceil(READS.loopRequests / 4) })),
  ];
  const figures = await loopRounds(targets, READS.layerRounds);
  const of = (name, db = "replay") => figures[targets.findIndex((t) => t.name === name && t.db === db)];
  const priceOf = (v, db) => {
    const own = of(v.name, db);
    const full = of("full", db);
    return summary(own.map((x, r) => (v.adds ? x - full[r] : full[r] - x)));
  };
  const layers = variants
    .filter((v) => v.name !== "full")
    .map((v) => ({
      variant: v.name,
      layer: v.layer,
      added: Boolean(v.adds),
      cpuUsPerRequest: round(median(of(v.name)), 1),
      price: priceOf(v, "replay"),
      ...(READS.realLoops.includes(v.name) && READS.realLoops.includes("full") ? { priceRealD1: priceOf(v, "real") } : {}),
    }));
  const loops = {
    requestsPerLoop: READS.loopRequests,
    rounds: READS.layerRounds,
    full: summary(of("full")),
    minimal: summary(of("minimal")),
    realD1: Object.fromEntries(READS.realLoops.filter((n) => of(n, "real")).map((n) => [n, summary(of(n, "real"))])),
  };
  console.log(`  in the isolate: full Worker ${loops.full.us} µs per request, minimal ${loops.minimal.us} µs`);
  for (const l of layers)
    console.log(
      `  ${l.variant}: ${l.price.us} µs per request (rounds ` +
        `${l.price.rounds.join(", ")})${l.priceRealD1 ? `; with the real D1 ${l.priceRealD1.us} µs` : ""}`,
    );
  console.log(
    `  with the real D1: ${Object.entries(loops.realD1)
      .map(([n, s]) => `${n} ${s.us} µs`)
      .join(", ")}`,
  );
  return { loops, layers };
}

async function deviationVsJob({ call, db, appUrl, url, auth, step }) {
  step("reads: GET /Jobs/{id} vs GET /Deviations/{id} (alternating rounds)");
  const config = await call("POST", "/JobConfigurations", {
    name: "bench read config",
    jobDefinition: "bench/model:1",
    runConfigs: { cpuCores: 1, memory: 1, gpuCores: null, gpuSku: null },
    runOptions: { MODE: "bench" },
    runCommand: null,
  });
  await call("POST", `/Jobs/Execution/${config.id}`);
  const job = await db.prepare("SELECT id FROM jobs LIMIT 1").first();
  const bare = await call("POST", "/Deviations", { description: "bench deviation" });
  const everything = await fullDeviation(call);
  const paths = { job: `/Jobs/${job.id}`, bare: `/Deviations/${bare.id}`, full: `/Deviations/${everything.id}` };
  const [jobRead, bareRead, fullRead] = await measureRounds(
    [
      { label: "GET /Jobs/{id}", url: new URL(paths.job, appUrl), headers: auth },
      { label: "GET /Deviations/{id} (nothing linked)", url: new URL(paths.bare, appUrl), headers: auth },
      { label: "GET /Deviations/{id} (everything shown)", url: new URL(paths.full, appUrl), headers: auth },
    ],
    { cpuSeconds: ownWorkerdCpuSeconds },
  );
  const ratios = (read) => ({
    median: roundRatio(read, jobRead, (x) => x.reqPerSec),
    rounds: read.rounds.map((x, i) => round(x.reqPerSec / jobRead.rounds[i].reqPerSec, 3)),
  });
  // The same three reads looped inside the isolate with the real D1: CPU per request, the noise of HTTP out.
  const base = await url("layer-full");
  const n = Math.ceil(READS.loopRequests / 4);
  const looped = await loopRounds(
    Object.values(paths).map((path) => ({ base, path, headers: auth, db: "real", n })),
    Math.min(READS.layerRounds, 9),
  );
  const [jobLoop, bareLoop, fullLoop] = looped;
  const result = {
    paths,
    job: jobRead,
    bare: bareRead,
    full: fullRead,
    bareRatio: ratios(bareRead),
    fullRatio: ratios(fullRead),
    loopedRealD1: {
      job: summary(jobLoop),
      bare: summary(bareLoop),
      full: summary(fullLoop),
      bareCpuRatio: round(median(jobLoop.map((x, r) => x / bareLoop[r])), 3),
      fullCpuRatio: round(median(jobLoop.map((x, r) => x / fullLoop[r])), 3),
    },
    target: 0.8,
  };
  const l = result.loopedRealD1;
  console.log(
    `  deviation/job (req/s): nothing linked ${result.bareRatio.median} (rounds ` +
      `${result.bareRatio.rounds.join(", ")}), everything shown ${result.fullRatio.median} (rounds ` +
      `${result.fullRatio.rounds.join(", ")})`,
  );
  console.log(
    `  looped with the real D1: job ${l.job.us} µs, deviation ${l.bare.us} / ${l.full.us} µs per request; ` +
      `job/deviation CPU ${l.bareCpuRatio} / ${l.fullCpuRatio}`,
  );
  return result;
}

export async function runReadsSection({ root, benchDir, credentials, step }) {
  step("building the Worker bundle (wrangler deploy --dry-run) into .bench/reads-build and its layer variants");
  const appModules = buildWorkerBundle(root, join(benchDir, "reads-build"));
  const variants = writeLayerVariants(appModules, join(benchDir, "reads-variants"));
  const minimalLoop = writeMinimalLoop(join(root, "bench", "minimal-worker.js"), join(benchDir, "reads-variants", "minimal"));
  const host = await startStubHost();
  const stateDir = join(benchDir, "reads-state");
  const app = appWorkerOptions(root);
  const bindings = benchAppBindings(app, credentials, {
    CONTAINER_HOST_KIND: "local",
    LOCAL_CONTAINER_HOST_URL: host.url,
    LOCAL_CONTAINER_HOST_SECRET: "bench-stub",
    DATAPROCESSING_ENCRYPTION_KEY: `1:${Buffer.from(webcrypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
  });
  // A queue has one consumer: the app Worker. The variants only produce.
  const { queueConsumers: _consumers, ...variantOptions } = app;
  const socket = [{ host: LOOPBACK, port: 0 }];
  const worker = (name, modules, extra = {}) => ({
    name,
    modulesRoot: join(modules[0].path, ".."),
    modules,
    bindings: { ...bindings, ...extra },
    unsafeDirectSockets: socket,
  });
  // As in the core run, LOG_LEVEL is wrangler.toml's (info); workerd's output is dropped unless BENCH_WORKERD_LOG=1.
  const mf = new Miniflare({
    ...benchMiniflareBase(stateDir),
    workers: [
      { ...app, ...worker("app", appModules) },
      { ...variantOptions, ...worker("app-quiet", appModules, { LOG_LEVEL: "warn" }) },
      ...variants.map((v) => ({ ...variantOptions, ...worker(`layer-${v.name}`, v.modules, v.bindings) })),
      {
        name: "minimal",
        compatibilityDate: app.compatibilityDate,
        modules: true,
        scriptPath: join(root, "bench", "minimal-worker.js"),
        d1Databases: app.d1Databases,
        unsafeDirectSockets: socket,
      },
      {
        name: "minimal-loop",
        compatibilityDate: app.compatibilityDate,
        modulesRoot: join(minimalLoop[0].path, ".."),
        modules: minimalLoop,
        d1Databases: app.d1Databases,
        unsafeDirectSockets: socket,
      },
    ],
  });
  try {
    step(`starting Miniflare: the app, ${variants.length} builds with the loop entry, the minimal Worker`);
    await mf.ready;
    const url = async (name) => {
      const u = await mf.unsafeGetDirectURL(name);
      if (u.hostname !== LOOPBACK) throw new Error(`${name} listens on ${u.host}, not on loopback`);
      return u;
    };
    const appUrl = await url("app");
    const minimalUrl = await url("minimal");
    const db = await mf.getD1Database("DB", "app");
    await applyMigrations(db, root);
    const call = api(appUrl, credentials.token);
    const auth = { authorization: `Bearer ${credentials.token}` };

    // Bench A's row, read by every Worker from the same database; each answers it before anything is measured.
    const definition = await call("POST", "/PropertyDefinitions", { name: "benchProbe", format: "text", applicationRule: "Deviation" });
    const aPath = `/PropertyDefinitions/${definition.id}`;
    for (const [name, base, headers] of [
      ["minimal", minimalUrl, {}],
      ...(await Promise.all(variants.map(async (v) => [v.name, await url(`layer-${v.name}`), auth]))),
    ]) {
      const res = await fetch(new URL(aPath, base), { headers });
      const body = await res.json();
      if (res.status !== 200 || body.id !== definition.id)
        throw new Error(`${name}: GET ${aPath}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    const context = { aPath, appUrl, minimalUrl, url, auth, call, db, variants, step };
    return {
      benchA: READS.parts.includes("a") ? await benchA(context) : undefined,
      ...(READS.parts.includes("layers") ? await layerPrices(context) : {}),
      reads: READS.parts.includes("reads") ? await deviationVsJob(context) : undefined,
    };
  } finally {
    await mf.dispose().catch(() => undefined);
    await host.close();
  }
}

/** The markdown for docs/benchmarks.md. */
export function readsSummary(result, { command, loadAverage, finishedAt }) {
  const row = (f) => `| ${f.label} | ${f.reqPerSec} | ${f.latencyMs.p50} | ${f.latencyMs.p99} | ${f.cpuUsPerRequest} | ${f.requests} |`;
  const head = ["| target | req/s | p50 ms | p99 ms | workerd CPU µs/request | requests |", "| --- | ---: | ---: | ---: | ---: | ---: |"];
  const met = (ok) => (ok ? "met" : "**NOT met**");
  const lines = [
    `Run ${finishedAt} (\`${command}\`); load average before/after: ${loadAverage.before} / ${loadAverage.after}; ` +
      `autocannon ${LOAD.connections} connections, ${LOAD.rounds} alternating rounds of ${LOAD.duration} s after a ` +
      `${LOAD.warmup} s warm-up.`,
  ];
  const a = result.benchA;
  if (a) {
    lines.push(
      "",
      "Bench A:",
      "",
      ...head,
      row(a.minimal),
      row(a.full),
      row(a.quiet),
      "",
      `Ratio full/minimal (req/s): **${a.ratio}** (median >= ${a.target.median}: ${met(a.ratio >= a.target.median)}; ` +
        `every round >= ${a.target.everyRound}: ${met(Math.min(...a.perRound) >= a.target.everyRound)}); per round: ` +
        `${a.perRound.join(", ")}. By workerd CPU per request: ${a.cpuRatio}.`,
      `Without the request log line (LOG_LEVEL=warn): ${a.quietRatio} (per round: ${a.quietPerRound.join(", ")}); by ` +
        `workerd CPU per request: ${a.quietCpuRatio}.`,
    );
  }
  if (result.layers) {
    const l = result.loops;
    lines.push(
      "",
      `Layers: ${l.rounds} rounds of ${l.requestsPerLoop} reads in a row inside each build's isolate (D1 replayed ` +
        `from memory): the full Worker ${l.full.us} µs of workerd CPU per request, the minimal Worker ${l.minimal.us} ` +
        `µs. A layer's price is the full Worker's figure minus the build without it (median of the per-round ` +
        `differences; "with the real D1": the same with every request a query to the local D1):`,
      "",
      "| layer | µs/request | per round | with the real D1 |",
      "| --- | ---: | --- | ---: |",
      ...result.layers.map(
        (x) =>
          `| ${x.layer}${x.added ? " (added: the build with it minus the full Worker)" : ""} | ${x.price.us} | ` +
          `${x.price.rounds.join(", ")} | ${x.priceRealD1?.us ?? ""} |`,
      ),
      "",
      `With the real D1 (µs of workerd CPU per request): ${Object.entries(l.realD1)
        .map(([n, s]) => `${n} ${s.us}`)
        .join(", ")}.`,
    );
  }
  const r = result.reads;
  if (r) {
    const x = r.loopedRealD1;
    lines.push(
      "",
      "Reads:",
      "",
      ...head,
      row(r.job),
      row(r.bare),
      row(r.full),
      "",
      `Deviation/job (req/s, median of per-round ratios): nothing linked **${r.bareRatio.median}** (rounds ` +
        `${r.bareRatio.rounds.join(", ")}), everything shown **${r.fullRatio.median}** (rounds ` +
        `${r.fullRatio.rounds.join(", ")}); target >= ${r.target}: ` +
        `${met(r.bareRatio.median >= r.target && r.fullRatio.median >= r.target)}.`,
      `Looped inside the isolate with the real D1 (µs of workerd CPU per request): job ${x.job.us}, deviation nothing ` +
        `linked ${x.bare.us}, everything shown ${x.full.us}; the deviation read's rate relative to the job's by CPU: ` +
        `${x.bareCpuRatio} and ${x.fullCpuRatio}.`,
    );
  }
  return lines.join("\n");
}
