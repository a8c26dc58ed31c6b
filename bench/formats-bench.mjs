/**
 * Every raster format (issue 11): for a 12 MP photo in each format, the wall time of making Medium
 * and Small in workerd (the real pipeline, bench/image-worker.ts) against sharp in the same run, in
 * alternating rounds; and for 12 and 48 MP, the peak growth of a fresh workerd process and the
 * isolate's heap after the work. A format the pipeline refuses at a size is recorded with its reason.
 * The 12 MP inputs are photo-like (noise: a 12 MP PNG, BMP or TIFF of it is over the 20 MiB upload
 * limit, and is timed anyway, as the decoding work it is); the 48 MP ones are smooth, so the lossless
 * formats stay as small as they can (a 48 MP BMP is 137 MiB whatever it shows).
 *
 * HEIC needs Debian's heif-enc (libheif-examples) to make its inputs: iPhone-like grids of 512 x 512
 * tiles, assembled by test/fixtures/corpus/heif-grid.mjs. Grid AVIFs need avifenc (libavif-bin).
 * Without them, those inputs are left out and the run says so.
 * sharp's prebuilt libvips reads neither BMP nor HEIC (no HEVC decoder), so those two have no ratio.
 *
 *   npm run bench -- --only formats      (BENCH_IMAGE_ROUNDS=7 by default)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { heifGrid } from "../test/fixtures/corpus/heif-grid.mjs";
import { buildImageWorker, isolateHeap, peakGrowth, photoPixels, startImageWorker, workerdPid } from "./image-measure.mjs";
import { median, round } from "./lib/load.mjs";

const MiB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_IMAGE_ROUNDS ?? 7);
const TARGET = 4;
/** POST /Medias takes files up to 20 MiB (src/media/upload.ts, MEDIA_MAX_BYTES). */
const UPLOAD_LIMIT = 20 * MiB;

/** Smooth gradients with structure every 64 pixels: what a 48 MP lossless file must be to stay small. */
function smoothPixels(width, height) {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = (x * 255) / width;
      raw[i + 1] = (y * 255) / height;
      raw[i + 2] = (x >> 6) & 1 ? 200 : 60;
    }
  }
  return raw;
}

/** A bottom-up BMP's file and info headers (40 bytes), then its palette of [r, g, b] entries. */
function bmpHeader(width, height, bits, compression, dataLength, palette = []) {
  const header = Buffer.alloc(54 + palette.length * 4);
  header.write("BM", 0, "ascii");
  header.writeUInt32LE(header.length + dataLength, 2);
  header.writeUInt32LE(header.length, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(width, 18);
  header.writeInt32LE(height, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(bits, 28);
  header.writeUInt32LE(compression, 30);
  header.writeUInt32LE(dataLength, 34);
  header.writeUInt32LE(palette.length, 46);
  palette.forEach(([r, g, b], i) => header.set([b, g, r, 0], 54 + i * 4));
  return header;
}

/** A 24-bit bottom-up BMP (sharp writes none). */
function bmp(raw, width, height) {
  const stride = Math.ceil((width * 3) / 4) * 4;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const row = (height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      pixels[row + x * 3] = raw[i + 2];
      pixels[row + x * 3 + 1] = raw[i + 1];
      pixels[row + x * 3 + 2] = raw[i];
    }
  }
  return Buffer.concat([bmpHeader(width, height, 24, 0, pixels.length), pixels]);
}

/** An 8-bit run-length encoded BMP (BI_RLE8) of the picture in a 6 x 6 x 6 colour cube: encoded runs only, up to 255 long. */
function rle8Bmp(raw, width, height) {
  const level = (v) => Math.min(5, Math.round(v / 51));
  const lines = [];
  for (let y = height - 1; y >= 0; y--) {
    const line = [];
    let run = 0;
    let previous = -1;
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const index = level(raw[i]) * 36 + level(raw[i + 1]) * 6 + level(raw[i + 2]);
      if (index === previous && run < 255) run++;
      else {
        if (run) line.push(run, previous);
        previous = index;
        run = 1;
      }
    }
    line.push(run, previous, 0, 0);
    lines.push(Buffer.from(line));
  }
  const data = Buffer.concat([...lines, Buffer.from([0, 1])]);
  const cube = Array.from({ length: 216 }, (_, i) => [((i / 36) | 0) * 51, (((i / 6) | 0) % 6) * 51, (i % 6) * 51]);
  return Buffer.concat([bmpHeader(width, height, 8, 1, data.length, cube), data]);
}

