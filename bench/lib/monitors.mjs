// Monitors bench (issue 9): the minute dispatcher with monitors, and the read of one monitor.
// 1. 10,000 Active monitors with trigger schedules, 1,000 of them due in one minute: the scheduled
//    tick's wall time and workerd's CPU time, each due monitor job started exactly once (a duplicated
//    tick starts nothing new; every container group started once).
// 2. The same with 100,000 monitors (another 1,000 due later): the ratio of the two tick times
//    (target <= 1.5), since due monitors are found by the next-run index.
// 3. GET /Monitors/{id} (inherited fields) against GET /Deviations/{id} in alternating rounds (>= 0.8x).
// 4. Controller evaluation (issue 25): a monitor with 100 controllers over 1,000 items, each job an
//    External model's status PUT with 6,000 variables; workerd's CPU time per job when nothing changes
//    (the steady state), when 1,000 alarms are entered (with 50 deviations and 10 work items), when
//    the same values come again, and when the 1,000 alarms are left. Since issue 33 with hysteresis:
//    pendingFor 2, clearAfter 2 and a deadband on every condition, so entering and leaving take two jobs
//    each (the first counts the streaks) and every job evaluates active alarms with their deadbands.
// The container host is the stub of bench/lib/jobs.mjs (groups start at once and succeed).
import { join } from "node:path";
import { webcrypto } from "node:crypto";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { readdirSync, readFileSync } from "node:fs";
import { startStubHost } from "./jobs.mjs";
import { measureRounds, round } from "./load.mjs";

export const MONITOR_BENCH = { monitors: [10_000, 100_000], due: 1_000 };

/**
 * CPU seconds (user + system) of the workerd processes this bench started (descendants of this
 * process), so other workerd processes on a shared machine (another vitest run, a wrangler dev) do
 * not count, nor make the difference negative when they end.
 */
export function ownWorkerdCpuSeconds() {
  const stats = new Map();
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      stats.set(Number(pid), {
        ppid: Number(fields[1]),
        workerd: stat.includes("(workerd)"),
        cpu: (Number(fields[11]) + Number(fields[12])) / 100,
      });
    } catch {
      // the process ended while being read
    }
  }
  const mine = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 50; p = stats.get(p)?.ppid ?? 0, hops++) if (p === process.pid) return true;
    return false;
  };
  let total = 0;
  for (const [pid, s] of stats) if (s.workerd && mine(pid)) total += s.cpu;
  return total;
}
const workerdCpuSeconds = ownWorkerdCpuSeconds;

async function seedMonitors(db, { from, count, due, dueAt, later, modelRef }) {
  const now = new Date().toISOString();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO monitors (id, monitor_id, name, model_ref, status, trigger_schedule, controllers, owner_id, etag, created_at, updated_at)
       SELECT printf('00000000-0000-4000-9000-%012d', i), 'MON-B' || i, 'bench monitor ' || i, ?3, 'Active', '0 9 * * *', '[]',
       'bench-owner', 'e', ?4, ?4 FROM n`,
    )
    .bind(from, from + count - 1, modelRef, now)
    .run();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO schedules (kind, owner_id, rule, next_run_at, attempts, updated_at)
       SELECT 'monitor', printf('00000000-0000-4000-9000-%012d', i), '{"cron":"0 9 * * *","timeZone":null}', CASE WHEN i < ?1 +
       ?3 THEN ?4 ELSE ?5 END, 0, ?6 FROM n`,
    )
    .bind(from, from + count - 1, due, dueAt, later, now)
    .run();
}

export const EVALUATION_BENCH = {
  controllers: 100,
  items: 1_000,
  variables: 5,
  steadyJobs: 5,
  hotItems: 10,
  deviationControllers: 5,
  workItemControllers: 1,
  // Hysteresis (issue 33): every controller needs two evaluations holding to enter and two not holding
  // to leave, and every condition has a deadband, so each job runs the streaks' and the deadband's code.
  pendingFor: 2,
  clearAfter: 2,
  deadband: 1,
};

/**
 * Section 4: the evaluation. Items are seeded in SQL (1,000 plants in one population of the monitor);
 * controller c compares `v{c % 5}` (>= 50) and `w` (< 1,000, always true), so an item whose v values
 * are 0 holds none and one whose are 99 holds all 100. Each job is measured as the status PUT that ends
 * it: validation of the variables, the evaluation and its writes.
 */
