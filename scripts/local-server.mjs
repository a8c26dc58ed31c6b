// The local server behind `npm start` (and the smoke run, the soaks and the docs-page check, through
// dev-env.mjs startDevServer): the deployable bundle (`wrangler deploy --dry-run`, what `wrangler
// deploy` ships) under Miniflare on its own socket, with no `wrangler dev` proxy in front. That proxy
// loses pooled connections to the runtime under many concurrent clients and answers 503 or never
// (docs/decisions.md, "Overload: admission, and 200 clients on the local server"); Miniflare's own
// socket is workerd's, with nothing in between.
//
// What it keeps from `wrangler dev --persist-to <dir> --test-scheduled`: wrangler.toml's bindings and
// vars with .dev.vars over them (wrangler's own derivation), the assets (the /docs page), state in
// <dir>/v3 (the layout `wrangler d1 migrations apply --local --persist-to <dir>` writes), the Worker's
// name (Durable Object state is kept under it), GET /__scheduled?cron=... answering "Ran scheduled
// event" after the scheduled handler ran, one line per request, and a rebuild and reload when src/,
// durable-objects/, wrangler.toml or .dev.vars change (unless --no-watch).
//
// Usage: node scripts/local-server.mjs --port N --persist-to DIR [--var NAME:value]... [--inspector-port N] [--no-watch]
import childProcess, { spawn } from "node:child_process";
import { mkdtempSync, rmSync, watch } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { bundleModules } from "./bundle-modules.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CONFIG = join(ROOT, "wrangler.toml");
const WRANGLER_BIN = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");
const LOOPBACK = "127.0.0.1";
// What triggers a rebuild when it changes (a directory: anything under it).
const WATCHED = ["src", "durable-objects", "wrangler.toml", ".dev.vars"];

const { values: args } = parseArgs({
  options: {
    port: { type: "string" },
    "persist-to": { type: "string" },
    var: { type: "string", multiple: true, default: [] },
    "inspector-port": { type: "string" },
    "no-watch": { type: "boolean", default: false },
  },
  strict: true,
});
const port = Number(args.port);
if (!Number.isInteger(port) || port < 1 || port > 65535 || !args["persist-to"]) {
  console.error("local-server: --port N (1-65535) and --persist-to DIR are required");
  process.exit(2);
}
const persistTo = args["persist-to"];
// --var NAME:value, as `wrangler dev --var` takes it: over wrangler.toml's vars and .dev.vars.
const varOverrides = Object.fromEntries(
  args.var.map((pair) => {
    const at = pair.indexOf(":");
    if (at < 1) {
      console.error(`local-server: --var takes NAME:value, not '${pair}'`);
      process.exit(2);
    }
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

// Each build goes to its own folder (a rebuild never rewrites files the running Worker came from).
const buildRoot = mkdtempSync(join(tmpdir(), "integrity-edge-build-"));
let builds = 0;

/**
 * `wrangler deploy --dry-run --outdir`: the bundle `wrangler deploy` would upload. Resolves to its
 * folder, or rejects with wrangler's output. `echo` passes that output on as it comes (the first
 * build: it lands in the start log); a rebuild keeps it unless the build fails.
 */
function build({ echo }) {
  const outdir = join(buildRoot, String(++builds));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRANGLER_BIN, "deploy", "--dry-run", "--outdir", outdir], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding("utf8");
      stream.on("data", (chunk) => {
        output += chunk;
        if (echo) process.stdout.write(chunk);
      });
    }
    child.on("error", (error) => reject(new Error(`could not run wrangler: ${error.message}`)));
    child.on("exit", (code, signal) => {
      if (code === 0) resolve(outdir);
      else
        reject(new Error(`Build failed (wrangler deploy --dry-run exited with ${code ?? signal})${echo ? "" : `\n${output.trimEnd()}`}`));
    });
  });
}

/**
 * The modules Miniflare runs: a small local entry first, then the bundle. The entry answers
 * GET /__scheduled as `wrangler dev --test-scheduled` does (its middleware: the scheduled handler with
 * the `cron` parameter, "" when absent, then 200 "Ran scheduled event"), hands everything else to
 * the bundle's handlers unchanged and prints the request's line ("[local] GET /path 200 OK (12ms)");
 * the Durable Object classes are the bundle's own exports. A body the Worker answered without reading
 * (a 401, 413 or 429 before the body) is read to its end before the answer goes: workerd, listening
 * itself, closes a keep-alive connection whose request body was left unread, so the client's next
 * request on it failed with a reset (the 429 of a large upload too); wrangler dev drains the same way,
 * and on Cloudflare the edge holds the client's connection.
 */