function has(tool) {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const hasHeifEnc = () => has("heif-enc");

/** A grid AVIF from libavif's avifenc: the picture in tiles of about 500 x 500 (AVIF_MAX_PIXELS bounds one coded picture). */
async function avifGrid(raw, width, height, columns, rows, work) {
  await sharp(raw, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toFile(join(work, "avif-grid.png"));
  execFileSync(
    "avifenc",
    [
      "-j",
      "all",
      "-s",
      "9",
      "--min",
      "25",
      "--max",
      "35",
      "-y",
      "420",
      "--grid",
      `${columns}x${rows}`,
      join(work, "avif-grid.png"),
      join(work, "grid.avif"),
    ],
    { stdio: "ignore" },
  );
  return readFileSync(join(work, "grid.avif"));
}

/** An iPhone-like HEIC: the picture cut into 512 x 512 tiles, each encoded by heif-enc, assembled as a grid. */
async function heicGrid(raw, width, height, work) {
  const tile = 512;
  const columns = Math.ceil(width / tile);
  const rows = Math.ceil(height / tile);
  const tiles = [];
  for (let ty = 0; ty < rows; ty++) {
    for (let tx = 0; tx < columns; tx++) {
      const part = Buffer.alloc(tile * tile * 3);
      for (let y = 0; y < tile; y++) {
        const sy = Math.min(height - 1, ty * tile + y);
        for (let x = 0; x < tile; x++) {
          const sx = Math.min(width - 1, tx * tile + x);
          part.set(raw.subarray((sy * width + sx) * 3, (sy * width + sx) * 3 + 3), (y * tile + x) * 3);
        }
      }
      await sharp(part, { raw: { width: tile, height: tile, channels: 3 } })
        .png({ compressionLevel: 1 })
        .toFile(join(work, "tile.png"));
      execFileSync("heif-enc", ["-q", "80", "-o", join(work, "tile.heic"), join(work, "tile.png")], { stdio: "ignore" });
      tiles.push(readFileSync(join(work, "tile.heic")));
    }
  }
  return heifGrid({ tiles, columns, width, height, tileWidth: tile, tileHeight: tile });
}

/** Each format's file of a picture; `sharp` says whether sharp can read it for the time ratio. */
async function inputs(width, height, label, work, pixels = photoPixels) {
  const raw = pixels(width, height);
  const img = () => sharp(raw, { raw: { width, height, channels: 3 } });
  const list = [
    { format: "jpeg", label: `${label} JPEG (q85, 4:2:0)`, bytes: await img().jpeg({ quality: 85 }).toBuffer(), sharp: true },
    { format: "png", label: `${label} PNG (RGB, 8-bit)`, bytes: await img().png({ compressionLevel: 6 }).toBuffer(), sharp: true },
    {
      format: "png",
      label: `${label} PNG (interlaced, Adam7)`,
      bytes: await img().png({ compressionLevel: 6, progressive: true }).toBuffer(),
      sharp: true,
    },
    { format: "gif", label: `${label} GIF (256 colours)`, bytes: await img().gif({ colours: 256, effort: 1 }).toBuffer(), sharp: true },
    { format: "bmp", label: `${label} BMP (24-bit)`, bytes: bmp(raw, width, height), sharp: false },
    { format: "bmp", label: `${label} BMP (RLE8, 216 colours)`, bytes: rle8Bmp(raw, width, height), sharp: false },
    {
      format: "tiff",
      label: `${label} TIFF (LZW, predictor, strips)`,
      bytes: await img().tiff({ compression: "lzw", predictor: "horizontal" }).toBuffer(),
      sharp: true,
    },
    {
      format: "tiff",
      label: `${label} TIFF (Deflate, 256 x 256 tiles)`,
      bytes: await img().tiff({ compression: "deflate", tile: true, tileWidth: 256, tileHeight: 256 }).toBuffer(),
      sharp: true,
    },
    { format: "webp", label: `${label} WebP (lossy, q80)`, bytes: await img().webp({ quality: 80 }).toBuffer(), sharp: true },
    { format: "webp", label: `${label} WebP (lossless)`, bytes: await img().webp({ lossless: true, effort: 1 }).toBuffer(), sharp: true },
    { format: "avif", label: `${label} AVIF (q50)`, bytes: await img().avif({ quality: 50, effort: 0 }).toBuffer(), sharp: true },
  ];
  if (has("avifenc")) {
    const [columns, rows] = width === 4032 ? [8, 6] : [16, 12];
    list.push({
      format: "avif",
      label: `${label} AVIF (grid of ${width / columns} x ${height / rows} tiles, 4:2:0, avifenc quantiser 25-35)`,
      bytes: await avifGrid(raw, width, height, columns, rows, work),
      sharp: true,
    });
  }
  if (hasHeifEnc())
    list.push({
      format: "heic",
      label: `${label} HEIC (grid of 512 x 512 tiles, as iPhones write)`,
      bytes: await heicGrid(raw, width, height, work),
      sharp: false,
    });
  return list.map((input, i) => ({ ...input, name: `${label.replace(/\W/g, "")}-${i}` }));
}

async function request(url, path, init = {}) {
  const started = performance.now();
  const response = await fetch(new URL(path, url), init);
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return { ms: performance.now() - started, json: text ? JSON.parse(text) : undefined };
}

async function sharpOnce(bytes) {
  const started = performance.now();
  await sharp(bytes).resize(1000, 1000, { fit: "inside", withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
  await sharp(bytes).resize(256, 256, { fit: "inside", withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
  return performance.now() - started;
}

export async function runFormatsSection({ root, benchDir, step }) {
  const work = mkdtempSync(join(tmpdir(), "formats-bench-"));
  mkdirSync(benchDir, { recursive: true });
  sharp.cache(false);
  const missing = [
    hasHeifEnc() ? "" : "heif-enc not installed: no HEIC",
    has("avifenc") ? "" : "avifenc not installed: no grid AVIF",
  ].filter(Boolean);
  step(`formats: making 12 MP inputs in every format${missing.length ? ` (${missing.join("; ")})` : ""}`);
  const twelve = await inputs(4032, 3024, "12 MP", work);
  // An AVIF that is not a grid is decoded whole up to AVIF_MAX_PIXELS (2 MP): its largest accepted size, for time and memory.
  const avifRaw = photoPixels(1632, 1224);
  const avifLargest = {
    format: "avif",
    label: "2 MP AVIF (1632 x 1224, q50; AVIF's limit)",
    name: "avif-2mp",
    bytes: await sharp(avifRaw, { raw: { width: 1632, height: 1224, channels: 3 } })
      .avif({ quality: 50, effort: 0 })
      .toBuffer(),
    sharp: true,
  };
  twelve.push(avifLargest);
  if (hasHeifEnc()) {
    // A HEIC that is one coded picture (what heif-enc and most cameras other than iPhones write) is
    // decoded whole by libheif up to HEIF_MAX_TILE_PIXELS (8 MP): its largest accepted size.
    await sharp(photoPixels(3264, 2448), { raw: { width: 3264, height: 2448, channels: 3 } })
      .png({ compressionLevel: 1 })
      .toFile(join(work, "single.png"));
    execFileSync("heif-enc", ["-q", "80", "-o", join(work, "single.heic"), join(work, "single.png")], { stdio: "ignore" });
    twelve.push({
      format: "heic",
      label: "8 MP HEIC (3264 x 2448, one coded picture; its limit)",
      name: "heic-8mp",
      bytes: readFileSync(join(work, "single.heic")),
      sharp: false,
    });
  }
  step("formats: making 48 MP inputs (smooth content, so the lossless files stay near the upload limit)");
  const fortyEight = await inputs(8000, 6000, "48 MP", work, smoothPixels);
  const overLimit = (input) =>
    input.bytes.length > UPLOAD_LIMIT
      ? ` (over the ${UPLOAD_LIMIT / MiB} MiB upload limit: POST /Medias refuses it; measured for the pipeline alone)`
      : "";
  for (const input of [...twelve, ...fortyEight])
    console.log(`  ${input.label}: ${round(input.bytes.length / MiB, 1)} MiB${overLimit(input)}`);
  const modules = await buildImageWorker(root, join(benchDir, "image-worker"));

  step("formats: time of Medium and Small at 12 MP, workerd vs sharp, alternating rounds");
  const time = [];
  {
    const { mf, url } = await startImageWorker(root, modules);
    try {
      const noops = [];
      for (let i = 0; i < 20; i++) noops.push((await request(url, "/noop")).ms);
      const noopMs = median(noops);
      for (const input of twelve) {
        await request(url, `/images/${input.name}`, { method: "PUT", body: input.bytes });
        const path = `/process/${input.name}?format=${input.format}&refusals=1`;
        const first = await request(url, path, { method: "POST" });
        if (first.json.refused) {
          time.push({ label: input.label, refused: first.json.refused });
          console.log(`  ${input.label}: refused: ${first.json.refused}`);
          continue;
        }
        if (input.sharp) await sharpOnce(input.bytes);
        const workerd = [];
        const withSharp = [];
        const ratios = [];
        for (let r = 0; r < ROUNDS; r++) {
          const s = input.sharp ? await sharpOnce(input.bytes) : null;
          const w = (await request(url, path, { method: "POST" })).ms - noopMs;
          workerd.push(w);
          if (s !== null) {
            withSharp.push(s);
            ratios.push(w / s);
          }
        }
        const row = {
          label: input.label,
          workerdMs: round(median(workerd), 1),
          sharpMs: input.sharp ? round(median(withSharp), 1) : null,
          ratio: input.sharp ? round(median(ratios), 2) : null,
          ratios: ratios.map((x) => round(x, 2)),
          versions: first.json.versions.map((v) => `${v.size} ${v.width}x${v.height}`),
        };
        time.push(row);
        console.log(
          `  ${row.label}: workerd ${row.workerdMs} ms, sharp ${row.sharpMs ?? "cannot read it"} ms, ratio ` +
            `${row.ratio ?? "-"} (target <= ${TARGET}); ${row.versions.join(", ")}`,
        );
      }
    } finally {
      await mf.dispose();
    }
  }

  step("formats: peak memory at 12 and 48 MP, one fresh workerd per measurement");
  const memory = [];
  for (const input of [...twelve, ...fortyEight]) {
    const { mf, url, inspector } = await startImageWorker(root, modules, true);
    try {
      await request(url, `/images/${input.name}`, { method: "PUT", body: input.bytes });
      await request(url, "/warm");
      const run = await peakGrowth(workerdPid(), () =>
        request(url, `/process/${input.name}?format=${input.format}&refusals=1`, { method: "POST" }),
      );
      const isolate = await isolateHeap(inspector);
      const row = {
        label: input.label,
        fileMiB: round(input.bytes.length / MiB, 1),
        overUploadLimit: input.bytes.length > UPLOAD_LIMIT,
        peakGrowthMiB: run.peakGrowthMiB,
        isolateAfter: isolate,
        refused: run.result.json.refused ?? null,
        versions: run.result.json.versions.map((v) => `${v.size} ${v.width}x${v.height}`),
      };
      memory.push(row);
      console.log(
        `  ${row.label} (${row.fileMiB} MiB): peak growth ${row.peakGrowthMiB} MiB, isolate after: JS heap ` +
          `${isolate.heapMiB} + ArrayBuffers ${isolate.arrayBuffersMiB} ` +
          `MiB${row.refused ? `; refused: ${row.refused}` : `; ${row.versions.join(", ")}`}`,
      );
    } finally {
      await mf.dispose();
    }
  }
  const results = {
    finishedAt: new Date().toISOString(),
    command: "npm run bench -- --only formats",
    rounds: ROUNDS,
    target: TARGET,
    time,
    memory,
  };
  writeFileSync(join(benchDir, "formats.json"), `${JSON.stringify(results, null, 2)}\n`);
  return results;
}
