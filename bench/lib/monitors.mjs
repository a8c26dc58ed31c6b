// Monitors bench (issue 9): the minute dispatcher with monitors, and the read of one monitor.
// 1. 10,000 Active monitors with trigger schedules, 1,000 of them due in one minute: the scheduled
//    tick's wall time and workerd's CPU time, each due monitor job started exactly once (a duplicated
//    tick starts nothing new; every container group started once).
// 2. The same with 100,000 monitors (another 1,000 due later): the ratio of the two tick times
//    (target <= 1.5), since due monitors are found by the next-run index.
// 3. GET /Monitors/{id} (inherited fields) against GET /Deviations/{id} in alternating rounds (>= 0.8x).
// The container host is the stub of bench/lib/jobs.mjs (groups start at once and succeed).
import { join } from "node:path";
import { webcrypto } from "node:crypto";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { startStubHost, workerdCpuSeconds } from "./jobs.mjs";
import { measureRounds, round } from "./load.mjs";

export const MONITOR_BENCH = { monitors: [10_000, 100_000], due: 1_000 };

async function seedMonitors(db, { from, count, due, dueAt, later, modelRef }) {
  const now = new Date().toISOString();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO monitors (id, monitor_id, name, model_ref, status, trigger_schedule, controllers, owner_id, etag, created_at, updated_at)
       SELECT printf('00000000-0000-4000-9000-%012d', i), 'MON-B' || i, 'bench monitor ' || i, ?3, 'Active', '0 9 * * *', '[]', 'bench-owner', 'e', ?4, ?4 FROM n`,
    )
    .bind(from, from + count - 1, modelRef, now)
    .run();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO schedules (kind, owner_id, rule, next_run_at, attempts, updated_at)
       SELECT 'monitor', printf('00000000-0000-4000-9000-%012d', i), '{"cron":"0 9 * * *","timeZone":null}', CASE WHEN i < ?1 + ?3 THEN ?4 ELSE ?5 END, 0, ?6 FROM n`,
    )
    .bind(from, from + count - 1, due, dueAt, later, now)
    .run();
}

