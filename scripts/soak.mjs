// npm run soak: a bounded mixed load against the real local server (started as `npm start` does, on a
// free port and a temporary state folder), then a check that nothing acknowledged was lost or
// duplicated and that R2 holds no object without its file row.
// Load: reads; writes with If-Match (a 412 after a race is expected); writes without If-Match (never
// 412); uploads with an Idempotency-Key whose first send is cut off half-way (the connection dropped)
// and then retried with the same key and bytes; refused uploads (a disallowed extension).
// Env: SOAK_SECONDS (600), SOAK_CONNECTIONS (8). Prints a report for docs/benchmarks.md.
// With --hostile: issue 32's hostile workloads and probes instead (scripts/soak-hostile.mjs).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { freePort, prepareLocal, ROOT, startDevServer, stopProcessGroup, waitForHealth } from "./dev-env.mjs";

// `npm run soak -- --hostile`: the hostile workloads of issue 32 instead (scripts/soak-hostile.mjs; it exits when done).
if (process.argv.includes("--hostile")) await import("./soak-hostile.mjs");

const SECONDS = Number(process.env.SOAK_SECONDS || 600);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS || 8);
const persistTo = mkdtempSync(join(tmpdir(), "integrity-edge-soak-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

function mintToken() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts", "token.mjs"), "--expires", "2h"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("exit", (code) => (code === 0 ? resolve(out.trim().split("\n").pop().trim()) : reject(new Error(`token.mjs exited ${code}`))));
  });
}

const latencies = [];
const statuses = new Map();
const unexpected = [];
const count = (label, status) => statuses.set(`${label} ${status}`, (statuses.get(`${label} ${status}`) ?? 0) + 1);

