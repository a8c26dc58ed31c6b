// npm run soak -- --hostile: issue 32's proof that nothing one user sends stalls or drops anyone else.
// On the real local server (scripts/local-server.mjs, started as `npm start` does, on a free port and a temporary
// state folder), each hostile workload runs in turn, sent by one user, while another user probes
// GET /health and GET /Deviations/{id} every 200 ms (each probe sent on time, whether or not the
// previous one was answered). For every workload it prints the probes' p50, p99 and max and the 5xx
// count (the workload's answers and the probes'), and it exits non-zero if any probe took over 1 s (or
// got no answer) or any 5xx appeared.
//
// Workloads: an index library that logs without end and one that loops until its time limit
// (test/fixtures/hostile/, POST /Indices, waited for until their synchronisation ends); four 82 KB
// GIFs declaring 120 MP each, posted at once; a 90 MiB file posted in one request, then the same as
// a resumable upload of 9 parts; 200 clients for 60 s (reads, 35% writes); a spreadsheet import of
// HOSTILE_IMPORT_ROWS (10,000) deviations, uploaded and committed, waited for until it ends.
//
// Options: --only=logging,looping,gifs,upload,resumable,clients,import (comma-separated); --direct (the bundle
// under a Miniflare inside this process, as the benches run it, instead of the local server);
// HOSTILE_CLIENTS (200), HOSTILE_CLIENT_SECONDS (60), HOSTILE_UPLOAD_MIB (90), HOSTILE_USER_LIMIT (the server's
// MAX_USER_REQUESTS_IN_FLIGHT), HOSTILE_USER_RATE (its MAX_USER_REQUESTS_PER_SECOND), HOSTILE_INSPECTOR_PORT (the Worker's
// inspector, to profile it meanwhile). The server's output goes to a log file whose path is printed.
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { flatGif } from "../test/fixtures/hostile/flat-gif.mjs";
import { freePort, prepareLocal, readDevVars, ROOT, startDevServer, stopProcessGroup, waitForHealth } from "./dev-env.mjs";

const WORKLOADS = ["logging", "looping", "gifs", "upload", "resumable", "clients", "import"];
const onlyArg = process.argv.find((a) => a.startsWith("--only="));
const selected = onlyArg ? onlyArg.slice("--only=".length).split(",") : WORKLOADS;
for (const name of selected) if (!WORKLOADS.includes(name)) throw new Error(`unknown workload '${name}' (${WORKLOADS.join(", ")})`);
const CLIENTS = Number(process.env.HOSTILE_CLIENTS || 200);
const CLIENT_SECONDS = Number(process.env.HOSTILE_CLIENT_SECONDS || 60);
const UPLOAD_MIB = Number(process.env.HOSTILE_UPLOAD_MIB || 90);
const IMPORT_ROWS = Number(process.env.HOSTILE_IMPORT_ROWS || 10_000);
const PROBE_EVERY_MS = 200;
// HOSTILE_USER_LIMIT and HOSTILE_USER_RATE: the server's MAX_USER_REQUESTS_IN_FLIGHT and
// MAX_USER_REQUESTS_PER_SECOND for this run (unset: their defaults).
const SERVER_VARS = {
  RATE_LIMITS: "off",
  ...(process.env.HOSTILE_USER_LIMIT ? { MAX_USER_REQUESTS_IN_FLIGHT: process.env.HOSTILE_USER_LIMIT } : {}),
  ...(process.env.HOSTILE_USER_RATE ? { MAX_USER_REQUESTS_PER_SECOND: process.env.HOSTILE_USER_RATE } : {}),
};
const DEV_PROXY_503 = "Your worker restarted mid-request";
const PROBE_LIMIT_MS = 1000;
const PROBE_GIVE_UP_MS = 30_000;