export async function runMonitorsSection({ root, benchDir, appModules, credentials, step }) {
  const stateDir = join(benchDir, "monitors-state");
  const host = await startStubHost([{ name: "bench/model", tag: "1" }]);
  const { mf, url, db, worker } = await startAppMiniflare({
    root,
    stateDir,
    appModules,
    credentials,
    bindings: { CONTAINER_HOST_KIND: "local", LOCAL_CONTAINER_HOST_URL: host.url, LOCAL_CONTAINER_HOST_SECRET: "bench-stub", DATAPROCESSING_ENCRYPTION_KEY: `1:${Buffer.from(webcrypto.getRandomValues(new Uint8Array(32))).toString("base64")}` },
  });
  try {
    const token = credentials.token;
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    await applyMigrations(db, root);
    const post = async (path, body) => {
      const res = await fetch(new URL(path, url), { method: "POST", headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    await post("/ModelDefinitions", { name: "bench/model", version: "1", location: "ACR" });
    const model = await post("/Models", { name: "bench model", modelDefinitionName: "bench/model", modelDefinitionVersion: "1", status: "Active", cpuCores: 1, memory: 1, configurableParameters: { THRESHOLD: "0.5" }, staticParameters: { REGION: "north" } });
    const population = await post(`/Models/${model.id}/Populations`, { name: "plants", assetType: "Plant" });
    const plant = await post("/Assets", { name: "bench plant", kind: "plant" });
    await post(`/Models/${model.id}/Populations/${population.id}/Items`, { assetReference: { id: plant.id } });

    const counted = async () => (await db.prepare("SELECT count(*) AS n, count(DISTINCT run_key) AS k FROM monitor_jobs WHERE run_key IS NOT NULL").first()) ?? { n: 0, k: 0 };
    async function tick(at) {
      const cpu0 = workerdCpuSeconds();
      const t0 = performance.now();
      await worker.scheduled({ scheduledTime: new Date(at), cron: "* * * * *" });
      return { wallMs: round(performance.now() - t0, 0), cpuMs: round((workerdCpuSeconds() - cpu0) * 1000, 0) };
    }
    const dispatches = [];
    let from = 1;
    let dueAt = new Date("2027-03-01T09:00:00.000Z");
    for (const total of MONITOR_BENCH.monitors) {
      const adding = total - (from - 1);
      step(`monitors: seeding ${adding.toLocaleString("en")} monitors (${MONITOR_BENCH.due} due at ${dueAt.toISOString()}), ${total.toLocaleString("en")} in all`);
      await seedMonitors(db, { from, count: adding, due: MONITOR_BENCH.due, dueAt: dueAt.toISOString(), later: "2030-01-07T09:00:00.000Z", modelRef: model.id });
      from += adding;
      const before = await counted();
      step(`monitors: the tick at ${dueAt.toISOString()} (and the same tick delivered again)`);
      const first = await tick(dueAt.getTime() + 5_000);
      const again = await tick(dueAt.getTime() + 5_000);
      const after = await counted();
      const started = after.n - before.n;
      console.log(`  ${total.toLocaleString("en")} monitors: tick ${first.wallMs} ms wall, ${first.cpuMs} ms workerd CPU; ${started} monitor jobs (${after.k - before.k} distinct run keys); the repeated tick ${again.wallMs} ms`);
      if (started !== MONITOR_BENCH.due || after.k - before.k !== MONITOR_BENCH.due) throw new Error(`expected ${MONITOR_BENCH.due} monitor jobs started once each, got ${started}`);
      dispatches.push({ monitors: total, due: MONITOR_BENCH.due, tickWallMs: first.wallMs, tickCpuMs: first.cpuMs, repeatedTickWallMs: again.wallMs, monitorJobs: started });
      // The next set is due an hour later: the daily schedules just run come round the next day.
      dueAt = new Date(dueAt.getTime() + 3600_000);
    }
    const startedTwice = [...host.starts.values()].filter((n) => n > 1).length;
    console.log(`  container groups started: ${host.starts.size}, started more than once: ${startedTwice}`);
    if (startedTwice > 0) throw new Error(`${startedTwice} container groups were started more than once`);

    step("monitors: GET /Monitors/{id} (inherited fields) vs GET /Deviations/{id} (alternating rounds)");
    const monitor = await post("/Monitors", { name: "read bench", modelId: model.id });
    const deviation = await post("/Deviations", { description: "bench deviation" });
    const auth = { authorization: `Bearer ${token}` };
    const [monitorRead, deviationRead] = await measureRounds([
      { label: "GET /Monitors/{id}", url: new URL(`/Monitors/${monitor.id}`, url), headers: auth },
      { label: "GET /Deviations/{id}", url: new URL(`/Deviations/${deviation.id}`, url), headers: auth },
    ]);
    const readRatio = round(monitorRead.reqPerSec / deviationRead.reqPerSec, 2);
    console.log(`  GET /Monitors/{id} ${monitorRead.reqPerSec} req/s, GET /Deviations/{id} ${deviationRead.reqPerSec} req/s: ratio ${readRatio} (target >= 0.8)`);
    const [small, large] = dispatches;
    const dispatchRatio = round(large.tickWallMs / small.tickWallMs, 2);
    console.log(`  dispatch ${large.monitors.toLocaleString("en")} vs ${small.monitors.toLocaleString("en")} monitors: ratio ${dispatchRatio} (target <= 1.5)`);
    return { dispatches, dispatchRatio, dispatchTarget: 1.5, containerGroupsStarted: host.starts.size, startedMoreThanOnce: startedTwice, monitorRead, deviationRead, readRatio, readTarget: 0.8 };
  } finally {
    await mf.dispose().catch(() => undefined);
    await host.close();
  }
}
