// Jobs bench (issue 8): the minute dispatcher under load and the read of one job.
// 1. 10,000 job configs with weekly frequencies, 1,000 of them due in one minute: the scheduled tick's
//    wall time and workerd's CPU time during it, and proof that each due run started exactly once
//    (a second, duplicated tick starts nothing new; every container group was started once).
// 2. The same with 100,000 configs (another 1,000 due a week later): the ratio of the two dispatch
//    times (target <= 1.5), since due rows are found by the next-run index, never by a scan.
// 3. GET /Jobs/{id} against GET /Deviations/{id} in alternating autocannon rounds (target >= 0.8x).
// The container host is a stub HTTP server in this process that starts groups instantly and reports
// them succeeded, so the figures are the service's own work.
import { readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { webcrypto } from "node:crypto";
import { LOOPBACK, startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { measureRounds, round } from "./load.mjs";

export const JOB_BENCH = { configs: [10_000, 100_000], due: 1_000 };

/** A container host that starts every group at once and reports it succeeded; counts starts per group. */
export function startStubHost(images = [{ name: "bench/model", tag: "1" }]) {
  const starts = new Map();
  const server = createServer(async (req, res) => {
    const parts = new URL(req.url, "http://h").pathname.split("/").filter(Boolean);
    for await (const _ of req);
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (parts[0] === "images") return send(200, { images, capacity: { maxCpuCores: 4, maxMemoryGb: 16, maxGpuCores: 0, gpuSkus: [] } });
    if (parts[0] === "groups" && req.method === "PUT") {
      const first = !starts.has(parts[1]);
      starts.set(parts[1], (starts.get(parts[1]) ?? 0) + 1);
      return send(first ? 201 : 200, { name: parts[1] });
    }
    if (parts[0] === "groups" && req.method === "GET") {
      return starts.has(parts[1])
        ? send(200, { phase: "succeeded", exitCode: 0, error: null, output: "done\n", outputTruncated: false })
        : send(404, {});
    }
    if (parts[0] === "groups" && req.method === "DELETE") return send(204);
    send(404, {});
  });
  return new Promise((resolve) =>
    server.listen(0, LOOPBACK, () =>
      resolve({ url: `http://${LOOPBACK}:${server.address().port}`, starts, close: () => new Promise((r) => server.close(r)) }),
    ),
  );
}

const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

/** Seals run options exactly as src/dataprocessing/run-options.ts does (key version 1). */
async function seal(rawKey, options) {
  const key = await webcrypto.subtle.importKey("raw", rawKey, "AES-GCM", false, ["encrypt"]);
  const iv = webcrypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(
    await webcrypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(JSON.stringify(options))),
  );
  return `v1.${b64url(iv)}.${b64url(data)}`;
}

/** CPU seconds (user + system) of every workerd process under this one. */
export function workerdCpuSeconds() {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(workerd)")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // the process ended while being read
    }
  }
  return total;
}

/** Adds `count` configs (rowids from `from`), `due` of them due at `dueAt`, the rest later; one SQL statement each. */
async function seedConfigs(db, { from, count, due, dueAt, later, sealed }) {
  const now = new Date().toISOString();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
     INSERT INTO job_configurations (id, name, image_name, image_tag, cpu_cores, memory_gb, run_options_enc, frequency,
     timeout_minutes, object_owner_id, etag, created_at, updated_at)
     SELECT printf('00000000-0000-4000-8000-%012d', i), 'bench config ' || i, 'bench/model', '1', 1, 1, ?3,
            '{"dayOfWeek":"monday","hour":9,"startDate":"2027-01-01T00:00:00"}', 60, 'bench-owner', 'e', ?4, ?4 FROM n`,
    )
    .bind(from, from + count - 1, sealed, now)
    .run();
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
     INSERT INTO schedules (kind, owner_id, rule, next_run_at, attempts, updated_at)
     SELECT 'job-config', printf('00000000-0000-4000-8000-%012d', i),
     '{"cron":"0 9 * * 1","timeZone":null,"startAt":"2027-01-01T00:00:00"}',
            CASE WHEN i < ?1 + ?3 THEN ?4 ELSE ?5 END, 0, ?6 FROM n`,
    )
    .bind(from, from + count - 1, due, dueAt, later, now)
    .run();
}