const persistTo = mkdtempSync(join(tmpdir(), "integrity-edge-hostile-"));
const serverLog = join(persistTo, "server.log");
const port = await freePort();
// --direct: the same bundle under a Miniflare inside this process, as the benches run it (bench/lib).
// Otherwise the local server as `npm start` runs it (also Miniflare on its own socket, no proxy since
// issue 32; before, wrangler dev's proxy: docs/benchmarks.md, "Hostile soak").
const DIRECT = process.argv.includes("--direct");
let base = `http://127.0.0.1:${port}`;

function mintToken(sub, name) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts", "token.mjs"), "--sub", sub, "--name", name, "--expires", "2h"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("exit", (code) => (code === 0 ? resolve(out.trim().split("\n").pop().trim()) : reject(new Error(`token.mjs exited ${code}`))));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One workload's record: its answers by status, and the probes sent while it ran. */
function newRecord(name) {
  return {
    name,
    statuses: new Map(),
    errors: [],
    probes: { health: [], read: [] },
    // Probes answered with another status than 200 (a 429 once the probing user has too many in
    // progress), and probes that got no answer.
    probeRefused: [],
    probeDropped: [],
    // Probes over the limit, each with when it was sent (scripts/soak-probes.mjs).
    slowProbes: [],
    fiveHundreds: [],
    started: performance.now(),
  };
}
let current = null;

function count(record, label, status) {
  const key = `${label} ${status}`;
  record.statuses.set(key, (record.statuses.get(key) ?? 0) + 1);
}

/** A request of the workload: counted by status; a 5xx or a network error is kept with its text. */
async function send(label, path, { method = "GET", token, json, body, headers = {}, signal } = {}) {
  const record = current;
  const h = new Headers(headers);
  if (token) h.set("authorization", `Bearer ${token}`);
  let payload = body;
  if (json !== undefined) {
    payload = JSON.stringify(json);
    h.set("content-type", "application/json");
  }
  try {
    const res = await fetch(`${base}${path}`, { method, headers: h, body: payload, signal, duplex: "half" });
    const text = await res.text();
    // wrangler 4.86's dev proxy answers a lost connection to the runtime with a plain-text 503 of its
    // own (docs/decisions.md, "Overload"): counted apart from the service's answers, still a 5xx.
    const fromProxy = res.status === 503 && text.startsWith(DEV_PROXY_503);
    count(record, label, fromProxy ? "503 (dev proxy)" : res.status);
    if (res.status >= 500) record.fiveHundreds.push(`${label}: ${res.status} ${text.slice(0, 160)}`);
    let parsed;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, json: parsed, headers: res.headers };
  } catch (error) {
    if (signal?.aborted) {
      count(record, label, "aborted");
      return { status: 0 };
    }
    count(record, label, "network error");
    record.errors.push(`${label}: ${error.cause?.code ?? error.message}`);
    return { status: 0 };
  }
}

/** Like {@link send}, but a 429 (or 503 Overloaded) with Retry-After is waited out and sent again, as a client should. */
async function sendPolitely(label, path, options = {}) {
  for (;;) {
    const answer = await send(label, path, options);
    const retry = Number(answer.headers?.get("retry-after"));
    if (answer.status !== 429 || !Number.isFinite(retry)) return answer;
    await sleep(retry * 1000 * (0.5 + Math.random()));
  }
}

/**
 * Starts the other user's probes (scripts/soak-probes.mjs, a thread of their own, on connections of their
 * own) for the current workload; the returned stop() waits for the probes in flight and adds what they
 * measured to the workload's record.
 */
function startProbes(probeToken, deviationId) {
  const record = current;
  const worker = new Worker(new URL("./soak-probes.mjs", import.meta.url), {
    workerData: { base, probeToken, deviationId, everyMs: PROBE_EVERY_MS, limitMs: PROBE_LIMIT_MS, giveUpMs: PROBE_GIVE_UP_MS },
  });
  const measured = new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return async () => {
    worker.postMessage("stop");
    const m = await measured;
    await worker.terminate();
    record.probes.health.push(...m.health);
    record.probes.read.push(...m.read);
    record.probeRefused.push(...m.refused);
    record.probeDropped.push(...m.dropped);
    record.fiveHundreds.push(...m.fiveHundreds);
    record.slowProbes.push(...m.slow);
  };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]) : 0;
};

