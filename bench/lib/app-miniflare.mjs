// The app Worker alone under Miniflare on a direct socket (never `wrangler dev`), with a fresh
// persistence folder: what the template, jobs and monitors sections each run.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { AUDIENCE, ISSUER } from "./auth.mjs";

export const LOOPBACK = "127.0.0.1";

/** The app's Miniflare options as wrangler derives them from wrangler.toml, minus assets and .dev.vars. */
export function appWorkerOptions(root) {
  const configPath = join(root, "wrangler.toml");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(configPath);
  const vars = unstable_readConfig({ config: configPath }).vars ?? {};
  const { assets: _assets, bindings = {}, ...options } = workerOptions;
  return { ...options, bindings: Object.fromEntries(Object.entries(bindings).filter(([name]) => Object.hasOwn(vars, name))) };
}

/**
 * The Miniflare options every bench shares: loopback, a fresh persistence folder under `stateDir`
 * (wiped first), and workerd's output dropped (BENCH_WORKERD_LOG=1 shows it: crashes, uncaught errors).
 */
export function benchMiniflareBase(stateDir) {
  rmSync(stateDir, { recursive: true, force: true });
  return {
    host: LOOPBACK,
    port: 0,
    defaultPersistRoot: stateDir,
    d1Persist: join(stateDir, "d1"),
    durableObjectsPersist: join(stateDir, "do"),
    r2Persist: join(stateDir, "r2"),
    handleRuntimeStdio: (stdout, stderr) => {
      if (process.env.BENCH_WORKERD_LOG) {
        stdout.pipe(process.stderr);
        stderr.pipe(process.stderr);
        return;
      }
      stdout.resume();
      stderr.resume();
    },
  };
}

/**
 * The app's bindings as benched: wrangler.toml's vars, the bench's token issuer and key, rate limits off,
 * one user admitted 64 requests at once (the benches load the service as one user over 10 to 50
 * connections; the default of 8 would refuse most of them with 429, docs/decisions.md "Overload"), then `extra`.
 */
export function benchAppBindings(app, credentials, extra = {}) {
  return {
    ...app.bindings,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    AUTH_JWKS_JSON: credentials.jwksJson,
    ENVIRONMENT: "bench",
    RATE_LIMITS: "off",
    MAX_USER_REQUESTS_IN_FLIGHT: "64",
    MAX_USER_REQUESTS_PER_SECOND: "10000000",
    ...extra,
  };
}

/** bench/minimal-worker.js (bench A's baseline) as worker `name`, on its own direct socket, over the app's D1 database. */
export function minimalWorkerOptions(root, app, name = "minimal") {
  return {
    name,
    compatibilityDate: app.compatibilityDate,
    modules: true,
    scriptPath: join(root, "bench", "minimal-worker.js"),
    d1Databases: app.d1Databases,
    unsafeDirectSockets: [{ host: LOOPBACK, port: 0 }],
  };
}

/**
 * Starts the bundle (`appModules`, entry first) as worker "app" with the bench's auth and `bindings`
 * over wrangler.toml's. Returns the Miniflare instance, its direct URL, the D1 database and the worker.
 */
export async function startAppMiniflare({ root, stateDir, appModules, credentials, bindings = {} }) {
  const app = appWorkerOptions(root);
  const mf = new Miniflare({
    ...benchMiniflareBase(stateDir),
    workers: [
      {
        ...app,
        name: "app",
        modulesRoot: join(appModules[0].path, ".."),
        modules: appModules,
        bindings: benchAppBindings(app, credentials, { LOG_LEVEL: "error", ...bindings }),
        unsafeDirectSockets: [{ host: LOOPBACK, port: 0 }],
      },
    ],
  });
  await mf.ready;
  const url = await mf.unsafeGetDirectURL("app");
  if (url.hostname !== LOOPBACK) throw new Error(`the app listens on ${url.host}, not on loopback`);
  return { mf, url, db: await mf.getD1Database("DB", "app"), worker: await mf.getWorker("app") };
}