async function request(label, path, { method = "GET", token, body, form, headers = {}, expect = [200], signal } = {}) {
  const h = new Headers(headers);
  if (token) h.set("authorization", `Bearer ${token}`);
  let payload;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    h.set("content-type", "application/json");
  }
  if (form) payload = form;
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}${path}`, { method, headers: h, body: payload, signal });
    const text = await res.text();
    latencies.push(performance.now() - t0);
    count(label, res.status);
    if (!expect.includes(res.status)) unexpected.push(`${label}: ${res.status} ${text.slice(0, 200)}`);
    return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
  } catch (error) {
    if (signal?.aborted) {
      count(label, "dropped");
      return { status: 0 };
    }
    count(label, "error");
    unexpected.push(`${label}: ${error.message}`);
    return { status: 0 };
  }
}

// Prepared before the server starts: it reads .dev.vars when it starts (and builds with the assets).
await prepareLocal({ persistTo, quiet: true, vars: { RATE_LIMITS: "off" } });
const server = startDevServer({
  port,
  persistTo,
  detached: true,
  stdio: ["ignore", "ignore", "ignore"],
  watch: false,
});
let exitCode = 1;
try {
  await waitForHealth(base, { timeoutMs: 120_000, child: server });
  const token = await mintToken();
  const dataType = `soak-${Date.now().toString(36)}`;
  await request("setup", "/DataTypes", {
    method: "POST",
    token,
    body: { id: dataType, name: "Soak", allowedExtensions: ["csv"] },
    expect: [201],
  });
  const shared = (
    await request("setup", "/Categories", { method: "POST", token, body: { name: `soak shared ${dataType}` }, expect: [201] })
  ).json;
  const deviations = [];
  for (let i = 0; i < 10; i++)
    deviations.push(
      (await request("setup", "/Deviations", { method: "POST", token, body: { description: `soak ${i}` }, expect: [201] })).json.id,
    );

  const acknowledgedCategories = new Set();
  const uploads = new Map(); // idempotency key -> file id acknowledged
  const end = Date.now() + SECONDS * 1000;
  let n = 0;
  const worker = async (w) => {
    while (Date.now() < end) {
      const i = n++;
      const r = Math.random();
      if (r < 0.4) {
        const pick = Math.random();
        if (pick < 0.33) await request("GET /Categories", "/Categories", { token });
        else if (pick < 0.66) await request("GET /Deviations", "/Deviations?take=20", { token });
        else await request("GET /Deviations/{id}", `/Deviations/${deviations[i % deviations.length]}`, { token });
      } else if (r < 0.55) {
        const id = deviations[i % deviations.length];
        const read = await request("GET /Deviations/{id}", `/Deviations/${id}`, { token });
        await request("PUT /Deviations If-Match", "/Deviations", {
          method: "PUT",
          token,
          headers: { "if-match": read.headers.get("etag") },
          body: { id, description: `w${w} ${i}` },
          expect: [200, 412],
        });
      } else if (r < 0.7) {
        await request("PUT /Categories (no If-Match)", "/Categories", {
          method: "PUT",
          token,
          body: { id: shared.id, name: `soak shared ${dataType} ${i}` },
          expect: [200, 409],
        });
        if (Math.random() < 0.3) {
          const created = await request("POST /Categories", "/Categories", {
            method: "POST",
            token,
            body: { name: `soak ${dataType} ${w}-${i}` },
            expect: [201],
          });
          if (created.status === 201) acknowledgedCategories.add(created.json.id);
        }
      } else if (r < 0.9) {
        const key = `soak-${w}-${i}`;
        const content = `a,b\n${key},${"x".repeat(20_000)}\n`;
        const form = () => {
          const f = new FormData();
          f.append("DataTypeId", dataType);
          f.append("File", new File([content], `${key}.csv`, { type: "text/csv" }));
          return f;
        };
        if (Math.random() < 0.4) {
          // The connection drops half-way: the client gives up before the answer, then retries.
          const controller = new AbortController();
          setTimeout(() => controller.abort(), Math.random() * 15);
          await request("POST /Files (dropped)", "/Files", {
            method: "POST",
            token,
            form: form(),
            headers: { "idempotency-key": key },
            expect: [201, 409],
            signal: controller.signal,
          });
        }
        for (let attempt = 0; attempt < 5; attempt++) {
          const res = await request("POST /Files (idempotent)", "/Files", {
            method: "POST",
            token,
            form: form(),
            headers: { "idempotency-key": key },
            expect: [201, 409],
          });
          if (res.status === 201) {
            uploads.set(key, res.json.id);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
      } else {
        const f = new FormData();
        f.append("DataTypeId", dataType);
        f.append("File", new File(["x".repeat(20_000)], "refused.exe"));
        await request("POST /Files (refused)", "/Files", { method: "POST", token, form: f, expect: [400] });
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, w) => worker(w)));

  // Nothing lost or duplicated: every acknowledged write is readable exactly once.
  const problems = [];
  for (const id of acknowledgedCategories) {
    if ((await request("check", `/Categories/${id}`, { token })).status !== 200)
      problems.push(`category ${id} acknowledged but not readable`);
  }
  const files = [];
  for (let skip = 0; ; skip += 500) {
    const page = (await request("check", `/Files?dataTypeIds=${dataType}&take=500&skip=${skip}`, { token })).json;
    files.push(...page);
    if (page.length < 500) break;
  }
  const byName = new Map();
  for (const file of files) byName.set(file.name, (byName.get(file.name) ?? 0) + 1);
  for (const [key, id] of uploads) {
    if (byName.get(`${key}.csv`) !== 1) problems.push(`upload ${key}: ${byName.get(`${key}.csv`) ?? 0} files (expected exactly 1)`);
    if (!files.some((f) => f.id === id)) problems.push(`upload ${key}: acknowledged file ${id} is not listed`);
  }
  for (const [name, n2] of byName) if (n2 > 1) problems.push(`${name} stored ${n2} times`);
  await stopProcessGroup(server);

  // No orphan objects: every object in the uploads bucket belongs to a file row.
  const v3 = join(persistTo, "v3");
  const mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response('') } }",
    r2Buckets: { UPLOADS: "integrity-edge-uploads" },
    r2Persist: join(v3, "r2"),
    // Local state is kept by the ids of wrangler.toml (the database's placeholder id).
    d1Databases: { DB: "00000000-0000-0000-0000-000000000000" },
    d1Persist: join(v3, "d1"),
  });
  const bucket = await mf.getR2Bucket("UPLOADS");
  const keys = [];
  let cursor;
  do {
    const listed = await bucket.list({ cursor, limit: 1000 });
    keys.push(...listed.objects.map((o) => o.key));
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  const db = await mf.getD1Database("DB");
  const { results } = await db.prepare("SELECT r2_key FROM files WHERE r2_key IS NOT NULL").all();
  const known = new Set(results.map((r) => r.r2_key));
  const orphans = keys.filter((k) => k.startsWith("files/") && !known.has(k));
  await mf.dispose();

  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p) => Math.round(sorted[Math.floor((sorted.length - 1) * p)] ?? 0);
  console.log(
    `soak: ${SECONDS} s, ${CONNECTIONS} connections, ${latencies.length} answered requests; p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`,
  );
  console.log("answers by request kind and status:");
  for (const [label, n3] of [...statuses].sort()) console.log(`  ${label}: ${n3}`);
  console.log(
    `acknowledged: ${acknowledgedCategories.size} categories, ${uploads.size} uploads (${files.length} files ` +
      `listed); R2 objects under files/: ${keys.filter((k) => k.startsWith("files/")).length}, orphans: ` +
      `${orphans.length}`,
  );
  console.log(`unexpected answers: ${unexpected.length}${unexpected.length ? `\n  ${unexpected.slice(0, 10).join("\n  ")}` : ""}`);
  console.log(`lost or duplicated: ${problems.length}${problems.length ? `\n  ${problems.slice(0, 10).join("\n  ")}` : ""}`);
  exitCode = problems.length === 0 && orphans.length === 0 && unexpected.length === 0 ? 0 : 1;
} catch (error) {
  console.error(`soak: ${error.stack ?? error.message}`);
} finally {
  await stopProcessGroup(server).catch(() => undefined);
  rmSync(persistTo, { recursive: true, force: true });
  process.exit(exitCode);
}
