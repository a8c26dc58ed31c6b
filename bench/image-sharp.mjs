// Child process of the image bench: sharp's peak memory for producing Medium and Small from one
// JPEG, measured as the growth of this process's resident set (VmHWM after, reset before, minus
// VmRSS before), in a fresh process so that nothing earlier is resident. Prints one JSON line.
//   node bench/image-sharp.mjs <file.jpg>
import { readFileSync, writeFileSync } from "node:fs";
import sharp from "sharp";

const file = process.argv[2];
const status = () => readFileSync("/proc/self/status", "utf8");
const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status())?.[1] ?? NaN);

sharp.cache(false);
const bytes = readFileSync(file);
// Load libvips' JPEG paths once on a tiny image, so the measurement is the work, not the loading.
const tiny = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#808080" } })
  .jpeg()
  .toBuffer();
await sharp(tiny).resize(32).jpeg().toBuffer();

writeFileSync("/proc/self/clear_refs", "5");
const before = kib("VmRSS");
const started = performance.now();
const medium = await sharp(bytes).resize(1000, 1000, { fit: "inside", withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
const small = await sharp(bytes).resize(256, 256, { fit: "inside", withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
const ms = performance.now() - started;
const peak = kib("VmHWM");
console.log(
  JSON.stringify({ rssBeforeKiB: before, peakKiB: peak, deltaKiB: peak - before, ms, medium: medium.length, small: small.length }),
);
