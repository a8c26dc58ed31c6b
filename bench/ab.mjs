// A/B of builds on bench A's read: `node bench/ab.mjs <outdir> [<outdir> ...]`, each outdir a bundle
// made by `npx wrangler deploy --dry-run --outdir <outdir>` (on two commits, or one patched by hand).
// Every build and the minimal Worker (bench/minimal-worker.js) run in ONE Miniflare over one D1
// database (bare workerd on direct sockets, never `wrangler dev`) and answer
// GET /PropertyDefinitions/{id} in the same alternating autocannon rounds (bench/lib/load.mjs);
// printed per build: req/s, its ratio to the minimal Worker (median of the rounds' ratios) and the
// workerd CPU per request (bench/lib/cpu.mjs), the figure a shared machine disturbs least. A round's
// CPU per read swings by about ±15 µs here, so compare medians over 10 rounds or more
// (BENCH_ROUNDS=12). This is how the reads passes of docs/benchmarks.md priced their changes.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { appWorkerOptions, benchAppBindings, benchMiniflareBase, LOOPBACK, minimalWorkerOptions } from "./lib/app-miniflare.mjs";
import { benchCredentials } from "./lib/auth.mjs";
import { bundleModules } from "../scripts/bundle-modules.mjs";
import { ownWorkerdCpuSeconds } from "./lib/cpu.mjs";
import { applyMigrations } from "./lib/db.mjs";
import { LOAD, measureRounds, median, round } from "./lib/load.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const builds = process.argv.slice(2).map((dir) => resolve(dir));
if (builds.length === 0 || builds.some((dir) => !existsSync(join(dir, "index.js")))) {
  console.error("usage: node bench/ab.mjs <outdir> [<outdir> ...]  (each made by `npx wrangler deploy --dry-run --outdir <outdir>`)");
  process.exit(2);
}

const credentials = await benchCredentials(root);
const app = appWorkerOptions(root);
// A queue has one consumer: the first build. The others only produce.
const { queueConsumers: _consumers, ...producerOptions } = app;
// As deployed: wrangler.toml's LOG_LEVEL (info), so a quick read writes no log line.
const bindings = benchAppBindings(app, credentials);
const mf = new Miniflare({
  ...benchMiniflareBase(join(root, ".bench", "ab-state")),
  workers: [
    ...builds.map((dir, i) => {
      const modules = bundleModules(dir);
      return {
        ...(i === 0 ? app : producerOptions),
        name: `build${i}`,
        modulesRoot: join(modules[0].path, ".."),
        modules,
        bindings,
        unsafeDirectSockets: [{ host: LOOPBACK, port: 0 }],
      };
    }),
    minimalWorkerOptions(root, app),
  ],
});

try {
  await mf.ready;
  const urls = await Promise.all(builds.map((_, i) => mf.unsafeGetDirectURL(`build${i}`)));
  const minimalUrl = await mf.unsafeGetDirectURL("minimal");
  await applyMigrations(await mf.getD1Database("DB", "build0"), root);
  const auth = { authorization: `Bearer ${credentials.token}` };
  const created = await fetch(new URL("/PropertyDefinitions", urls[0]), {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "benchProbe", format: "text", applicationRule: "Deviation" }),
  });
  if (created.status !== 201) throw new Error(`POST /PropertyDefinitions: HTTP ${created.status} ${await created.text()}`);
  const path = `/PropertyDefinitions/${(await created.json()).id}`;
  const targets = [
    { label: "minimal Worker", url: new URL(path, minimalUrl) },
    ...builds.map((dir, i) => ({ label: dir, url: new URL(path, urls[i]), headers: auth })),
  ];
  console.log(`${builds.length} build(s) and the minimal Worker, ${LOAD.rounds} alternating rounds of ${LOAD.duration} s: GET ${path}`);
  const figures = await measureRounds(targets, { cpuSeconds: ownWorkerdCpuSeconds });
  const [minimal] = figures;
  for (const target of figures) {
    const cpu = target.rounds.map((r) => r.cpuUsPerRequest);
    const ratio = median(target.rounds.map((r, k) => r.reqPerSec / minimal.rounds[k].reqPerSec));
    console.log(
      `${target.label}: ${target.reqPerSec} req/s, ratio ${round(ratio, 3)}, ` +
        `CPU ${round(median(cpu), 1)} µs per request (rounds ${cpu.join(", ")})`,
    );
  }
} finally {
  await mf.dispose();
}