/** Multipart form of one file part, as a Blob (Node streams it from memory). */
function form(fields, file) {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  f.append("File", new File([file.bytes], file.name, { type: file.type }));
  return f;
}

/** Waits until the index's first synchronisation has ended (or `seconds` passed); returns its last state. */
async function synchronised(token, id, seconds) {
  const deadline = Date.now() + seconds * 1000;
  let last;
  while (Date.now() < deadline) {
    last = await send("GET /Indices/{id}", `/Indices/${id}`, { token, headers: { "api-version": "1.1" } });
    if (last.json?.lastSynchronization) return last.json.lastSynchronization;
    await sleep(500);
  }
  return { status: `not ended within ${seconds} s`, last: last?.json?.status };
}

function randomBytes(size) {
  const bytes = new Uint8Array(size);
  // Random enough and cheap: a xorshift fills it (crypto.getRandomValues takes 64 KiB at a time).
  let x = 0x9e3779b9;
  const words = new Uint32Array(bytes.buffer, 0, size >> 2);
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  return bytes;
}

const workloads = {
  async logging({ token }) {
    const library = readFileSync(join(ROOT, "test", "fixtures", "hostile", "endless-logger.js"));
    const created = await send("POST /Indices", "/Indices", {
      method: "POST",
      token,
      headers: { "api-version": "1.1" },
      body: form(
        { Name: `hostile-logging-${Date.now()}`, DisplayName: "Logs without end" },
        { bytes: library, name: "endless-logger.js", type: "text/javascript" },
      ),
    });
    if (created.status !== 201) return `POST /Indices answered ${created.status}`;
    const sync = await synchronised(token, created.json.id, 400);
    return `synchronisation: ${sync.status}${sync.message ? ` (${String(sync.message).slice(0, 100)})` : ""}`;
  },

  async looping({ token }) {
    const library = readFileSync(join(ROOT, "test", "fixtures", "hostile", "busy-loop.js"));
    const created = await send("POST /Indices", "/Indices", {
      method: "POST",
      token,
      headers: { "api-version": "1.1" },
      body: form(
        { Name: `hostile-looping-${Date.now()}`, DisplayName: "Loops to its limit" },
        { bytes: library, name: "busy-loop.js", type: "text/javascript" },
      ),
    });
    if (created.status !== 201) return `POST /Indices answered ${created.status}`;
    const sync = await synchronised(token, created.json.id, 120);
    return `synchronisation: ${sync.status}${sync.message ? ` (${String(sync.message).slice(0, 100)})` : ""}`;
  },

  async gifs({ token }) {
    const bytes = flatGif(10950, 10950);
    const answers = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        sendPolitely("POST /Medias", "/Medias", {
          method: "POST",
          token,
          body: form({ Type: "image" }, { bytes, name: `bomb-${i}.gif`, type: "image/gif" }),
        }),
      ),
    );
    const details = answers.map((a) => `${a.status} ${a.json?.recognition?.integrity ?? ""}`);
    return `four ${bytes.length}-byte GIFs of 10950x10950: ${details.join(", ")}; ${answers[0]?.json?.recognition?.detail ?? ""}`.slice(
      0,
      300,
    );
  },

  async upload({ token, dataType }) {
    const bytes = randomBytes(UPLOAD_MIB * 1024 * 1024);
    const answer = await sendPolitely("POST /Files", "/Files", {
      method: "POST",
      token,
      headers: { "idempotency-key": `hostile-plain-${Date.now()}` },
      body: form({ DataTypeId: dataType }, { bytes, name: "plain.bin", type: "application/octet-stream" }),
    });
    return `POST /Files of ${UPLOAD_MIB} MiB: ${answer.status} ${answer.json?.checksum ?? ""}`;
  },

  async resumable({ token, dataType }) {
    const size = UPLOAD_MIB * 1024 * 1024;
    const partSize = 10 * 1024 * 1024;
    const bytes = randomBytes(size);
    const started = await sendPolitely("POST /Files/Uploads", "/Files/Uploads", {
      method: "POST",
      token,
      json: { dataTypeId: dataType, name: "resumable.bin", size, partSize },
    });
    if (started.status !== 201) return `POST /Files/Uploads answered ${started.status}`;
    const id = started.json.uploadId;
    for (let n = 1; n * partSize < size + partSize; n++) {
      const part = bytes.subarray((n - 1) * partSize, Math.min(size, n * partSize));
      if (part.length === 0) break;
      const answer = await sendPolitely("PUT .../Parts/{n}", `/Files/Uploads/${id}/Parts/${n}`, {
        method: "PUT",
        token,
        headers: { "content-type": "application/octet-stream", "idempotency-key": `hostile-part-${id}-${n}` },
        body: part,
      });
      if (answer.status >= 300) return `part ${n} answered ${answer.status}`;
    }
    const done = await sendPolitely("POST .../Completion", `/Files/Uploads/${id}/Completion`, { method: "POST", token });
    return `resumable upload of ${UPLOAD_MIB} MiB: completion ${done.status} ${done.json?.checksum ?? ""}`;
  },

  async clients({ token, deviations, dataType }) {
    const end = Date.now() + CLIENT_SECONDS * 1000;
    let n = 0;
    const client = async (w) => {
      while (Date.now() < end) {
        const i = n++;
        const r = Math.random();
        const id = deviations[i % deviations.length];
        if (r < 0.65) {
          const pick = Math.random();
          if (pick < 0.33) await sendPolitely("GET /Categories", "/Categories", { token });
          else if (pick < 0.66) await sendPolitely("GET /Deviations", "/Deviations?take=20", { token });
          else await sendPolitely("GET /Deviations/{id}", `/Deviations/${id}`, { token });
        } else if (r < 0.8) {
          const read = await sendPolitely("GET /Deviations/{id}", `/Deviations/${id}`, { token });
          const etag = read.headers?.get("etag");
          if (etag)
            await sendPolitely("PUT /Deviations", "/Deviations", {
              method: "PUT",
              token,
              headers: { "if-match": etag },
              json: { id, description: `client ${w} write ${i}` },
            });
        } else if (r < 0.9) {
          await sendPolitely("POST /Categories", "/Categories", {
            method: "POST",
            token,
            json: { name: `hostile ${w}-${i}-${Date.now()}` },
          });
        } else {
          const content = new TextEncoder().encode(`a,b\n${w},${i}\n`);
          await sendPolitely("POST /Files", "/Files", {
            method: "POST",
            token,
            headers: { "idempotency-key": `hostile-${w}-${i}` },
            body: form({ DataTypeId: dataType }, { bytes: content, name: `c${w}-${i}.csv`, type: "text/csv" }),
          });
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, w) => client(w)));
    return `${CLIENTS} clients for ${CLIENT_SECONDS} s`;
  },

  async import({ token, dataType }) {
    const run = Date.now();
    const lines = ["referenceId,description,status"];
    for (let i = 0; i < IMPORT_ROWS; i++) lines.push(`HOSTILE-${run}-${i},Corrosion found at test point ${i} during the turnaround,new`);
    const bytes = new TextEncoder().encode(`${lines.join("\r\n")}\r\n`);
    const file = await sendPolitely("POST /Files", "/Files", {
      method: "POST",
      token,
      body: form({ DataTypeId: dataType }, { bytes, name: `register-${run}.csv`, type: "text/csv" }),
    });
    if (file.status !== 201) return `POST /Files answered ${file.status}`;
    const started = performance.now();
    const created = await sendPolitely("POST /Imports", "/Imports", {
      method: "POST",
      token,
      json: { kind: "deviations", fileId: file.json.id },
    });
    if (created.status !== 202) return `POST /Imports answered ${created.status}`;
    let state;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      state = (await sendPolitely("GET /Imports/{id}", `/Imports/${created.json.id}`, { token })).json;
      if (state?.status === "completed" || state?.status === "failed") break;
      if (performance.now() - started > 1_800_000) return `import still ${state?.status} after 30 minutes (${state?.processed} rows)`;
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = (state.created / seconds).toFixed(1);
    return `import of ${IMPORT_ROWS} rows: ${state.status}, ${state.created} created in ${seconds.toFixed(0)} s (${rate} rows/s)`;
  },
};