async function benchEvaluation({ url, db, headers, post, step }) {
  const B = EVALUATION_BENCH;
  const definition = await post("/ModelDefinitions", {
    name: "bench/external",
    version: `v-${Date.now()}`,
    location: "External",
    uri: "https://models.example.com/bench",
  });
  const model = await post("/Models", {
    name: "bench evaluation",
    modelDefinitionName: definition.name,
    modelDefinitionVersion: definition.version,
    cpuCores: 1,
    memory: 1,
  });
  const population = await post(`/Models/${model.id}/Populations`, { name: "plants", assetType: "Plant" });
  const now = new Date().toISOString();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO assets (id, kind, name, name_key, parent_id, plant_id, etag, created_at, updated_at)
       SELECT printf('00000000-0000-4000-a000-%012d', i), 'plant', 'bench plant ' || i, 'bench plant ' || i, NULL,
       printf('00000000-0000-4000-a000-%012d', i), 'e', ?2, ?2 FROM n`,
    )
    .bind(B.items, now)
    .run();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO population_items (id, population_id, asset_id, asset_name, created_at)
       SELECT printf('00000000-0000-4000-b000-%012d', i), ?2, printf('00000000-0000-4000-a000-%012d', i), 'bench plant ' || i, ?3 FROM n`,
    )
    .bind(B.items, population.id, now)
    .run();
  const at = await post("/ActivityTemplates", { displayName: "bench inspection" });
  const wt = await post("/WorkTemplates", { displayName: "bench work", activityTemplates: [{ activityTemplateId: at.id }] });
  const controllers = Array.from({ length: B.controllers }, (_, c) => ({
    name: `controller ${c}`,
    conditions: [
      { variableName: `v${c % B.variables}`, operator: "GreaterThanOrEqual", comparisonValue: 50, deadband: B.deadband },
      { variableName: "w", operator: "LessThan", comparisonValue: 1000, deadband: B.deadband },
    ],
    pendingFor: B.pendingFor,
    clearAfter: B.clearAfter,
    ...(c < B.deviationControllers
      ? {
          actions: { raiseDeviation: {}, ...(c < B.workItemControllers ? { createWorkItem: { workTemplateId: wt.id } } : {}) },
          onLeave: { deviationStatus: "closed" },
        }
      : {}),
  }));
  const monitor = await post("/Monitors", { name: "bench evaluation", modelId: model.id, status: "Active", controllers });
  const assetIds = Array.from({ length: B.items }, (_, i) => `00000000-0000-4000-a000-${String(i + 1).padStart(12, "0")}`);
  const variablesFor = (hot) =>
    assetIds.flatMap((assetId, i) => [
      ...Array.from({ length: B.variables }, (_, k) => ({ assetId, name: `v${k}`, value: i < hot ? 99 : 0 })),
      { assetId, name: "w", value: 1 },
    ]);
  const job = async (hot) => {
    const execution = await fetch(new URL(`/MonitorJobs/Execution/${monitor.id}`, url), {
      method: "POST",
      headers: { authorization: headers.authorization },
    });
    if (execution.status !== 201) throw new Error(`execution: ${execution.status} ${await execution.text()}`);
    const started = await execution.json();
    const body = JSON.stringify({ variables: variablesFor(hot) });
    const cpu0 = workerdCpuSeconds();
    const t0 = performance.now();
    const res = await fetch(new URL(`/MonitorJobs/${started.id}/Succeeded`, url), {
      method: "PUT",
      headers: { ...headers, authorization: `Bearer ${started.statusToken}` },
      body,
    });
    const text = await res.text();
    const wallMs = round(performance.now() - t0, 0);
    const cpuMs = round((workerdCpuSeconds() - cpu0) * 1000, 0);
    if (res.status !== 200) throw new Error(`status PUT: ${res.status} ${text.slice(0, 300)}`);
    const answer = JSON.parse(text);
    if (answer.errorMessage) throw new Error(`job says: ${answer.errorMessage}`);
    return { wallMs, cpuMs, bodyKiB: round(body.length / 1024, 0) };
  };
  const active = async () =>
    (
      await db
        .prepare("SELECT count(*) AS n FROM monitor_alarms WHERE monitor_ref = ?1 AND active_key IS NOT NULL")
        .bind(monitor.id)
        .first()
    ).n;
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

  step(
    `monitors: evaluation, ${B.controllers} controllers x ${B.items.toLocaleString("en")} items, ${B.steadyJobs} jobs that change nothing`,
  );
  const steady = [];
  for (let i = 0; i < B.steadyJobs; i++) steady.push(await job(0));
  // With pendingFor N, the first N - 1 hot jobs count (one streak row per item and controller) and the Nth enters.
  const pending = [];
  for (let i = 1; i < B.pendingFor; i++) {
    step(`monitors: evaluation, a job counting ${(B.hotItems * B.controllers).toLocaleString("en")} alarms towards entering (pendingFor)`);
    pending.push(await job(B.hotItems));
  }
  step(`monitors: evaluation, a job entering ${(B.hotItems * B.controllers).toLocaleString("en")} alarms`);
  const enter = await job(B.hotItems);
  const enteredAlarms = await active();
  const deviations = (await db.prepare("SELECT count(*) AS n FROM deviations WHERE origin_monitor_ref = ?1").bind(monitor.id).first()).n;
  const workItems = (
    await db
      .prepare("SELECT count(*) AS n FROM monitor_alarms WHERE monitor_ref = ?1 AND work_item_id IS NOT NULL")
      .bind(monitor.id)
      .first()
  ).n;
  step("monitors: evaluation, the same values again (1,000 alarms active, nothing changes)");
  const same = await job(B.hotItems);
  const sameAlarms = await active();
  const clearing = [];
  for (let i = 1; i < B.clearAfter; i++) {
    step("monitors: evaluation, a job counting every alarm towards leaving (clearAfter)");
    clearing.push(await job(0));
  }
  step("monitors: evaluation, a job leaving every alarm");
  const leave = await job(0);
  const leftAlarms = await active();
  const expectedAlarms = B.hotItems * B.controllers;
  if (enteredAlarms !== expectedAlarms || sameAlarms !== expectedAlarms || leftAlarms !== 0)
    throw new Error(`alarms: ${enteredAlarms} entered, ${sameAlarms} after the same values, ${leftAlarms} after leaving`);
  if (deviations !== B.hotItems * B.deviationControllers || workItems !== B.hotItems * B.workItemControllers)
    throw new Error(`${deviations} deviations, ${workItems} work items`);
  const result = {
    controllers: B.controllers,
    items: B.items,
    variablesPerJob: B.items * (B.variables + 1),
    bodyKiB: steady[0].bodyKiB,
    steady: {
      jobs: steady.length,
      cpuMsMedian: median(steady.map((j) => j.cpuMs)),
      wallMsMedian: median(steady.map((j) => j.wallMs)),
      cpuMs: steady.map((j) => j.cpuMs),
    },
    hysteresis: { pendingFor: B.pendingFor, clearAfter: B.clearAfter, deadband: B.deadband },
    pending,
    enter: { alarms: enteredAlarms, deviations, workItems, ...enter },
    same: { activeAlarms: sameAlarms, ...same },
    clearing,
    leave: { alarms: expectedAlarms, deviationsClosed: deviations, ...leave },
  };
  console.log(
    `  evaluation (${B.controllers} controllers x ${B.items} items, ${result.variablesPerJob} variables, ${result.bodyKiB} KiB per PUT):`,
  );
  console.log(
    `    nothing changes: ${result.steady.cpuMsMedian} ms workerd CPU, ${result.steady.wallMsMedian} ms wall ` +
      `(median of ${steady.length}: ${result.steady.cpuMs.join(", ")} ms)`,
  );
  console.log(`    hysteresis: pendingFor ${B.pendingFor}, clearAfter ${B.clearAfter}, deadband ${B.deadband} on every condition`);
  for (const p of pending) console.log(`    ${enteredAlarms} alarms counted towards entering: ${p.cpuMs} ms CPU, ${p.wallMs} ms wall`);
  console.log(
    `    ${enteredAlarms} alarms entered (${deviations} deviations, ${workItems} work items): ${enter.cpuMs} ms ` +
      `CPU, ${enter.wallMs} ms wall`,
  );
  console.log(`    the same values again (${sameAlarms} alarms active): ${same.cpuMs} ms CPU, ${same.wallMs} ms wall`);
  for (const c of clearing) console.log(`    ${expectedAlarms} alarms counted towards leaving: ${c.cpuMs} ms CPU, ${c.wallMs} ms wall`);
  console.log(`    ${expectedAlarms} alarms left (${deviations} deviations closed): ${leave.cpuMs} ms CPU, ${leave.wallMs} ms wall`);
  return result;
}

