// Image bench (issue 4): producing Medium (<= 1000 px) and Small (<= 256 px) from the same 2, 6 and
// 12 MP JPEGs in workerd (the real pipeline, src/media/image) against sharp in Node (target: at most
// 4x sharp's time), with the peak memory of each.
//
// Time: workerd runs the pipeline in bench/image-worker.ts over a JPEG it holds in memory; the bench
// times the request from outside (workerd freezes the clock during synchronous work) and subtracts
// the median no-op round trip. sharp runs in this process (libvips, its default threads, cache off).
// Sizes alternate round by round; figures are medians after two warm-up runs each.
//
// Memory: the growth of the process's resident set during one run, in a FRESH process each time
// (workerd under Miniflare, or a Node child for sharp): the peak (VmHWM, reset just before through
// /proc/<pid>/clear_refs) minus the resident set before. It counts everything the run touched: JS
// heap, garbage not yet collected, ArrayBuffers, WASM memory, allocator slack; so it is an upper
// bound of what the isolate needed. photon's WASM memory is also read exactly from inside.
// Also measured: the same in workerd with photon doing the whole job (the naive way), and the full
// POST /Medias of the app Worker (multipart, checks, pipeline, SHA-256, R2 and D1).
//
// `npm run bench -- --only images` runs this section alone. Env: BENCH_IMAGE_ROUNDS (7).
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import {
  bands,
  buildImageWorker,
  cpuMs,
  isolateHeap,
  peakGrowth,
  photo,
  startApp,
  startImageWorker,
  workerdPid,
} from "./image-measure.mjs";
import { median, round } from "./lib/load.mjs";

const MiB = 1024 * 1024;

export const IMAGES = {
  rounds: Number(process.env.BENCH_IMAGE_ROUNDS ?? 7),
  sizes: [
    { label: "2 MP", name: "2mp", width: 1632, height: 1224 },
    { label: "6 MP", name: "6mp", width: 3000, height: 2000 },
    { label: "12 MP", name: "12mp", width: 4032, height: 3024 },
  ],
  target: 4,
};

async function request(url, path, init = {}) {
  const started = performance.now();
  const response = await fetch(new URL(path, url), init);
  const text = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return { ms, json: text ? JSON.parse(text) : undefined };
}