function report(record, outcome) {
  const seconds = ((performance.now() - record.started) / 1000).toFixed(1);
  const all = [...record.probes.health, ...record.probes.read];
  const slow = all.filter((ms) => ms > PROBE_LIMIT_MS).length;
  const line = (kind) => {
    const v = record.probes[kind];
    const what = kind === "health" ? "GET /health" : "GET /Deviations/{id}";
    return `${what}: ${v.length} probes, p50 ${percentile(v, 0.5)} ms, p99 ${percentile(v, 0.99)} ms, max ${percentile(v, 1)} ms`;
  };
  console.log(`\n## ${record.name} (${seconds} s): ${outcome}`);
  console.log(`  ${line("health")}`);
  console.log(`  ${line("read")}`);
  console.log(
    `  probes over ${PROBE_LIMIT_MS} ms: ${slow}; probes refused: ${record.probeRefused.length}; probes without an answer: ` +
      `${record.probeDropped.length}; 5xx: ${record.fiveHundreds.length}; the workload's network errors: ${record.errors.length}`,
  );
  const statuses = [...record.statuses].sort().map(([k, v]) => `${k}: ${v}`);
  if (statuses.length) console.log(`  answers: ${statuses.join(", ")}`);
  for (const text of [...record.slowProbes, ...record.fiveHundreds, ...record.probeDropped, ...record.probeRefused, ...record.errors].slice(
    0,
    8,
  ))
    console.log(`  ! ${text}`);
  // A probe refused or with no answer at all (its connection dropped) fails the run like a slow one.
  return slow === 0 && record.probeRefused.length === 0 && record.probeDropped.length === 0 && record.fiveHundreds.length === 0;
}

