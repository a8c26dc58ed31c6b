// Upload bench (issue 4): a 200 MiB file through the full Worker's resumable upload (10 MiB parts,
// 1, 2 and 4 in flight, each part hashed as it streams in, then the completion, which assembles the
// parts and derives the composite checksum from the part digests without reading the object) against
// a single R2 `put` of the same bytes by a minimal Worker (bench/r2-put-worker.js). Also one form
// upload (POST /Files, streamed and hashed) of 90 MiB against a single put of those bytes.
//
// It runs in its own Miniflare (app + minimal put worker on direct sockets, one shared R2 bucket and
// D1 database), so it can run alone (`npm run bench -- --only upload`) or after the other sections.
// Env: BENCH_UPLOAD_MIB (200), BENCH_UPLOAD_ROUNDS (3), BENCH_UPLOAD_FORM_MIB (90).
import { createHash, randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { AUDIENCE, ISSUER } from "./auth.mjs";
import { applyMigrations } from "./db.mjs";
import { median, round } from "./load.mjs";

const MiB = 1024 * 1024;
const LOOPBACK = "127.0.0.1";

export const UPLOAD = {
  mib: Number(process.env.BENCH_UPLOAD_MIB ?? 200),
  formMib: Number(process.env.BENCH_UPLOAD_FORM_MIB ?? 90),
  rounds: Number(process.env.BENCH_UPLOAD_ROUNDS ?? 3),
  partMib: 10,
  concurrencies: [1, 2, 4],
};

/** The app's bindings as wrangler derives them from wrangler.toml, minus assets and .dev.vars (as bench/lib/miniflare.mjs). */
function appWorkerOptions(root) {
  const configPath = join(root, "wrangler.toml");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(configPath);
  const vars = unstable_readConfig({ config: configPath }).vars ?? {};
  const { assets: _assets, bindings = {}, ...options } = workerOptions;
  return { ...options, bindings: Object.fromEntries(Object.entries(bindings).filter(([name]) => Object.hasOwn(vars, name))) };
}

async function startUploadWorkers({ root, stateDir, appModules, jwksJson }) {
  rmSync(stateDir, { recursive: true, force: true });
  const app = appWorkerOptions(root);
  const socket = [{ host: LOOPBACK, port: 0 }];
  const mf = new Miniflare({
    host: LOOPBACK,
    port: 0,
    defaultPersistRoot: stateDir,
    d1Persist: join(stateDir, "d1"),
    r2Persist: join(stateDir, "r2"),
    durableObjectsPersist: join(stateDir, "do"),
    // The Worker's log lines are dropped but for errors, which a failing request prints
    // (BENCH_UPLOAD_LOGS=1 shows every line).
    handleRuntimeStdio: (stdout, stderr) => {
      for (const stream of [stdout, stderr]) {
        if (process.env.BENCH_UPLOAD_LOGS === "1") stream.pipe(process.stdout);
        else
          createInterface({ input: stream }).on(
            "line",
            (line) => line.includes('"level":"error"') && workerErrors.push(line.slice(0, 2000)),
          );
      }
    },
    workers: [
      {
        ...app,
        name: "app",
        modulesRoot: join(appModules[0].path, ".."),
        modules: appModules,
        bindings: {
          ...app.bindings,
          AUTH_ISSUER: ISSUER,
          AUTH_AUDIENCE: AUDIENCE,
          AUTH_JWKS_JSON: jwksJson,
          ENVIRONMENT: "bench",
          RATE_LIMITS: "off",
          MAX_USER_REQUESTS_IN_FLIGHT: "64", // one user over many connections (bench/lib/app-miniflare.mjs)
          MAX_USER_REQUESTS_PER_SECOND: "10000000",
        },
        unsafeDirectSockets: socket,
      },
      {
        name: "r2put",
        compatibilityDate: app.compatibilityDate,
        modules: true,
        scriptPath: join(root, "bench", "r2-put-worker.js"),
        r2Buckets: app.r2Buckets,
        unsafeDirectSockets: socket,
      },
    ],
  });
  try {
    await mf.ready;
    const urls = { app: await mf.unsafeGetDirectURL("app"), r2put: await mf.unsafeGetDirectURL("r2put") };
    for (const url of Object.values(urls))
      if (url.hostname !== LOOPBACK) throw new Error(`a worker listens on ${url.host}, not on loopback`);
    return { mf, urls, db: await mf.getD1Database("DB", "app") };
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    throw error;
  }
}

let lastServerTiming = "";
/** The Worker's error log lines so far. */
const workerErrors = [];

async function request(url, { method = "GET", token, json, body, headers = {} } = {}) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(json ? { "content-type": "application/json" } : {}),
      // A fresh connection per request: reusing one workerd has just closed as idle fails a large
      // POST with EPIPE (undici does not retry non-idempotent requests). Connecting costs ~0.1 ms.
      connection: "close",
      ...headers,
    },
    body: json ? JSON.stringify(json) : body,
  }).catch((error) => {
    // undici's "fetch failed" hides the reason in `cause`.
    throw new Error(`${method} ${url}: ${error.message}: ${error.cause?.message ?? error.cause ?? "no cause"}`, { cause: error });
  });
  const text = await response.text();
  lastServerTiming = response.headers.get("server-timing") ?? "";
  if (response.status < 200 || response.status > 299) {
    throw new Error(
      `${method} ${url}: HTTP ${response.status}: ${text.slice(0, 300)}\nWorker ` +
        `errors:\n${workerErrors.slice(-5).join("\n") || "(none logged)"}`,
    );
  }
  return text ? JSON.parse(text) : undefined;
}