export async function runJobsSection({ root, benchDir, appModules, credentials, step }) {
  const stateDir = join(benchDir, "jobs-state");
  const host = await startStubHost();
  const rawKey = webcrypto.getRandomValues(new Uint8Array(32));
  const { mf, url, db, worker } = await startAppMiniflare({
    root,
    stateDir,
    appModules,
    credentials,
    bindings: {
      CONTAINER_HOST_KIND: "local",
      LOCAL_CONTAINER_HOST_URL: host.url,
      LOCAL_CONTAINER_HOST_SECRET: "bench-stub",
      DATAPROCESSING_ENCRYPTION_KEY: `1:${Buffer.from(rawKey).toString("base64")}`,
    },
  });
  try {
    const token = credentials.token;
    await applyMigrations(db, root);
    const sealed = await seal(rawKey, { MODE: "bench" });

    const jobsWithRunKey = async () =>
      (await db.prepare("SELECT count(*) AS n, count(DISTINCT run_key) AS k FROM jobs WHERE run_key IS NOT NULL").first()) ?? {
        n: 0,
        k: 0,
      };
    async function tick(at) {
      const cpu0 = workerdCpuSeconds();
      const t0 = performance.now();
      await worker.scheduled({ scheduledTime: new Date(at), cron: "* * * * *" });
      const wallMs = performance.now() - t0;
      return { wallMs: round(wallMs, 0), cpuMs: round((workerdCpuSeconds() - cpu0) * 1000, 0) };
    }

    const dispatches = [];
    let from = 1;
    let dueAt = new Date("2027-03-01T09:00:00.000Z");
    for (const total of JOB_BENCH.configs) {
      const adding = total - (from - 1);
      step(
        `jobs: seeding ${adding.toLocaleString("en")} configs (${JOB_BENCH.due} due at ${dueAt.toISOString()}), ` +
          `${total.toLocaleString("en")} in all`,
      );
      // Not due in this bench: far after both ticks.
      const later = "2030-01-07T09:00:00.000Z";
      await seedConfigs(db, { from, count: adding, due: JOB_BENCH.due, dueAt: dueAt.toISOString(), later, sealed });
      from += adding;
      const before = await jobsWithRunKey();
      step(`jobs: the tick at ${dueAt.toISOString()} (and the same tick delivered again)`);
      const first = await tick(dueAt.getTime() + 5_000);
      const again = await tick(dueAt.getTime() + 5_000);
      const after = await jobsWithRunKey();
      const started = after.n - before.n;
      console.log(
        `  ${total.toLocaleString("en")} configs: tick ${first.wallMs} ms wall, ${first.cpuMs} ms workerd CPU; ` +
          `${started} runs started (${after.k - before.k} distinct run keys); the repeated tick ${again.wallMs} ms`,
      );
      if (started !== JOB_BENCH.due || after.k - before.k !== JOB_BENCH.due)
        throw new Error(`expected ${JOB_BENCH.due} runs started once each, got ${started} jobs for ${after.k - before.k} run keys`);
      dispatches.push({
        configs: total,
        due: JOB_BENCH.due,
        tickWallMs: first.wallMs,
        tickCpuMs: first.cpuMs,
        repeatedTickWallMs: again.wallMs,
        runsStarted: started,
      });
      // The next set is due two days later, before the runs just made come round again (a week on).
      dueAt = new Date(dueAt.getTime() + 2 * 24 * 3600 * 1000);
    }
    const hostStarts = [...host.starts.values()];
    const startedTwice = hostStarts.filter((n) => n > 1).length;
    console.log(`  container groups started: ${hostStarts.length}, started more than once: ${startedTwice}`);
    if (startedTwice > 0) throw new Error(`${startedTwice} container groups were started more than once`);

    step("jobs: GET /Jobs/{id} vs GET /Deviations/{id} (alternating rounds)");
    const job = await db.prepare("SELECT id FROM jobs LIMIT 1").first();
    const deviationRes = await fetch(new URL("/Deviations", url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ description: "bench deviation" }),
    });
    if (deviationRes.status !== 201) throw new Error(`POST /Deviations: ${deviationRes.status} ${await deviationRes.text()}`);
    const deviation = await deviationRes.json();
    const headers = { authorization: `Bearer ${token}` };
    const [jobRead, deviationRead] = await measureRounds([
      { label: "GET /Jobs/{id}", url: new URL(`/Jobs/${job.id}`, url), headers },
      { label: "GET /Deviations/{id}", url: new URL(`/Deviations/${deviation.id}`, url), headers },
    ]);
    const readRatio = round(jobRead.reqPerSec / deviationRead.reqPerSec, 2);
    console.log(
      `  GET /Jobs/{id} ${jobRead.reqPerSec} req/s, GET /Deviations/{id} ${deviationRead.reqPerSec} req/s: ratio ` +
        `${readRatio} (target >= 0.8)`,
    );
    const [small, large] = dispatches;
    const dispatchRatio = round(large.tickWallMs / small.tickWallMs, 2);
    console.log(
      `  dispatch ${large.configs.toLocaleString("en")} vs ${small.configs.toLocaleString("en")} configs: ratio ` +
        `${dispatchRatio} (target <= 1.5)`,
    );
    return {
      dispatches,
      dispatchRatio,
      dispatchTarget: 1.5,
      containerGroupsStarted: hostStarts.length,
      startedMoreThanOnce: startedTwice,
      jobRead,
      deviationRead,
      readRatio,
      readTarget: 0.8,
    };
  } finally {
    await mf.dispose().catch(() => undefined);
    await host.close();
  }
}