const ADMISSION_SETTINGS = [
  "MAX_USER_REQUESTS_IN_FLIGHT",
  "MAX_USER_REQUESTS_PER_SECOND",
  "MAX_REQUESTS_IN_FLIGHT",
  "MAX_LARGE_BODIES_IN_FLIGHT",
];

/**
 * The admission settings the local server runs with, in words: HOSTILE_USER_* over .dev.vars (which keeps
 * whatever a developer added to it, so an experiment's setting would otherwise change every later run
 * unseen), else the service's default.
 */
function admissionInEffect() {
  const devVars = readDevVars();
  return ADMISSION_SETTINGS.map((name) => `${name}=${SERVER_VARS[name] ?? devVars[name] ?? "default"}`).join(", ");
}

/** The real local server, as `npm start` runs it; returns how to mint tokens and how to stop it. */
async function startLocalServer() {
  // Prepared before the server starts: it reads .dev.vars when it starts.
  await prepareLocal({ persistTo, quiet: true, vars: SERVER_VARS });
  const logFd = openSync(serverLog, "w");
  const server = startDevServer({
    port,
    persistTo,
    detached: true,
    stdio: ["ignore", logFd, logFd],
    watch: false,
    // HOSTILE_INSPECTOR_PORT: an inspector port, to attach a profiler to the Worker while it runs.
    inspectorPort: process.env.HOSTILE_INSPECTOR_PORT || undefined,
  });
  return {
    ready: () => waitForHealth(base, { timeoutMs: 180_000, child: server }),
    mint: mintToken,
    stop: () => stopProcessGroup(server),
  };
}