/** Wall and CPU time (this process, all threads, so libvips' workers too) of producing both sizes. */
async function sharpOnce(bytes) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await sharp(bytes).resize(1000, 1000, { fit: "inside", withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
  await sharp(bytes).resize(256, 256, { fit: "inside", withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

/** Wall time of one request and the CPU time workerd spent meanwhile. */
async function workerdOnce(url, path, pid) {
  const cpu = cpuMs(pid);
  const { ms, json } = await request(url, path, { method: "POST" });
  return { ms, cpuMs: cpuMs(pid) - cpu, json };
}

function mediaForm(bytes, name) {
  const form = new FormData();
  form.append("File", new File([bytes], name, { type: "image/jpeg" }));
  form.append("Type", "image");
  return form;
}

export async function runImageSection({ root, benchDir, appModules, credentials, step }) {
  const dir = join(benchDir, "images");
  mkdirSync(dir, { recursive: true });
  sharp.cache(false);
  step("images: generating the 2, 6 and 12 MP JPEGs and building the image Worker");
  const files = {};
  for (const size of IMAGES.sizes) {
    files[size.name] = await photo(size.width, size.height);
    writeFileSync(join(dir, `${size.name}.jpg`), files[size.name]);
    console.log(`  ${size.label}: ${size.width}x${size.height}, ${round(files[size.name].length / MiB, 2)} MiB`);
  }
  const modules = await buildImageWorker(root, join(benchDir, "image-worker"));

  step("images: time, workerd pipeline vs sharp, alternating rounds");
  const time = Object.fromEntries(
    IMAGES.sizes.map((s) => [s.name, { workerd: [], sharp: [], ratios: [], workerdCpu: [], sharpCpu: [], cpuRatios: [] }]),
  );
  let noopMs;
  let processed;
  {
    const { mf, url } = await startImageWorker(root, modules);
    try {
      const noops = [];
      for (let i = 0; i < 30; i++) noops.push((await request(url, "/noop")).ms);
      noopMs = median(noops);
      for (const size of IMAGES.sizes) await request(url, `/images/${size.name}`, { method: "PUT", body: files[size.name] });
      processed = {};
      for (const size of IMAGES.sizes) {
        for (let i = 0; i < 2; i++) processed[size.name] = (await request(url, `/process/${size.name}`, { method: "POST" })).json;
        for (let i = 0; i < 2; i++) await sharpOnce(files[size.name]);
      }
      const pid = workerdPid();
      for (let r = 0; r < IMAGES.rounds; r++) {
        for (const size of IMAGES.sizes) {
          const s = await sharpOnce(files[size.name]);
          const w = await workerdOnce(url, `/process/${size.name}`, pid);
          const t = time[size.name];
          t.sharp.push(s.ms);
          t.sharpCpu.push(s.cpuMs);
          t.workerd.push(w.ms - noopMs);
          t.workerdCpu.push(w.cpuMs);
          t.ratios.push((w.ms - noopMs) / s.ms);
          t.cpuRatios.push(w.cpuMs / s.cpuMs);
        }
      }
    } finally {
      await mf.dispose();
    }
  }

  step("images: peak memory, one fresh process per measurement");
  const memory = {};
  for (const size of IMAGES.sizes) {
    memory[size.name] = {};
    for (const mode of ["pipeline", "photon"]) {
      const { mf, url, inspector } = await startImageWorker(root, modules, true);
      try {
        await request(url, `/images/${size.name}`, { method: "PUT", body: files[size.name] });
        await request(url, "/warm");
        const isolateBefore = await isolateHeap(inspector);
        const pid = workerdPid();
        const run = await peakGrowth(pid, () => request(url, `/process/${size.name}?mode=${mode}`, { method: "POST" }));
        const isolateAfter = await isolateHeap(inspector);
        memory[size.name][mode] = {
          ...run,
          isolateBefore,
          isolateAfter,
          firstRunMs: round(run.result.ms - noopMs, 1),
          wasmPeakMiB: run.result.json.photon ? round(run.result.json.photon.peakMemoryBytes / MiB, 1) : null,
        };
        delete memory[size.name][mode].result;
      } finally {
        await mf.dispose();
      }
      console.log(
        `  ${size.label} ${mode}: peak growth ${memory[size.name][mode].peakGrowthMiB} MiB (first run ` +
          `${memory[size.name][mode].firstRunMs} ms)`,
      );
    }
    const child = JSON.parse(
      execFileSync("node", [join(root, "bench", "image-sharp.mjs"), join(dir, `${size.name}.jpg`)], { encoding: "utf8" })
        .trim()
        .split("\n")
        .pop(),
    );
    memory[size.name].sharp = {
      rssBeforeMiB: round(child.rssBeforeKiB / 1024, 1),
      peakGrowthMiB: round(child.deltaKiB / 1024, 1),
      firstRunMs: round(child.ms, 1),
    };
    console.log(`  ${size.label} sharp: peak growth ${memory[size.name].sharp.peakGrowthMiB} MiB`);
  }

  step("images: peak memory of the worst cases the limits admit");
  const worstCases = [
    {
      label: "12 MP progressive JPEG (every coefficient held: 36 MB)",
      name: "12mp-progressive",
      format: "jpeg",
      bytes: await sharp(files["12mp"]).jpeg({ quality: 85, progressive: true }).toBuffer(),
    },
    // PNGs as large as photon's 48 MiB budget admits (limits.ts): banded content keeps the files
    // small, since the budget counts the file too; decoding memory depends on the pixels only.
    {
      label: "1780x1780 8-bit RGBA PNG (at photon's budget)",
      name: "png8",
      format: "png",
      bytes: await bands(1780, 1780).png().toBuffer(),
    },
    {
      label: "1660x1660 16-bit RGBA PNG (at photon's budget)",
      name: "png16",
      format: "png",
      bytes: await bands(1660, 1660).toColourspace("rgb16").png().toBuffer(),
    },
  ];
  const worst = [];
  for (const c of worstCases) {
    const { mf, url, inspector } = await startImageWorker(root, modules, true);
    try {
      await request(url, `/images/${c.name}`, { method: "PUT", body: c.bytes });
      await request(url, "/warm");
      const isolateBefore = await isolateHeap(inspector);
      const run = await peakGrowth(workerdPid(), () => request(url, `/process/${c.name}?format=${c.format}`, { method: "POST" }));
      worst.push({
        label: c.label,
        bytes: c.bytes.length,
        isolateBefore,
        peakGrowthMiB: run.peakGrowthMiB,
        rssBeforeMiB: run.rssBeforeMiB,
        firstRunMs: round(run.result.ms - noopMs, 1),
        wasmPeakMiB: round(run.result.json.photon.peakMemoryBytes / MiB, 1),
        versions: run.result.json.versions.map((v) => `${v.size} ${v.width}x${v.height}`),
      });
    } finally {
      await mf.dispose();
    }
    console.log(`  ${c.label}: peak growth ${worst.at(-1).peakGrowthMiB} MiB, photon WASM ${worst.at(-1).wasmPeakMiB} MiB`);
  }

  step("images: the full POST /Medias in the app Worker");
  const endToEnd = {};
  for (const size of IMAGES.sizes) {
    const { mf, url, inspector } = await startApp(root, join(benchDir, "image-state"), appModules, credentials.jwksJson);
    const auth = { authorization: `Bearer ${credentials.token}` };
    try {
      const small = await photo(64, 48);
      await request(url, "/Medias", { method: "POST", headers: auth, body: mediaForm(small, "warm.jpg") });
      const isolateBefore = await isolateHeap(inspector);
      const pid = workerdPid();
      const first = await peakGrowth(pid, () =>
        request(url, "/Medias", { method: "POST", headers: auth, body: mediaForm(files[size.name], `${size.name}.jpg`) }),
      );
      const sizes = first.result.json.sizes.map((s) => `${s.name} ${s.width}x${s.height}`);
      const runs = [];
      for (let i = 0; i < 3; i++)
        runs.push(
          (await request(url, "/Medias", { method: "POST", headers: auth, body: mediaForm(files[size.name], `${size.name}.jpg`) })).ms,
        );
      endToEnd[size.name] = {
        isolateBefore,
        peakGrowthMiB: first.peakGrowthMiB,
        rssBeforeMiB: first.rssBeforeMiB,
        firstMs: round(first.result.ms, 1),
        medianMs: round(median(runs), 1),
        sizes,
      };
    } finally {
      await mf.dispose();
    }
    console.log(
      `  ${size.label}: POST /Medias ${endToEnd[size.name].medianMs} ms, peak growth ` +
        `${endToEnd[size.name].peakGrowthMiB} MiB, ${endToEnd[size.name].sizes.join(", ")}`,
    );
  }

  // The largest upload the route takes (20 MiB): a 48 MP photo at high quality, through the whole
  // POST /Medias (form parsing holds the body more than once, so this is the route's worst case).
  step("images: the largest upload, POST /Medias of a 48 MP JPEG under 20 MiB");
  let largest;
  {
    let big = await photo(8000, 6000);
    for (const quality of [98, 96, 93, 90]) {
      const candidate = await sharp(big).jpeg({ quality }).toBuffer();
      if (candidate.length <= 20 * MiB - 64 * 1024) {
        big = candidate;
        break;
      }
    }
    // The same bytes named .bin are stored as a document (no decoding): the difference between the
    // two runs is what recognising and resizing cost, the rest is parsing, hashing and storing
    // (Miniflare's R2 and D1 run inside the same workerd process, so their copies count here too).
    const uploadOnce = async (name) => {
      const { mf, url, inspector } = await startApp(root, join(benchDir, "image-state"), appModules, credentials.jwksJson);
      const auth = { authorization: `Bearer ${credentials.token}` };
      try {
        await request(url, "/Medias", { method: "POST", headers: auth, body: mediaForm(await photo(64, 48), "warm.jpg") });
        const isolateBefore = await isolateHeap(inspector);
        const run = await peakGrowth(workerdPid(), () =>
          request(url, "/Medias", { method: "POST", headers: auth, body: mediaForm(big, name) }),
        );
        return {
          isolateBefore,
          peakGrowthMiB: run.peakGrowthMiB,
          ms: round(run.result.ms, 1),
          sizes: run.result.json.sizes.map((x) => `${x.name} ${x.width}x${x.height}`),
        };
      } finally {
        await mf.dispose();
      }
    };
    largest = { bytes: big.length, ...(await uploadOnce("large.jpg")), asDocument: await uploadOnce("large.bin") };
    console.log(
      `  ${round(largest.bytes / MiB, 1)} MiB: peak growth ${largest.peakGrowthMiB} MiB (as a document: ` +
        `${largest.asDocument.peakGrowthMiB} MiB), ${largest.ms} ms, ${largest.sizes.join(", ")}`,
    );
  }

  const results = {
    finishedAt: new Date().toISOString(),
    rounds: IMAGES.rounds,
    noopMs: round(noopMs, 2),
    sizes: IMAGES.sizes.map((size) => ({
      ...size,
      bytes: files[size.name].length,
      decoded: processed[size.name].decoded,
      versions: processed[size.name].versions,
      workerdMs: round(median(time[size.name].workerd), 1),
      sharpMs: round(median(time[size.name].sharp), 1),
      ratio: round(median(time[size.name].ratios), 2),
      ratios: time[size.name].ratios.map((x) => round(x, 2)),
      workerdCpuMs: round(median(time[size.name].workerdCpu), 1),
      sharpCpuMs: round(median(time[size.name].sharpCpu), 1),
      cpuRatio: round(median(time[size.name].cpuRatios), 2),
      cpuRatios: time[size.name].cpuRatios.map((x) => round(x, 2)),
      memory: memory[size.name],
      endToEnd: endToEnd[size.name],
    })),
    worst,
    largest,
  };
  writeFileSync(join(benchDir, "images.json"), `${JSON.stringify(results, null, 2)}\n`);
  step("images: done; .bench/images.json written. Summary for docs/benchmarks.md:\n");
  console.log(imageSummary(results));
  return results;
}

export function imageSummary(r) {
  const verdict = (ok) => (ok ? "met" : "**NOT met**");
  return [
    `Run ${r.finishedAt}; ${r.rounds} alternating rounds after two warm-up runs each; no-op round trip ${r.noopMs} ms (subtracted).`,
    "",
    "Wall time (median; ratio = median of per-round ratios):",
    "",
    "| JPEG | bytes | decoded at | workerd ms | sharp ms | ratio (target <= 4) | per round |",
    "| --- | ---: | --- | ---: | ---: | ---: | --- |",
    ...r.sizes.map(
      (s) =>
        `| ${s.label} ${s.width}x${s.height} | ${s.bytes} | ${s.decoded.blockSize}/8 ` +
        `(${s.decoded.width}x${s.decoded.height}) | ${s.workerdMs} | ${s.sharpMs} | **${s.ratio}** ` +
        `${verdict(s.ratio <= IMAGES.target)} | ${s.ratios.join(", ")} |`,
    ),
    "",
    "CPU time (workerd process, all threads; sharp: this process, all threads, libvips' workers included):",
    "",
    "| JPEG | workerd CPU ms | sharp CPU ms | ratio | per round |",
    "| --- | ---: | ---: | ---: | --- |",
    ...r.sizes.map(
      (s) =>
        `| ${s.label} | ${s.workerdCpuMs} | ${s.sharpCpuMs} | **${s.cpuRatio}** ${verdict(s.cpuRatio <= IMAGES.target)} ` +
        `| ${s.cpuRatios.join(", ")} |`,
    ),
    "",
    "Peak memory: growth of the process's resident set during one run in a fresh process (MiB; first-run ms in brackets):",
    "",
    "| JPEG | workerd pipeline | of it, photon WASM | isolate before: JS heap + ArrayBuffers | workerd, photon " +
      "alone (naive) | sharp (Node) | POST /Medias (app Worker) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...r.sizes.map(
      (s) =>
        `| ${s.label} | **${s.memory.pipeline.peakGrowthMiB}** (${s.memory.pipeline.firstRunMs}) | ` +
        `${s.memory.pipeline.wasmPeakMiB} | ${s.memory.pipeline.isolateBefore.heapMiB} + ` +
        `${s.memory.pipeline.isolateBefore.arrayBuffersMiB} | ${s.memory.photon.peakGrowthMiB} ` +
        `(${s.memory.photon.firstRunMs}) | ${s.memory.sharp.peakGrowthMiB} (${s.memory.sharp.firstRunMs}) | ` +
        `**${s.endToEnd.peakGrowthMiB}** (${s.endToEnd.firstMs}; median ${s.endToEnd.medianMs} ms; app isolate before: ` +
        `${s.endToEnd.isolateBefore.heapMiB} + ${s.endToEnd.isolateBefore.arrayBuffersMiB}) |`,
    ),
    "",
    "Worst cases the limits admit (workerd pipeline, fresh process):",
    "",
    "| input | bytes | isolate before: JS heap + ArrayBuffers MiB | peak growth MiB | of it, photon WASM MiB | first run ms | versions |",
    "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ...r.worst.map(
      (w) =>
        `| ${w.label} | ${w.bytes} | ${w.isolateBefore.heapMiB} + ${w.isolateBefore.arrayBuffersMiB} | ` +
        `**${w.peakGrowthMiB}** | ${w.wasmPeakMiB} | ${w.firstRunMs} | ${w.versions.join(", ")} |`,
    ),
    "",
    `The largest upload POST /Medias takes: a ${r.largest.bytes}-byte 8000x6000 JPEG, app isolate before ` +
      `${r.largest.isolateBefore.heapMiB} + ${r.largest.isolateBefore.arrayBuffersMiB} MiB, ` +
      `peak growth **${r.largest.peakGrowthMiB} MiB**, ${r.largest.ms} ms (first request), ${r.largest.sizes.join(", ")}; ` +
      `the same bytes uploaded as a document (stored, not decoded): ${r.largest.asDocument.peakGrowthMiB} MiB.`,
  ].join("\n");
}

/**
 * PNG (issue 11): a 12 MP PNG photo, time against sharp in alternating rounds (target: at most 4x),
 * and the peak memory of the row-by-row decoder at 12 and 48 MP in a fresh process each. The 48 MP
 * one has banded content so the file stays small (the memory of decoding does not depend on it).
 */
export async function runPngSection({ root, benchDir, step }) {
  const dir = join(benchDir, "images");
  mkdirSync(dir, { recursive: true });
  sharp.cache(false);
  step("png: generating a 12 MP PNG photo and a 48 MP banded PNG, building the image Worker");
  const inputs = [
    {
      label: "12 MP PNG photo (RGB, 8-bit)",
      name: "png-12mp",
      bytes: await sharp(await photo(4032, 3024))
        .png({ compressionLevel: 6 })
        .toBuffer(),
      timed: true,
    },
    { label: "48 MP PNG (RGBA, 8-bit, banded)", name: "png-48mp", bytes: await bands(8000, 6000).png().toBuffer(), timed: false },
    {
      label: "12 MP PNG (RGBA, 16-bit, banded)",
      name: "png-12mp-16",
      bytes: await bands(4032, 3024).toColourspace("rgb16").png().toBuffer(),
      timed: false,
    },
  ];
  for (const input of inputs) console.log(`  ${input.label}: ${round(input.bytes.length / MiB, 1)} MiB`);
  const modules = await buildImageWorker(root, join(benchDir, "image-worker"));
  const timed = inputs.filter((i) => i.timed);
  const time = Object.fromEntries(timed.map((i) => [i.name, { workerd: [], sharp: [], ratios: [] }]));
  let noopMs;
  {
    const { mf, url } = await startImageWorker(root, modules);
    try {
      const noops = [];
      for (let i = 0; i < 30; i++) noops.push((await request(url, "/noop")).ms);
      noopMs = median(noops);
      for (const input of timed) {
        await request(url, `/images/${input.name}`, { method: "PUT", body: input.bytes });
        for (let i = 0; i < 2; i++) await request(url, `/process/${input.name}?format=png`, { method: "POST" });
        for (let i = 0; i < 2; i++) await sharpOnce(input.bytes);
      }
      step("png: time, workerd pipeline vs sharp, alternating rounds");
      for (let r = 0; r < IMAGES.rounds; r++) {
        for (const input of timed) {
          const s = await sharpOnce(input.bytes);
          const w = await request(url, `/process/${input.name}?format=png`, { method: "POST" });
          time[input.name].sharp.push(s.ms);
          time[input.name].workerd.push(w.ms - noopMs);
          time[input.name].ratios.push((w.ms - noopMs) / s.ms);
        }
      }
    } finally {
      await mf.dispose();
    }
  }
  step("png: peak memory, one fresh process per measurement");
  const memory = [];
  for (const input of inputs) {
    const { mf, url, inspector } = await startImageWorker(root, modules, true);
    try {
      await request(url, `/images/${input.name}`, { method: "PUT", body: input.bytes });
      await request(url, "/warm");
      const isolateBefore = await isolateHeap(inspector);
      const run = await peakGrowth(workerdPid(), () => request(url, `/process/${input.name}?format=png`, { method: "POST" }));
      const isolateAfter = await isolateHeap(inspector);
      memory.push({
        label: input.label,
        bytes: input.bytes.length,
        isolateBefore,
        isolateAfter,
        peakGrowthMiB: run.peakGrowthMiB,
        firstRunMs: round(run.result.ms - noopMs, 1),
        decoded: run.result.json.decoded,
        versions: run.result.json.versions.map((v) => `${v.size} ${v.width}x${v.height}`),
      });
    } finally {
      await mf.dispose();
    }
    console.log(
      `  ${input.label}: peak growth ${memory.at(-1).peakGrowthMiB} MiB (isolate after: JS heap ` +
        `${memory.at(-1).isolateAfter.heapMiB} + ArrayBuffers ${memory.at(-1).isolateAfter.arrayBuffersMiB} MiB), first ` +
        `run ${memory.at(-1).firstRunMs} ms, ${memory.at(-1).versions.join(", ")}`,
    );
  }
  const results = {
    finishedAt: new Date().toISOString(),
    rounds: IMAGES.rounds,
    noopMs: round(noopMs, 2),
    time: timed.map((i) => ({
      label: i.label,
      bytes: i.bytes.length,
      workerdMs: round(median(time[i.name].workerd), 1),
      sharpMs: round(median(time[i.name].sharp), 1),
      ratio: round(median(time[i.name].ratios), 2),
      ratios: time[i.name].ratios.map((x) => round(x, 2)),
    })),
    memory,
  };
  for (const t of results.time)
    console.log(`  ${t.label}: workerd ${t.workerdMs} ms, sharp ${t.sharpMs} ms, ratio ${t.ratio} (target <= ${IMAGES.target})`);
  writeFileSync(join(benchDir, "png.json"), `${JSON.stringify(results, null, 2)}\n`);
  return results;
}
