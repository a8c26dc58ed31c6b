// Helpers of the image bench (bench/image-bench.mjs): sample images, the image Worker's build,
// Miniflare instances, and measurements of a workerd process (CPU, resident set) and of the
// isolate inside it (V8's heap figures over the inspector).
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import sharp from "sharp";
import WebSocket from "ws";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { AUDIENCE, ISSUER } from "./lib/auth.mjs";
import { applyMigrations } from "./lib/db.mjs";
import { round } from "./lib/load.mjs";

const LOOPBACK = "127.0.0.1";
const MiB = 1024 * 1024;

/**
 * A photo-like JPEG: structure at several scales plus sensor-like noise, quality 85, 4:2:0, as
 * phones write them (about 0.2 bytes per pixel; a flat gradient would flatter any decoder).
 */
export function photoPixels(width, height) {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 12345;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const noise = ((seed >> 16) % 24) - 12;
      const i = (y * width + x) * 3;
      raw[i] = Math.max(0, Math.min(255, 128 + 80 * Math.sin(x / 37) * Math.cos(y / 53) + noise));
      raw[i + 1] = Math.max(0, Math.min(255, (x * 255) / width + noise));
      raw[i + 2] = Math.max(0, Math.min(255, (y * 255) / height + 40 * Math.sin((x + y) / 11) + noise));
    }
  }
  return raw;
}

export async function photo(width, height) {
  const raw = photoPixels(width, height);
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 85, chromaSubsampling: "4:2:0" })
    .toBuffer();
}

/** RGBA with a different colour every 8 rows and a half-transparent right half: compresses to little. */
export function bands(width, height) {
  const raw = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      raw[i] = (y >> 3) * 7;
      raw[i + 1] = (y >> 3) * 13;
      raw[i + 2] = 255 - ((y >> 3) & 255);
      raw[i + 3] = x < width / 2 ? 255 : 128;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 4 } });
}

/**
 * Bundles bench/image-worker.ts; every .wasm it imports (photon, libheif) stays a separate
 * CompiledWasm module beside it, as wrangler's rule makes them, and Node's fs and path resolve to the
 * same empty module wrangler.toml's [alias] names.
 */
export async function buildImageWorker(root, outdir) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const wasm = new Map();
  const emptyModule = join(root, "src/media/image/heif/node-builtins.ts");
  await build({
    entryPoints: [join(root, "bench", "image-worker.ts")],
    outfile: join(outdir, "image-worker.js"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    logLevel: "warning",
    alias: { fs: emptyModule, path: emptyModule },
    plugins: [
      {
        name: "compiled-wasm",
        setup(b) {
          b.onResolve({ filter: /\.wasm$/ }, (args) => {
            const source = join(args.resolveDir, args.path);
            const name = source.split("/").at(-1);
            if (!wasm.has(name)) {
              copyFileSync(source, join(outdir, name));
              wasm.set(name, source);
            }
            return { path: `./${name}`, external: true };
          });
        },
      },
    ],
  });
  return [
    { type: "ESModule", path: join(outdir, "image-worker.js") },
    ...[...wasm.keys()].map((name) => ({ type: "CompiledWasm", path: join(outdir, name) })),
  ];
}

function appWorkerOptions(root) {
  const configPath = join(root, "wrangler.toml");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(configPath);
  const vars = unstable_readConfig({ config: configPath }).vars ?? {};
  const { assets: _assets, bindings = {}, ...options } = workerOptions;
  return { ...options, bindings: Object.fromEntries(Object.entries(bindings).filter(([name]) => Object.hasOwn(vars, name))) };
}

const quiet = (stdout, stderr) => {
  stdout.resume();
  stderr.resume();
};

let inspectorPort = 19000 + (process.pid % 500) * 2;

/** With `inspect`, the V8 inspector is on, so `isolateHeap` can read the isolate's own figures. */
export async function startImageWorker(root, modules, inspect = false) {
  const app = appWorkerOptions(root);
  const port = inspect ? inspectorPort++ : undefined;
  const mf = new Miniflare({
    host: LOOPBACK,
    port: 0,
    handleRuntimeStdio: quiet,
    ...(inspect ? { inspectorPort: port } : {}),
    workers: [
      {
        name: "images",
        compatibilityDate: app.compatibilityDate,
        modules,
        modulesRoot: join(modules[0].path, ".."),
        unsafeDirectSockets: [{ host: LOOPBACK, port: 0 }],
        ...(inspect ? { unsafeInspectorProxy: true } : {}),
      },
    ],
  });
  await mf.ready;
  return { mf, url: await mf.unsafeGetDirectURL("images"), inspector: port };
}

/**
 * The isolate's memory as V8 reports it over the inspector (Runtime.getHeapUsage): the JS heap in
 * use plus ArrayBuffer backing stores, in MiB. A snapshot, not a peak (garbage included; workerd's
 * inspector does not run HeapProfiler.collectGarbage).
 */
export async function isolateHeap(port) {
  const targets = await (await fetch(`http://${LOOPBACK}:${port}/json`)).json();
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  try {
    const usage = await new Promise((resolve) => {
      ws.on("message", (message) => {
        const reply = JSON.parse(String(message));
        if (reply.id === 1) resolve(reply.result);
      });
      ws.send(JSON.stringify({ id: 1, method: "Runtime.getHeapUsage" }));
    });
    return { heapMiB: round(usage.usedSize / MiB, 1), arrayBuffersMiB: round((usage.backingStorageSize ?? 0) / MiB, 1) };
  } finally {
    ws.close();
  }
}

export async function startApp(root, stateDir, appModules, jwksJson) {
  rmSync(stateDir, { recursive: true, force: true });
  const app = appWorkerOptions(root);
  const port = inspectorPort++;
  const mf = new Miniflare({
    host: LOOPBACK,
    port: 0,
    inspectorPort: port,
    defaultPersistRoot: stateDir,
    d1Persist: join(stateDir, "d1"),
    r2Persist: join(stateDir, "r2"),
    durableObjectsPersist: join(stateDir, "do"),
    handleRuntimeStdio: quiet,
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
          LOG_LEVEL: "warn",
        },
        unsafeDirectSockets: [{ host: LOOPBACK, port: 0 }],
        unsafeInspectorProxy: true,
      },
    ],
  });
  await mf.ready;
  await applyMigrations(await mf.getD1Database("DB", "app"), root);
  return { mf, url: await mf.unsafeGetDirectURL("app"), inspector: port };
}

/** The workerd process Miniflare started (a child of this process). */
export function workerdPid() {
  const pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = /\((.*)\)/.exec(stat)?.[1];
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "workerd" && ppid === process.pid) return Number(pid);
    } catch {
      // the process ended while we looked
    }
  }
  throw new Error("no workerd child process found");
}

/** CPU time the process has used so far (all its threads), in ms, from /proc/<pid>/task/<tid>/schedstat. */
export function cpuMs(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended while we looked
    }
  }
  return ns / 1e6;
}

const statusKiB = (pid, name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);

/** Runs `work` and returns the process's peak resident growth during it, in MiB. */
export async function peakGrowth(pid, work) {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = statusKiB(pid, "VmRSS");
  const result = await work();
  const peak = statusKiB(pid, "VmHWM");
  return { result, rssBeforeMiB: round(before / 1024, 1), peakGrowthMiB: round((peak - before) / 1024, 1) };
}