/** The deployable bundle under Miniflare with a direct socket and its own signing key (bench/lib). */
async function startDirect() {
  const { buildWorkerBundle } = await import("../bench/lib/build.mjs");
  const { startAppMiniflare } = await import("../bench/lib/app-miniflare.mjs");
  const { applyMigrations } = await import("../bench/lib/db.mjs");
  const { ISSUER, AUDIENCE, allPermissions } = await import("../bench/lib/auth.mjs");
  const { exportJWK, generateKeyPair, SignJWT } = await import("jose");
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "hostile", alg: "ES256", use: "sig" };
  const modules = buildWorkerBundle(ROOT, join(persistTo, "build"));
  const started = await startAppMiniflare({
    root: ROOT,
    stateDir: join(persistTo, "miniflare"),
    appModules: modules,
    credentials: { jwksJson: JSON.stringify({ keys: [jwk] }) },
    bindings: { LOG_LEVEL: "warn", ...SERVER_VARS },
  });
  await applyMigrations(started.db, ROOT);
  base = started.url.origin;
  const permissions = allPermissions(ROOT);
  return {
    ready: async () => undefined,
    mint: (sub, name) =>
      new SignJWT({ name, permissions })
        .setProtectedHeader({ alg: "ES256", kid: "hostile" })
        .setSubject(sub)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime("2h")
        .sign(privateKey),
    stop: () => started.mf.dispose(),
  };
}

const server = DIRECT ? await startDirect() : await startLocalServer();
let exitCode = 1;
try {
  await server.ready();
  const token = await server.mint("0a7a0c4e-0000-4000-8000-00000000a11c", "Hostile user");
  const probeToken = await server.mint("0a7a0c4e-0000-4000-8000-0000000b0b00", "Another user");
  current = newRecord("setup");
  const dataType = `hostile-${Date.now().toString(36)}`;
  await send("setup", "/DataTypes", {
    method: "POST",
    token,
    json: { id: dataType, name: `Hostile ${dataType}`, allowedExtensions: ["csv", "bin"] },
  });
  const deviations = [];
  for (let i = 0; i < 10; i++)
    deviations.push((await send("setup", "/Deviations", { method: "POST", token, json: { description: `hostile ${i}` } })).json.id);
  const probed = (await send("setup", "/Deviations", { method: "POST", token: probeToken, json: { description: "probed" } })).json.id;
  const where = DIRECT ? "Miniflare, direct socket" : `local server, log: ${serverLog}`;
  console.log(`hostile soak on ${base} (${where}); probes every ${PROBE_EVERY_MS} ms by another user`);
  if (!DIRECT) console.log(`admission: ${admissionInEffect()}`);
  let ok = true;
  for (const name of selected) {
    current = newRecord(name);
    const stop = startProbes(probeToken, probed);
    let outcome;
    try {
      outcome = await workloads[name]({ token, deviations, dataType });
    } catch (error) {
      outcome = `failed: ${error.stack ?? error.message}`;
      ok = false;
    }
    // The probes go on a little after the workload's last answer: what it left running is measured too.
    await sleep(2000);
    await stop();
    ok = report(current, outcome) && ok;
  }
  exitCode = ok ? 0 : 1;
  console.log(`\nhostile soak: ${ok ? "every probe answered within 1 s and no 5xx" : "FAILED (a probe over 1 s or unanswered, or a 5xx)"}`);
} catch (error) {
  console.error(`hostile soak: ${error.stack ?? error.message}`);
} finally {
  await server.stop().catch(() => undefined);
  if (exitCode === 0) rmSync(persistTo, { recursive: true, force: true });
  else console.log(`server log kept: ${serverLog}`);
  process.exit(exitCode);
}
