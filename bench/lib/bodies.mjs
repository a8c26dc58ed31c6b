// Request bodies (issue 22): 95 MiB uploads through the full Worker with and without an
// Idempotency-Key, the workerd process's resident memory growth during each and its time.
//
//   form:      POST /Files, a multipart form whose body is 95 MiB (the route's limit): the file is
//              hashed and written to R2 in 10 MiB parts as it streams; with a key, the form's meaning
//              (each part's digest) and the raw bytes are hashed on the way too.
//   part:      PUT /Files/Uploads/{id}/Parts/1, one raw part of 95 MiB (upload with partSize 95 MiB).
//   replay:    the form again with the key of a finished request: the body is read and hashed
//              without being kept, and the first answer is replayed.
//
// Memory: the growth of workerd's resident set during one request, as the image bench measures it
// (bench/image-measure.mjs: VmHWM after `clear_refs` 5, minus VmRSS before). It is the whole
// process: the app's isolate, the local R2 and D1 (Durable Objects in the same workerd) and the
// allocator; so it is an upper bound of what the Worker's isolate needed. Targets alternate round by
// round in one workerd, after a warm-up of each.
//
// Env: BENCH_BODIES_MIB (95), BENCH_BODIES_ROUNDS (3).
import { createHash, randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { median, round } from "./load.mjs";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { peakGrowth, workerdPid } from "../image-measure.mjs";

const MiB = 1024 * 1024;
export const BODIES = {
  mib: Number(process.env.BENCH_BODIES_MIB ?? 95),
  rounds: Number(process.env.BENCH_BODIES_ROUNDS ?? 3),
  targetMiB: 32,
};

async function request(url, { method = "GET", token, json, body, headers = {} } = {}) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(json ? { "content-type": "application/json" } : {}),
      // A fresh connection per request (bench/lib/upload.mjs: a reused idle one fails large POSTs).
      connection: "close",
      ...headers,
    },
    body: json ? JSON.stringify(json) : body,
  });
  const text = await response.text();
  if (response.status < 200 || response.status > 299) throw new Error(`${method} ${url}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return { json: text ? JSON.parse(text) : undefined, replayed: response.headers.get("idempotent-replayed") === "true" };
}

/** A multipart body of exactly `total` bytes: DataTypeId, then a file filling the rest. */
function formBody(dataTypeId, total, seed) {
  const boundary = `bench-${seed}-${randomBytes(6).toString("hex")}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="DataTypeId"\r\n\r\n${dataTypeId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="File"; filename="bench.bin"\r\nContent-Type: ` +
      `application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const file = randomBytes(total - head.length - tail.length);
  return {
    body: Buffer.concat([head, file, tail]),
    contentType: `multipart/form-data; boundary=${boundary}`,
    checksum: createHash("sha256").update(file).digest("hex"),
    fileBytes: file.length,
  };
}

const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;

export async function benchBodies({ root, benchDir, appModules, credentials, step }) {
  const total = BODIES.mib * MiB;
  step(
    `request bodies: ${BODIES.mib} MiB uploads with and without Idempotency-Key; memory growth of workerd; ` +
      `${BODIES.rounds} alternating rounds`,
  );
  const stateDir = join(benchDir, "bodies-state");
  const { mf, url, db } = await startAppMiniflare({ root, stateDir, appModules, credentials });
  try {
    const { applyMigrations } = await import("./db.mjs");
    await applyMigrations(db, root);
    const pid = workerdPid();
    const token = credentials.token;
    const dataType = (
      await request(new URL("/DataTypes", url), {
        method: "POST",
        token,
        json: { id: "bench-bodies", name: "Bench bodies", allowedExtensions: ["bin"] },
      })
    ).json;
    const form = formBody(dataType.id, total, 1);
    const part = randomBytes(total);
    const partChecksum = createHash("sha256").update(part).digest("hex");

    const postForm = async (key) => {
      const res = await request(new URL("/Files", url), {
        method: "POST",
        token,
        body: form.body,
        headers: { "content-type": form.contentType, ...(key ? { "idempotency-key": key } : {}) },
      });
      if (res.json.size !== form.fileBytes || res.json.checksum !== form.checksum)
        throw new Error("form upload: the stored file differs from the sent bytes");
      // 95 MiB a time in the local R2's folder: removed at once (a replay answers for a file already removed).
      if (!res.replayed) await request(new URL(`/Files/${res.json.id}`, url), { method: "DELETE", token });
      return res;
    };
    const putPart = async (key) => {
      const upload = (
        await request(new URL("/Files/Uploads", url), {
          method: "POST",
          token,
          json: { dataTypeId: dataType.id, name: "bench.bin", size: total, partSize: total },
        })
      ).json;
      const res = await request(new URL(`/Files/Uploads/${upload.uploadId}/Parts/1`, url), {
        method: "PUT",
        token,
        body: part,
        headers: { "content-type": "application/octet-stream", ...(key ? { "idempotency-key": key } : {}) },
      });
      if (res.json.size !== total) throw new Error(`part upload: ${res.json.size} bytes stored, not ${total}`);
      const digest = (await db.prepare("SELECT checksum FROM upload_parts WHERE upload_id = ?1").bind(upload.uploadId).first())?.checksum;
      if (digest !== partChecksum) throw new Error("part upload: the part's digest differs from the sent bytes");
      await request(new URL(`/Files/Uploads/${upload.uploadId}`, url), { method: "DELETE", token }).catch(() => undefined);
      return res;
    };

    let keys = 0;
    const targets = [
      { name: "form, no key", run: () => postForm() },
      { name: "form, Idempotency-Key", run: () => postForm(`bench-form-${keys++}`) },
      { name: "part, no key", run: () => putPart() },
      { name: "part, Idempotency-Key", run: () => putPart(`bench-part-${keys++}`) },
    ];
    const replayKey = "bench-form-replay";
    const replay = {
      name: "form, replay of its key",
      run: async () => {
        const res = await postForm(replayKey);
        if (!res.replayed) throw new Error("the replay was not replayed");
        return res;
      },
    };

    step("  warm-up: one of each");
    for (const target of targets) await target.run();
    await postForm(replayKey);

    const runs = Object.fromEntries([...targets, replay].map((t) => [t.name, []]));
    for (let r = 0; r < BODIES.rounds; r++) {
      const line = [];
      for (const target of [...targets, replay]) {
        const start = process.hrtime.bigint();
        const measured = await peakGrowth(pid, () => target.run());
        const s = seconds(start);
        runs[target.name].push({ seconds: round(s, 3), growthMiB: measured.peakGrowthMiB, rssBeforeMiB: measured.rssBeforeMiB });
        line.push(`${target.name} ${round(s, 2)} s +${measured.peakGrowthMiB} MiB`);
      }
      console.log(`  round ${r + 1}: ${line.join("; ")}`);
    }

    const rows = Object.entries(runs).map(([name, list]) => ({
      name,
      seconds: round(median(list.map((x) => x.seconds)), 3),
      growthMiB: round(median(list.map((x) => x.growthMiB)), 1),
      maxGrowthMiB: round(Math.max(...list.map((x) => x.growthMiB)), 1),
      runs: list,
    }));
    const byName = Object.fromEntries(rows.map((x) => [x.name, x]));
    const ratio = (keyed, plain) => round(median(runs[keyed].map((x, i) => x.seconds / runs[plain][i].seconds)), 3);
    return {
      bodyBytes: total,
      rounds: BODIES.rounds,
      targetMiB: BODIES.targetMiB,
      rows,
      timeRatio: {
        form: ratio("form, Idempotency-Key", "form, no key"),
        part: ratio("part, Idempotency-Key", "part, no key"),
        replay: ratio("form, replay of its key", "form, no key"),
      },
      met: rows.every((x) => x.maxGrowthMiB <= BODIES.targetMiB),
      keyedMet: rows.filter((x) => !x.name.includes("no key")).every((x) => x.maxGrowthMiB <= BODIES.targetMiB),
      byName,
    };
  } finally {
    await mf.dispose().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export function bodiesMarkdown(b) {
  return [
    `### Request bodies: ${round(b.bodyBytes / MiB, 0)} MiB uploads with and without Idempotency-Key`,
    "",
    `Median of ${b.rounds} alternating rounds in one workerd; growth = peak resident set during the request minus ` +
      `the resident set before (whole workerd process).`,
    "",
    "| upload | s | growth MiB (median) | growth MiB (max) |",
    "| --- | ---: | ---: | ---: |",
    ...b.rows.map((x) => `| ${x.name} | ${x.seconds} | ${x.growthMiB} | ${x.maxGrowthMiB} |`),
    "",
    `Time with a key against without (median of per-round ratios): form ${b.timeRatio.form}, part ` +
      `${b.timeRatio.part}; a replay against a first form upload: ${b.timeRatio.replay}.`,
    ...b.rows.map(
      (x) =>
        `- ${x.name}: growth at most ${b.targetMiB} MiB in every round: ` +
        `${x.maxGrowthMiB <= b.targetMiB ? "met" : "**NOT met**"} (max ${x.maxGrowthMiB} MiB).`,
    ),
  ].join("\n");
}

export async function runBodiesSection(options) {
  const started = Date.now();
  const figures = await benchBodies(options);
  const { byName: _byName, ...kept } = figures;
  const results = {
    finishedAt: new Date().toISOString(),
    command: "npm run bench -- --only bodies",
    seconds: round((Date.now() - started) / 1000, 1),
    ...kept,
  };
  writeFileSync(join(options.benchDir, "bodies-results.json"), `${JSON.stringify(results, null, 2)}\n`);
  options.step("request bodies done; .bench/bodies-results.json written. Summary for docs/benchmarks.md:\n");
  console.log(bodiesMarkdown(figures));
  return figures;
}
