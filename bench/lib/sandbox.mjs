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

async function timed(url, headers) {
  const started = performance.now();
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url.pathname} answered ${response.status}`);
  return performance.now() - started;
}

/** Probes until `done()` says stop; returns the latencies of both routes. */
async function probe(url, auth, done) {
  const health = [];
  const categories = [];
  while (!(await done())) {
    health.push(await timed(new URL("/health", url), {}));
    categories.push(await timed(new URL("/Categories", url), auth));
  }
  return { health: summary(health), categories: summary(categories) };
}

export async function runSandboxSection({ root, benchDir, appModules, credentials, step }) {
  const { mf, url, db } = await startAppMiniflare({ root, stateDir: join(benchDir, "sandbox-state"), appModules, credentials });
  const auth = { authorization: `Bearer ${credentials.token}` };
  const results = [];
  try {
    await applyMigrations(db, root);
    step(`sandbox: idle baseline (${IDLE_MS / 1000} s of probes)`);
    const until = Date.now() + IDLE_MS;
    results.push({ library: "(none: idle)", ...(await probe(url, auth, async () => Date.now() > until)) });
    for (const file of HOSTILE_LIBRARIES) {
      step(`sandbox: ${file}`);
      const form = new FormData();
      form.append("Name", `bench-${file.replace(/\W/g, "-")}-${Date.now()}`);
      form.append("DisplayName", file);
      const source = readFileSync(join(root, "test", "fixtures", "hostile-libraries", file), "utf8");
      form.append("File", new File([source], file, { type: "text/javascript" }));
      const started = performance.now();
      const created = await fetch(new URL("/Indices", url), { method: "POST", headers: { ...auth, "api-version": "1.1" }, body: form });
      if (created.status !== 201) throw new Error(`POST /Indices answered ${created.status}: ${await created.text()}`);
      const { id } = await created.json();
      let index;
      const probes = await probe(url, auth, async () => {
        index = await (await fetch(new URL(`/Indices/${id}`, url), { headers: auth })).json();
        return index.status !== "Synchronizing" && index.status !== "Pending";
      });
      const runMs = round(performance.now() - started, 0);
      const outcome = `${index.status}: ${index.lastSynchronization?.message ?? ""}`.slice(0, 160);
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
      `${r.categories.p50} / ${r.categories.p99} / ${r.categories.max} | ${r.outcome ?? ""} |`,
  );
  return [
    `\`${record.command}\` (${record.finishedAt}, load average ${record.loadAverage.before} -> ${record.loadAverage.after})`,
    "",
    "| library | run ms | probes | /health p50 / p99 / max ms | /Categories p50 / p99 / max ms | outcome |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