function modulesOf(outdir) {
  const bundle = bundleModules(outdir);
  const entry = {
    type: "ESModule",
    path: join(outdir, "__local-entry.mjs"),
    contents: [
      `import worker from "./${relative(outdir, bundle[0].path)}";`,
      `export * from "./${relative(outdir, bundle[0].path)}";`,
      "class ScheduledController {",
      "  constructor(scheduledTime, cron) { this.scheduledTime = scheduledTime; this.cron = cron; }",
      "  noRetry() {}",
      "}",
      "export default {",
      "  ...worker,",
      "  async fetch(request, env, ctx) {",
      "    const url = new URL(request.url);",
      '    if (url.pathname === "/__scheduled") {',
      '      await worker.scheduled(new ScheduledController(Date.now(), url.searchParams.get("cron") ?? ""), env, ctx);',
      '      return new Response("Ran scheduled event");',
      "    }",
      "    const started = Date.now();",
      "    const response = await worker.fetch(request, env, ctx);",
      "    if (request.body && !request.bodyUsed) await request.body.pipeTo(new WritableStream()).catch(() => undefined);",
      "    console.log(`[local] ${request.method} ${url.pathname} ${response.status} ${response.statusText} (${Date.now() - started}ms)`);",
      "    return response;",
      "  },",
      "};",
      "",
    ].join("\n"),
  };
  return [entry, ...bundle];
}

/** Miniflare's options for the bundle in `outdir`, from wrangler.toml and .dev.vars as wrangler derives them. */
function options(outdir) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(CONFIG);
  const { name } = unstable_readConfig({ config: CONFIG });
  return {
    host: LOOPBACK,
    port,
    // wrangler's own mapping of --persist-to (getDefaultPersistRoot): <dir>/v3, under which D1, R2 and
    // the Durable Objects keep their state as wrangler dev and `wrangler d1 ... --local` do.
    defaultPersistRoot: join(persistTo, "v3"),
    inspectorPort: args["inspector-port"] ? Number(args["inspector-port"]) : undefined,
    // Warnings and errors. The one line per request ("[local] GET /path 200 OK (12ms)") is the local
    // entry's console line: Miniflare's own request log costs a loopback HTTP request from workerd to
    // this process for every request (200 refusals at once took 477 ms with it, 417 ms without).
    log: new Log(LogLevel.INFO),
    logRequests: false,
    workers: [
      {
        ...workerOptions,
        name,
        modulesRoot: outdir,
        modules: modulesOf(outdir),
        bindings: { ...workerOptions.bindings, ...varOverrides },
      },
    ],
  };
}

let mf;
let stopping = false;
let reloading = false;
let previousBuild;

// workerd is Miniflare's child, and Miniflare neither restarts it nor says when it dies: a runtime
// that exits on its own (a crash, a signal) would leave this server answering nothing, so it stops
// too and says why. Miniflare spawns it through child_process.spawn, watched here; a runtime that
// ends while a reload replaces it, or while stopping, is expected.
const originalSpawn = childProcess.spawn;
let runtime;
childProcess.spawn = function (command, ...rest) {
  const child = originalSpawn.call(this, command, ...rest);
  if (/workerd/.test(String(command))) {
    runtime = child;
    child.once("exit", (code, signal) => {
      if (stopping || reloading || child !== runtime) return;
      console.error(`local-server: workerd exited (${signal ?? `code ${code}`}); the Worker is no longer served.`);
      void stop(1);
    });
  }
  return child;
};

async function stop(code) {
  if (stopping) return;
  stopping = true;
  // The Worker's modules are in workerd's memory: the builds can go first.
  rmSync(buildRoot, { recursive: true, force: true });
  // Miniflare stops workerd; a runtime that already died (Ctrl-C reaches it too) must not hold this up.
  await Promise.race([mf?.dispose().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  process.exit(code);
}
// First in line: wrangler's and Miniflare's modules have their own listeners, and one of them exits at
// once (Miniflare's stops workerd as it does), so what must happen here is done before they run.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.prependListener(signal, () => void stop(0));

// The watchers start before the first build: a save while it builds (6 to 8 s) is seen, and Node's
// recursive watch on Linux, which walks the tree as it starts, is ready by the time the server is.
let started = false;
let changedWhileStarting = false;
let rebuild = async () => undefined;
if (!args["no-watch"]) {
  let timer;
  let running = false;
  let again = false;
  rebuild = async () => {
    if (!started) {
      changedWhileStarting = true;
      return;
    }
    if (running) {
      again = true;
      return;
    }
    running = true;
    const began = Date.now();
    try {
      const outdir = await build({ echo: false });
      reloading = true;
      await mf.setOptions(options(outdir)).finally(() => (reloading = false));
      rmSync(previousBuild, { recursive: true, force: true });
      previousBuild = outdir;
      console.log(`[local] rebuilt and reloaded in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    } catch (error) {
      console.error(`[local] ${error.message}\n[local] still serving the previous build; fix the error and save again`);
    } finally {
      running = false;
      if (again && !stopping) {
        again = false;
        void rebuild();
      }
    }
  };
  for (const path of WATCHED) {
    try {
      watch(join(ROOT, path), { recursive: true }, () => {
        clearTimeout(timer);
        timer = setTimeout(() => void rebuild(), 300);
      });
    } catch {
      // .dev.vars may not exist; nothing to watch there.
    }
  }
}

try {
  const outdir = await build({ echo: true });
  mf = new Miniflare(options(outdir));
  await mf.ready;
  previousBuild = outdir;
  started = true;
} catch (error) {
  const message = String(error?.message ?? error);
  if (/EADDRINUSE|address already in use/i.test(message))
    console.error(`local-server: port ${port} on ${LOOPBACK} is taken (EADDRINUSE); choose another port.`);
  else console.error(`local-server: ${/^Build failed/.test(message) ? "" : "could not start the Worker: "}${message}`);
  await stop(1);
}
if (changedWhileStarting) void rebuild();