export async function runMonitorsSection({ root, benchDir, appModules, credentials, step }) {
  const stateDir = join(benchDir, "monitors-state");
  const host = await startStubHost([{ name: "bench/model", tag: "1" }]);
  const { mf, url, db, worker } = await startAppMiniflare({
    root,
    stateDir,
    appModules,
    credentials,
    bindings: {
      CONTAINER_HOST_KIND: "local",
      LOCAL_CONTAINER_HOST_URL: host.url,
      LOCAL_CONTAINER_HOST_SECRET: "bench-stub",
      DATAPROCESSING_ENCRYPTION_KEY: `1:${Buffer.from(webcrypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
    },
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
    const model = await post("/Models", {
      name: "bench model",
      modelDefinitionName: "bench/model",
      modelDefinitionVersion: "1",
      status: "Active",
      cpuCores: 1,
      memory: 1,
      configurableParameters: { THRESHOLD: "0.5" },
      staticParameters: { REGION: "north" },
    });
    const population = await post(`/Models/${model.id}/Populations`, { name: "plants", assetType: "Plant" });
    const plant = await post("/Assets", { name: "bench plant", kind: "plant" });
    await post(`/Models/${model.id}/Populations/${population.id}/Items`, { assetReference: { id: plant.id } });

    const counted = async () =>
      (await db.prepare("SELECT count(*) AS n, count(DISTINCT run_key) AS k FROM monitor_jobs WHERE run_key IS NOT NULL").first()) ?? {
        n: 0,
        k: 0,
      };
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
      step(
        `monitors: seeding ${adding.toLocaleString("en")} monitors (${MONITOR_BENCH.due} due at ` +
          `${dueAt.toISOString()}), ${total.toLocaleString("en")} in all`,
      );
      await seedMonitors(db, {
        from,
        count: adding,
        due: MONITOR_BENCH.due,
        dueAt: dueAt.toISOString(),
        later: "2030-01-07T09:00:00.000Z",
        modelRef: model.id,
      });
      from += adding;
      const before = await counted();
      step(`monitors: the tick at ${dueAt.toISOString()} (and the same tick delivered again)`);
      const first = await tick(dueAt.getTime() + 5_000);
      const again = await tick(dueAt.getTime() + 5_000);
      const after = await counted();
      const started = after.n - before.n;
      console.log(
        `  ${total.toLocaleString("en")} monitors: tick ${first.wallMs} ms wall, ${first.cpuMs} ms workerd CPU; ` +
          `${started} monitor jobs (${after.k - before.k} distinct run keys); the repeated tick ${again.wallMs} ms`,
      );
      if (started !== MONITOR_BENCH.due || after.k - before.k !== MONITOR_BENCH.due)
        throw new Error(`expected ${MONITOR_BENCH.due} monitor jobs started once each, got ${started}`);
      dispatches.push({
        monitors: total,
        due: MONITOR_BENCH.due,
        tickWallMs: first.wallMs,
        tickCpuMs: first.cpuMs,
        repeatedTickWallMs: again.wallMs,
        monitorJobs: started,
      });
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
    console.log(
      `  GET /Monitors/{id} ${monitorRead.reqPerSec} req/s, GET /Deviations/{id} ${deviationRead.reqPerSec} req/s: ` +
        `ratio ${readRatio} (target >= 0.8)`,
    );
    // After the reads, so they run on the same database as before the evaluation existed.
    const evaluation = await benchEvaluation({ url, db, headers, post, step });
    const [small, large] = dispatches;
    const dispatchRatio = round(large.tickWallMs / small.tickWallMs, 2);
    console.log(
      `  dispatch ${large.monitors.toLocaleString("en")} vs ${small.monitors.toLocaleString("en")} monitors: ratio ` +
        `${dispatchRatio} (target <= 1.5)`,
    );
    return {
      dispatches,
      dispatchRatio,
      dispatchTarget: 1.5,
      containerGroupsStarted: host.starts.size,
      startedMoreThanOnce: startedTwice,
      monitorRead,
      deviationRead,
      readRatio,
      readTarget: 0.8,
      evaluation,
    };
  } finally {
    await mf.dispose().catch(() => undefined);
    await host.close();
  }
}