const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;
const mbPerSecond = (bytes, s) => round(bytes / 1e6 / s, 1);

async function singlePut(urls, bytes, name) {
  const start = process.hrtime.bigint();
  const stored = await request(new URL(`/put/${name}`, urls.r2put), {
    method: "PUT",
    body: bytes,
    headers: { "content-type": "application/octet-stream" },
  });
  const s = seconds(start);
  if (stored.size !== bytes.length) throw new Error(`single put stored ${stored.size} bytes, not ${bytes.length}`);
  return s;
}

async function multipartUpload(urls, token, dataTypeId, bytes, concurrency, expectedChecksum) {
  const partSize = UPLOAD.partMib * MiB;
  const start = process.hrtime.bigint();
  const upload = await request(new URL("/Files/Uploads", urls.app), {
    method: "POST",
    token,
    json: { dataTypeId, name: "bench.bin", size: bytes.length, partSize },
  });
  const count = Math.ceil(bytes.length / partSize);
  let next = 1;
  const worker = async () => {
    while (next <= count) {
      const n = next++;
      const part = bytes.subarray((n - 1) * partSize, Math.min(n * partSize, bytes.length));
      await request(new URL(`/Files/Uploads/${upload.uploadId}/Parts/${n}`, urls.app), {
        method: "PUT",
        token,
        body: part,
        headers: { "content-type": "application/octet-stream" },
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const partsDone = process.hrtime.bigint();
  const file = await request(new URL(`/Files/Uploads/${upload.uploadId}/Completion`, urls.app), { method: "POST", token });
  const total = seconds(start);
  const completion = Number(process.hrtime.bigint() - partsDone) / 1e9;
  const timing = Object.fromEntries([...lastServerTiming.matchAll(/(\w+);dur=(\d+)/g)].map((m) => [m[1], Number(m[2]) / 1000]));
  if (file.size !== bytes.length || file.checksum !== expectedChecksum)
    throw new Error("multipart upload: the stored file differs from the sent bytes");
  await request(new URL(`/Files/${file.id}`, urls.app), { method: "DELETE", token });
  return { total, completion, assemble: timing.assemble ?? 0, hash: timing.hash ?? 0 };
}

async function formUpload(urls, token, dataTypeId, bytes, expectedChecksum) {
  const form = new FormData();
  form.append("DataTypeId", dataTypeId);
  form.append("File", new Blob([bytes]), "bench.bin");
  const start = process.hrtime.bigint();
  const file = await request(new URL("/Files", urls.app), { method: "POST", token, body: form });
  const s = seconds(start);
  if (file.size !== bytes.length || file.checksum !== expectedChecksum)
    throw new Error("form upload: the stored file differs from the sent bytes");
  await request(new URL(`/Files/${file.id}`, urls.app), { method: "DELETE", token });
  return s;
}

async function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The checksum of a resumable upload, as a client recomputes it: see File.checksum in the API. */
function compositeSha256(bytes, partSize) {
  const count = Math.ceil(bytes.length / partSize);
  if (count === 1) return createHash("sha256").update(bytes).digest("hex");
  const digests = [];
  for (let i = 0; i < count; i++)
    digests.push(
      createHash("sha256")
        .update(bytes.subarray(i * partSize, (i + 1) * partSize))
        .digest(),
    );
  return `sha256-parts:${createHash("sha256").update(Buffer.concat(digests)).digest("hex")}-${count}`;
}

/**
 * Runs the upload section and returns its figures. `step` prints progress.
 * @param {{ root: string, benchDir: string, appModules: object[], credentials: { jwksJson: string, token: string }, step: (text:
 * string) => void }} options
 */
export async function benchUpload({ root, benchDir, appModules, credentials, step }) {
  step(
    `upload bench: ${UPLOAD.mib} MiB in ${UPLOAD.partMib} MiB parts (1, 2, 4 in flight) vs one R2 put; ${UPLOAD.rounds} alternating rounds`,
  );
  const { mf, urls, db } = await startUploadWorkers({
    root,
    stateDir: join(benchDir, "upload-state"),
    appModules,
    jwksJson: credentials.jwksJson,
  });
  try {
    await applyMigrations(db, root);
    const token = credentials.token;
    const dataType = await request(new URL("/DataTypes", urls.app), {
      method: "POST",
      token,
      json: { id: "bench-binary", name: "Bench binary", allowedExtensions: ["bin"] },
    });
    const bytes = randomBytes(UPLOAD.mib * MiB);
    const checksum = compositeSha256(bytes, UPLOAD.partMib * MiB);
    const formBytes = bytes.subarray(0, UPLOAD.formMib * MiB);
    const formChecksum = await sha256(formBytes);

    // Warm-up: one small round trip of each kind, so no measurement pays for first-request compilation.
    const warm = bytes.subarray(0, 12 * MiB);
    await singlePut(urls, warm, "warmup");
    await multipartUpload(urls, token, dataType.id, warm, 2, compositeSha256(warm, UPLOAD.partMib * MiB));

    const single = [];
    const multipart = Object.fromEntries(UPLOAD.concurrencies.map((c) => [c, []]));
    const form = [];
    const formSingle = [];
    for (let r = 0; r < UPLOAD.rounds; r++) {
      single.push(await singlePut(urls, bytes, "big"));
      for (const c of UPLOAD.concurrencies) multipart[c].push(await multipartUpload(urls, token, dataType.id, bytes, c, checksum));
      formSingle.push(await singlePut(urls, formBytes, "form"));
      form.push(await formUpload(urls, token, dataType.id, formBytes, formChecksum));
      const line = UPLOAD.concurrencies.map((c) => `${c}x ${round(multipart[c].at(-1).total, 2)} s`).join(", ");
      console.log(
        `  round ${r + 1}: single put ${round(single.at(-1), 2)} s; multipart ${line}; form ${round(form.at(-1), 2)} s ` +
          `vs put ${round(formSingle.at(-1), 2)} s`,
      );
    }

    const bytesTotal = bytes.length;
    const singleS = median(single);
    const rows = UPLOAD.concurrencies.map((c) => {
      const totalS = median(multipart[c].map((x) => x.total));
      const ratios = multipart[c].map((x, i) => single[i] / x.total);
      return {
        concurrency: c,
        seconds: round(totalS, 3),
        completionSeconds: round(median(multipart[c].map((x) => x.completion)), 3),
        assembleSeconds: round(median(multipart[c].map((x) => x.assemble)), 3),
        hashSeconds: round(median(multipart[c].map((x) => x.hash)), 3),
        mbPerSecond: mbPerSecond(bytesTotal, totalS),
        ratio: round(median(ratios), 3),
        ratios: ratios.map((x) => round(x, 3)),
      };
    });
    const best = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    const formS = median(form);
    const formSingleS = median(formSingle);
    const result = {
      sizeBytes: bytesTotal,
      partBytes: UPLOAD.partMib * MiB,
      rounds: UPLOAD.rounds,
      single: { seconds: round(singleS, 3), mbPerSecond: mbPerSecond(bytesTotal, singleS), runs: single.map((x) => round(x, 3)) },
      multipart: rows,
      best: { concurrency: best.concurrency, ratio: best.ratio },
      target: 0.5,
      form: {
        sizeBytes: formBytes.length,
        seconds: round(formS, 3),
        mbPerSecond: mbPerSecond(formBytes.length, formS),
        singlePutSeconds: round(formSingleS, 3),
        singlePutMbPerSecond: mbPerSecond(formBytes.length, formSingleS),
        ratio: round(median(form.map((x, i) => formSingle[i] / x)), 3),
      },
    };
    console.log(`  ratio multipart/single put (throughput): ${rows.map((x) => `${x.concurrency}x ${x.ratio}`).join(", ")} (target >= 0.5)`);
    return result;
  } finally {
    await mf.dispose().catch(() => undefined);
    rmSync(join(benchDir, "upload-state"), { recursive: true, force: true });
  }
}

const verdict = (ok) => (ok ? "met" : "**NOT met**");

/** The upload section of the markdown summary for docs/benchmarks.md. */
export function uploadMarkdown(u) {
  const size = `${round(u.sizeBytes / MiB, 0)} MiB`;
  return [
    `### C. Upload: ${size} in ${round(u.partBytes / MiB, 0)} MiB parts through the Worker vs one R2 put`,
    "",
    `Median of ${u.rounds} alternating rounds; MB/s = 10^6 bytes per second of wall time from the first request to the last answer.`,
    "",
    "| how | s | MB/s | of which completion s (assemble + hash) | ratio to single put |",
    "| --- | ---: | ---: | ---: | ---: |",
    `| single R2 put (minimal Worker) | ${u.single.seconds} | ${u.single.mbPerSecond} | | 1 |`,
    ...u.multipart.map(
      (x) =>
        `| resumable upload, ${x.concurrency} part(s) in flight | ${x.seconds} | ${x.mbPerSecond} | ` +
        `${x.completionSeconds} (${x.assembleSeconds} + ${x.hashSeconds}) | ${x.ratio} |`,
    ),
    "",
    `Best ratio (throughput, multipart/single): **${u.best.ratio}** with ${u.best.concurrency} in flight (target >= ` +
      `${u.target}: ${verdict(u.best.ratio >= u.target)}); ` +
      `per round: ${u.multipart.find((x) => x.concurrency === u.best.concurrency).ratios.join(", ")}.`,
    "",
    `Form upload (POST /Files, streamed, hashed, ${round(u.form.sizeBytes / MiB, 0)} MiB): ${u.form.seconds} s, ` +
      `${u.form.mbPerSecond} MB/s; ` +
      `a single put of the same bytes: ${u.form.singlePutSeconds} s, ${u.form.singlePutMbPerSecond} MB/s; ratio ${u.form.ratio}.`,
  ].join("\n");
}

/** Runs the section, writes .bench/upload-results.json and prints its summary for docs/benchmarks.md. */
export async function runUploadSection(options) {
  const started = Date.now();
  const figures = await benchUpload(options);
  const results = { finishedAt: new Date().toISOString(), seconds: round((Date.now() - started) / 1000, 1), upload: figures };
  writeFileSync(join(options.benchDir, "upload-results.json"), `${JSON.stringify(results, null, 2)}\n`);
  options.step("upload bench done; .bench/upload-results.json written. Summary for docs/benchmarks.md:\n");
  console.log(uploadMarkdown(figures));
  return figures;
}
