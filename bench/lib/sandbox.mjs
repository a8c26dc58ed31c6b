// Sandbox bench (issue 32, "User code never holds the thread"): while a hostile custom index library
// runs in the index's Durable Object, how long do other requests wait? One Miniflare (workerd) with
// the deployed bundle; for each library of test/fixtures/hostile-libraries (and an idle baseline), the
// library is POSTed as a new index and, until its synchronisation ends, GET /health and GET /Categories
// are sent one after the other, back to back (a closed loop: every answer that takes long is a request
// the run held). Reports p50/p99/max of both, the probes answered during the run and how the run ended.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { median, round } from "./load.mjs";

export const HOSTILE_LIBRARIES = ["log-flood.js", "busy-loop.js", "yielding-loop.js"];
/** The idle baseline probes this long with no library running. */
const IDLE_MS = 5_000;

const percentile = (values, p) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const summary = (ms) => ({
  count: ms.length,
  p50: round(median(ms), 1),
  p99: round(percentile(ms, 99), 1),
  max: round(Math.max(0, ...ms), 1),
});

/** One request's time; a failed one (an error status or a broken connection) is counted in `failures`. */
async function timed(url, headers, failures) {
  const started = performance.now();
  try {
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (!response.ok) failures.push(`${url.pathname}: ${response.status}`);
  } catch (error) {
    failures.push(`${url.pathname}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
  }
  return performance.now() - started;
}

/** Probes until `done()` says stop; returns the latencies of both routes and the failures. */
async function probe(url, auth, done) {
  const health = [];
  const categories = [];
  const failures = [];
  for (;;) {
    let finished;
    try {
      finished = await done();
    } catch (error) {
      failures.push(`GET /Indices/{id}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
      if (failures.length > 20) break;
      continue;
    }
    if (finished) break;
    health.push(await timed(new URL("/health", url), {}, failures));
    categories.push(await timed(new URL("/Categories", url), auth, failures));
    if (failures.length > 20) break;
  }
  return { health: summary(health), categories: summary(categories), failures };
}

export async function runSandboxSection({ root, benchDir, appModules, credentials, step }) {
  const { mf, url, db } = await startAppMiniflare({ root, stateDir: join(benchDir, "sandbox-state"), appModules, credentials });
  const auth = { authorization: `Bearer ${credentials.token}` };
  const results = [];
  /** Posts a library as a new index; `done()` says whether its synchronisation ended (and returns the index). */
  const post = async (name, source) => {
    const form = new FormData();
    form.append("Name", `bench-${name.replace(/\W/g, "-")}-${Date.now()}`);
    form.append("DisplayName", name);
    form.append("File", new File([source], name, { type: "text/javascript" }));
    const created = await fetch(new URL("/Indices", url), { method: "POST", headers: { ...auth, "api-version": "1.1" }, body: form });
    if (created.status !== 201) throw new Error(`POST /Indices answered ${created.status}: ${await created.text()}`);
    const { id } = await created.json();
    const state = { index: undefined };
    state.done = async () => {
      state.index = await (await fetch(new URL(`/Indices/${id}`, url), { headers: auth })).json();
      return state.index.status !== "Synchronizing" && state.index.status !== "Pending";
    };
    return state;
  };
  try {
    await applyMigrations(db, root);
    // A warm server: the first library run of an isolate compiles QuickJS's WebAssembly functions.
    step("sandbox: warm-up (one honest library)");
    const warm = await post("warm-up.js", readFileSync(join(root, "examples", "search", "equipment-deviations.js"), "utf8"));
    while (!(await warm.done())) await new Promise((resolve) => setTimeout(resolve, 100));
    step(`sandbox: idle baseline (${IDLE_MS / 1000} s of probes)`);
    const until = Date.now() + IDLE_MS;
    results.push({ library: "(none: idle)", ...(await probe(url, auth, async () => Date.now() > until)) });
    for (const file of HOSTILE_LIBRARIES) {
      step(`sandbox: ${file}`);
      const started = performance.now();
      const run = await post(file, readFileSync(join(root, "test", "fixtures", "hostile-libraries", file), "utf8"));
      const probes = await probe(url, auth, run.done);
      const index = run.index;
      const runMs = round(performance.now() - started, 0);
      const outcome = (
        index ? `${index.status}: ${index.lastSynchronization?.message ?? ""}` : `unknown (${probes.failures.slice(0, 3).join("; ")})`
      ).slice(0, 160);
      if (probes.failures.length > 0) console.log(`  ${probes.failures.length} failed requests: ${probes.failures.slice(0, 5).join("; ")}`);
      console.log(`  run ${runMs} ms, ${outcome}`);
      console.log(`  /health ${JSON.stringify(probes.health)}; /Categories ${JSON.stringify(probes.categories)}`);
      results.push({ library: file, runMs, outcome, ...probes });
    }
  } finally {
    await mf.dispose();
  }
  return { sandbox: results };
}

/** The table for docs/benchmarks.md. */
export function sandboxSummary(result, record) {
  const rows = result.sandbox.map(
    (r) =>
      `| ${r.library} | ${r.runMs ?? "-"} | ${r.health.count} | ${r.health.p50} / ${r.health.p99} / ${r.health.max} | ` +
      `${r.categories.p50} / ${r.categories.p99} / ${r.categories.max} | ${r.failures.length} | ${r.outcome ?? ""} |`,
  );
  return [
    `\`${record.command}\` (${record.finishedAt}, load average ${record.loadAverage.before} -> ${record.loadAverage.after})`,
    "",
    "| library | run ms | probes | /health p50 / p99 / max ms | /Categories p50 / p99 / max ms | failed | outcome |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
