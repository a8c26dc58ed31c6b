// Starts the benchmarked Workers in one Miniflare (workerd) process, each on its own direct socket on
// 127.0.0.1, so autocannon talks to workerd with no proxy in between (unlike `wrangler dev`, which is
// about ten times slower here; see ../../../shared/design/platform.md). All of them bind the same D1
// database (same id), so the full and the minimal worker read the very same rows.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { AUDIENCE, ISSUER } from "./auth.mjs";

const LOOPBACK = "127.0.0.1";

/**
 * The app Worker's bindings exactly as wrangler derives them from wrangler.toml (D1 DB, R2 MEDIA and
 * UPLOADS, the IdempotencyStore Durable Object on SQLite, the EVENTS queue and its consumer, vars),
 * minus static assets, which no benchmarked route serves. Wrangler also merges a local .dev.vars
 * into the bindings; only wrangler.toml's [vars] are kept, so a developer's local settings never
 * change what is measured.
 */
function appWorkerOptions(root) {
  const configPath = join(root, "wrangler.toml");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(configPath);
  const vars = unstable_readConfig({ config: configPath }).vars ?? {};
  const { assets: _assets, bindings = {}, ...options } = workerOptions;
  return { ...options, bindings: Object.fromEntries(Object.entries(bindings).filter(([name]) => Object.hasOwn(vars, name))) };
}

/**
 * @param {object} options
 * @param {string} options.root project root
 * @param {string} options.stateDir persistence directory (wiped first: every run starts empty)
 * @param {{type: string, path: string}[]} options.appModules the bundle's modules, entry first
 * @param {string} options.minimalScript bench/minimal-worker.js
 * @param {string} options.engineScript the bundled engine worker
 * @param {string} options.jwksJson the JWKS the app trusts
 * @param {{modulesRoot: string, modules: object[]}} options.probe the WASM probe around the same bundle
 * Without appModules (`--only list`) only the engine worker runs; D1 is the same database.
 */
export async function startWorkers({ root, stateDir, appModules, minimalScript, engineScript, jwksJson, probe }) {
  rmSync(stateDir, { recursive: true, force: true });
  const app = appWorkerOptions(root);
  const d1Databases = app.d1Databases;
  const socket = [{ host: LOOPBACK, port: 0 }];
  const appBindings = {
    ...app.bindings,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    AUTH_JWKS_JSON: jwksJson,
    ENVIRONMENT: "bench",
    RATE_LIMITS: "off",
    MAX_USER_REQUESTS_IN_FLIGHT: "64", // one user over many connections (bench/lib/app-miniflare.mjs)
    MAX_USER_REQUESTS_PER_SECOND: "10000000",
  };
  // A queue has one consumer: the app Worker. The probe only produces.
  const { queueConsumers: _consumers, ...probeOptions } = app;
  const mf = new Miniflare({
    host: LOOPBACK,
    port: 0,
    defaultPersistRoot: stateDir,
    d1Persist: join(stateDir, "d1"),
    r2Persist: join(stateDir, "r2"),
    durableObjectsPersist: join(stateDir, "do"),
    // The app logs one JSON line per request at info level; under load that would measure the
    // terminal. Workers' console output is dropped, which is also what production does with it.
    handleRuntimeStdio: (stdout, stderr) => {
      stdout.resume();
      stderr.resume();
    },
    workers: [
      ...(appModules
        ? [
            {
              ...app,
              name: "app",
              modulesRoot: join(appModules[0].path, ".."),
              modules: appModules,
              bindings: appBindings,
              unsafeDirectSockets: socket,
            },
            { ...probeOptions, name: "probe", ...probe, bindings: appBindings, unsafeDirectSockets: socket },
          ]
        : []),
      {
        name: "minimal",
        compatibilityDate: app.compatibilityDate,
        modules: true,
        scriptPath: minimalScript,
        d1Databases,
        unsafeDirectSockets: socket,
      },
      {
        name: "engine",
        compatibilityDate: app.compatibilityDate,
        modules: true,
        scriptPath: engineScript,
        d1Databases,
        unsafeDirectSockets: socket,
      },
    ],
  });
  try {
    await mf.ready;
    const names = appModules ? ["app", "minimal", "engine", "probe"] : ["minimal", "engine"];
    const urls = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await mf.unsafeGetDirectURL(name)])));
    for (const url of Object.values(urls)) {
      if (url.hostname !== LOOPBACK) throw new Error(`a worker listens on ${url.host}, not on loopback`);
    }
    return { mf, urls, db: await mf.getD1Database("DB", appModules ? "app" : "engine") };
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    throw error;
  }
}
