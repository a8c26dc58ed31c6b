// Shared helpers for the local scripts (npm start, npm run token, the smoke run and the bundle check),
// so the smoke run starts the server exactly the way `npm start` does.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair } from "jose";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DEFAULT_PORT = 8787;
export const DEFAULT_PERSIST_DIR = join(ROOT, ".wrangler", "state");

// The local trust: tokens from `npm run token` carry this issuer and audience and are signed with the
// key in .dev/keys.json. Only .dev.vars (local, gitignored) names them; wrangler.toml never does, so
// a deployment cannot accept a locally minted token.
export const DEV_ISSUER = "integrity-edge-local";
export const DEV_AUDIENCE = "integrity-edge";
export const DEV_KID = "local-dev";
export const DEV_KEY_FILE = join(ROOT, ".dev", "keys.json");
export const DEV_VARS_FILE = join(ROOT, ".dev.vars");

const require = createRequire(import.meta.url);
// Run wrangler's own entry with this node, not through a shell or npx: no PATH lookups, and the
// child's pid is wrangler itself, so stopping it is precise.
const WRANGLER_BIN = join(dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");

/**
 * The environment for every wrangler call: telemetry off, and no fetch of the `Request.cf` object
 * from workers.cloudflare.com (offline it only prints a getaddrinfo error and falls back to the same
 * placeholder), unless the caller set these itself.
 */
export function wranglerEnv(extra = {}) {
  return { CLOUDFLARE_CF_FETCH_ENABLED: "false", ...process.env, WRANGLER_SEND_METRICS: "false", ...extra };
}

/**
 * Runs a wrangler command to completion with no stdin (so it never waits for a prompt); throws on
 * failure. The timeout matters: a synchronous child blocks the caller's own timers meanwhile.
 */
export function runWrangler(args, { quiet = false, timeoutMs = 180_000, log } = {}) {
  const result = spawnSync(process.execPath, [WRANGLER_BIN, ...args], {
    cwd: ROOT,
    env: wranglerEnv(),
    stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: timeoutMs,
    killSignal: "SIGKILL",
  });
  if (quiet && log) log(`$ wrangler ${args.join(" ")}\n${result.stdout ?? ""}${result.stderr ?? ""}`);
  if (result.error) throw new Error(`wrangler ${args.join(" ")}: ${result.error.message}`);
  if (result.status !== 0) {
    const output = quiet ? `\n${result.stdout ?? ""}${result.stderr ?? ""}` : "";
    throw new Error(`wrangler ${args.join(" ")} exited with ${result.status ?? result.signal}${output}`);
  }
  return result;
}

/** Copies the API reference page's scripts into public/docs (gitignored, so every wrangler run needs it first). */
export function copyAssets() {
  const result = spawnSync(process.execPath, [join(ROOT, "scripts", "copy-assets.mjs")], { cwd: ROOT, stdio: "inherit", timeout: 60_000 });
  if (result.status !== 0) throw new Error(`copy-assets.mjs exited with ${result.status ?? result.signal}`);
}

/**
 * The local signing key (ES256, kid "local-dev"): generated once into .dev/keys.json and reused, so
 * tokens minted earlier stay valid across restarts. Returns the private JWK and the public JWKS.
 */
export async function ensureDevKey() {
  if (existsSync(DEV_KEY_FILE)) {
    const stored = JSON.parse(readFileSync(DEV_KEY_FILE, "utf8"));
    if (stored?.privateJwk?.d && stored?.publicJwks?.keys?.length) return { ...stored, created: false };
    throw new Error(`${DEV_KEY_FILE} is not a key file written by this script; delete it to generate a new key.`);
  }
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: DEV_KID, alg: "ES256", use: "sig" };
  const privateJwk = { ...(await exportJWK(privateKey)), kid: DEV_KID, alg: "ES256" };
  const stored = { privateJwk, publicJwks: { keys: [publicJwk] } };
  mkdirSync(dirname(DEV_KEY_FILE), { recursive: true });
  writeFileSync(DEV_KEY_FILE, JSON.stringify(stored, null, 2) + "\n", { mode: 0o600 });
  chmodSync(DEV_KEY_FILE, 0o600);
  return { ...stored, created: true };
}

/**
 * The variables npm start writes only when .dev.vars does not set them already: a developer's own
 * value is kept (README, "Configuration"). WEBHOOK_ALLOWED_TARGETS lets webhook receivers on this
 * machine in (a deployment allows only https to public addresses); set it in .dev.vars to allow more
 * or fewer, and npm start leaves it as it is.
 */
export const DEV_VAR_DEFAULTS = Object.freeze({ WEBHOOK_ALLOWED_TARGETS: "http://127.0.0.1:*,http://localhost:*" });

/** The variable a .dev.vars line sets (`NAME=value`), or null for a comment or a blank line. */
function devVarName(line) {
  const trimmed = line.trim();
  if (trimmed === "" || trimmed.startsWith("#") || !trimmed.includes("=")) return null;
  return trimmed
    .slice(0, trimmed.indexOf("="))
    .replace(/^export\s+/, "")
    .trim();
}

/**
 * The variables a .dev.vars file sets, by name, as written (the last line of a name wins, as dotenv
 * reads it); none without the file. For a script that says what the local server runs with.
 */
export function readDevVars(file = DEV_VARS_FILE) {
  if (!existsSync(file)) return {};
  const lines = readFileSync(file, "utf8").split("\n");
  return Object.fromEntries(
    lines.filter((line) => devVarName(line)).map((line) => [devVarName(line), line.slice(line.indexOf("=") + 1).trim()]),
  );
}

/**
 * Writes .dev.vars (the local server reads it over [vars], as wrangler dev does) with the local settings and the public half of
 * the dev key. The managed settings are rewritten at each start; {@link DEV_VAR_DEFAULTS} only when the
 * file does not set them; lines for other variables a developer added are kept. The file is only
 * rewritten when it changes, since the local server rebuilds and reloads on a change. `file` is for the checks.
 */
export function writeDevVars(publicJwks, extra = {}, { file = DEV_VARS_FILE } = {}) {
  const managed = {
    ENVIRONMENT: "development",
    AUTH_ISSUER: DEV_ISSUER,
    AUTH_AUDIENCE: DEV_AUDIENCE,
    // Single quotes: dotenv then takes the JSON literally.
    AUTH_JWKS_JSON: `'${JSON.stringify(publicJwks)}'`,
    LOG_LEVEL: "info",
    DATAPROCESSING_ENCRYPTION_KEY: ensureDataProcessingKey(),
    ...extra,
  };
  const header = "# Written by scripts/start.mjs for local runs only (gitignored). Other variables you add here are kept.";
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  const kept = current
    .split("\n")
    .filter((line) => line.trim() !== "" && line !== header)
    .filter((line) => !Object.keys(managed).includes(devVarName(line)));
  const set = new Set(kept.map(devVarName).filter(Boolean));
  const defaults = Object.entries(DEV_VAR_DEFAULTS).filter(([name]) => !set.has(name) && !(name in managed));
  const content = [header, ...[...Object.entries(managed), ...defaults].map(([k, v]) => `${k}=${v}`), ...kept].join("\n") + "\n";
  if (current !== content) writeFileSync(file, content, { mode: 0o600 });
}

export const DATAPROCESSING_KEY_FILE = join(ROOT, ".dev", "dataprocessing-encryption-key");

/**
 * The local key ring sealing job run options (version 1, 32 random bytes): generated once into
 * .dev/ and reused, so configs saved earlier stay readable across restarts.
 */
export function ensureDataProcessingKey() {
  if (existsSync(DATAPROCESSING_KEY_FILE)) return readFileSync(DATAPROCESSING_KEY_FILE, "utf8").trim();
  const ring = `1:${randomBytes(32).toString("base64")}`;
  mkdirSync(dirname(DATAPROCESSING_KEY_FILE), { recursive: true });
  writeFileSync(DATAPROCESSING_KEY_FILE, ring + "\n", { mode: 0o600 });
  return ring;
}

/**
 * Every permission in src/pkg/permissions.ts, read from its source so a permission added there is
 * granted by the default token without touching this script. The file is TypeScript, which node 20
 * cannot import, so the string values of the `PERMISSIONS = { key: "value", ... }` object are taken
 * with a regex over that object's body only (other string literals in the file are not permissions).
 */
export function allPermissions() {
  const source = readFileSync(join(ROOT, "src", "pkg", "permissions.ts"), "utf8");
  const body = /export\s+const\s+PERMISSIONS\s*=\s*\{([\s\S]*?)\}\s*(?:as\s+const|satisfies|;)/.exec(source)?.[1];
  const values = body ? [...body.matchAll(/^\s*["']?[A-Za-z_$][\w$]*["']?\s*:\s*["']([^"']+)["']/gm)].map((m) => m[1]) : [];
  if (values.length === 0)
    throw new Error('Found no permissions in src/pkg/permissions.ts (expected `export const PERMISSIONS = { key: "value" }`).');
  return [...new Set(values)];
}

export const LOCAL_OAUTH_CLIENT_ID = "local-integration";
export const LOCAL_OAUTH_SECRET_FILE = join(ROOT, ".dev", "local-oauth-client-secret");

/**
 * The local machine client of POST /connect/token: its secret is generated once into .dev/; it gets
 * every permission. Returns the .dev.vars entries that switch the endpoint on locally.
 */
export function localOAuthVars(privateJwk) {
  let secret;
  if (existsSync(LOCAL_OAUTH_SECRET_FILE)) secret = readFileSync(LOCAL_OAUTH_SECRET_FILE, "utf8").trim();
  else {
    secret = randomBytes(24).toString("base64url");
    mkdirSync(dirname(LOCAL_OAUTH_SECRET_FILE), { recursive: true });
    writeFileSync(LOCAL_OAUTH_SECRET_FILE, secret + "\n", { mode: 0o600 });
  }
  const clients = [{ clientId: LOCAL_OAUTH_CLIENT_ID, clientSecret: secret, name: "Local integration", permissions: allPermissions() }];
  return { LOCAL_OAUTH_CLIENTS: `'${JSON.stringify(clients)}'`, LOCAL_OAUTH_SIGNING_JWK: `'${JSON.stringify(privateJwk)}'` };
}

/**
 * Applies the D1 migrations (schema and the idempotent seed of defaults) to the local database.
 * Quiet: wrangler's output (a table per migration) goes to `log`, if given, instead of the console.
 */
export function applyMigrations(persistTo, { quiet = false, log } = {}) {
  return runWrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo], { quiet, log });
}

/** Everything `npm start` does before serving: assets, dev key, .dev.vars, migrations. */
export async function prepareLocal({ persistTo = DEFAULT_PERSIST_DIR, quiet = false, vars = {}, log } = {}) {
  copyAssets();
  const key = await ensureDevKey();
  writeDevVars(key.publicJwks, { ...localOAuthVars(key.privateJwk), ...vars });
  applyMigrations(persistTo, { quiet, log });
  return key;
}

const LOCAL_SERVER = join(ROOT, "scripts", "local-server.mjs");

/**
 * Starts the local server (scripts/local-server.mjs: the deployable bundle under Miniflare on
 * 127.0.0.1:port, state in `persistTo`, GET /__scheduled fires the cron handler; not `wrangler dev`,
 * whose proxy drops connections under load, docs/decisions.md "Overload"); returns the child process.
 * `vars` go over wrangler.toml's and .dev.vars (as `wrangler dev --var` did); `watch` rebuilds and
 * reloads on a source change; `inspectorPort` opens the Worker's DevTools inspector there. Each start
 * gets its own random `startId`, given to the Worker as the variable LOCAL_START_ID and echoed by
 * /health in `x-local-start-id`, so {@link waitForHealth} knows the answer came from this server and
 * not from another one that happened to hold the port.
 */
export function startDevServer({
  port,
  persistTo = DEFAULT_PERSIST_DIR,
  vars = {},
  watch = true,
  inspectorPort,
  stdio = "inherit",
  detached = false,
}) {
  const startId = randomBytes(12).toString("base64url");
  const args = ["--port", String(port), "--persist-to", persistTo];
  for (const [name, value] of Object.entries({ ...vars, LOCAL_START_ID: startId })) args.push("--var", `${name}:${value}`);
  if (inspectorPort) args.push("--inspector-port", String(inspectorPort));
  if (!watch) args.push("--no-watch");
  const child = spawn(process.execPath, [LOCAL_SERVER, ...args], { cwd: ROOT, env: wranglerEnv(), stdio, detached });
  child.startId = startId;
  return child;
}

/**
 * Whether something already listens on 127.0.0.1:port (a bind there fails). When it does and it is
 * an integrity-edge server (its /health answers `{ status: "ok" }`), `integrityEdge` says so.
 */
export async function portInUse(port) {
  const busy = await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", (error) => (error.code === "EADDRINUSE" || error.code === "EACCES" ? resolve(error.code) : reject(error)));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(null)));
  });
  if (!busy) return { inUse: false };
  let integrityEdge = false;
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_500) });
    integrityEdge = response.status === 200 && (await response.json().catch(() => null))?.status === "ok";
  } catch {
    // Not HTTP, or not answering: something else holds the port.
  }
  return { inUse: true, denied: busy === "EACCES", integrityEdge };
}

export const RUNNING_SERVER_FILE = join(ROOT, ".dev", "server.json");

/**
 * What `npm start` records while its server runs (its URL, port and pid), so the other local commands
 * (the token's hint, `npm run seed`, `npm run reset`) talk to the server that is running, on whatever
 * PORT it was given, without being told again.
 */
export function recordRunningServer({ base, port, persistTo }) {
  mkdirSync(dirname(RUNNING_SERVER_FILE), { recursive: true });
  writeFileSync(RUNNING_SERVER_FILE, JSON.stringify({ base, port, pid: process.pid, persistTo }, null, 2) + "\n");
}

/** Removes the record of {@link recordRunningServer} when it is this process's. */
export function forgetRunningServer() {
  const running = readRunningServer();
  if (running?.pid === process.pid) rmSync(RUNNING_SERVER_FILE, { force: true });
}

/** The server `npm start` is running now ({ base, port, pid, persistTo }), or null when none is. */
export function readRunningServer() {
  let record;
  try {
    record = JSON.parse(readFileSync(RUNNING_SERVER_FILE, "utf8"));
  } catch {
    return null;
  }
  if (!Number.isInteger(record?.pid) || typeof record.base !== "string") return null;
  try {
    process.kill(record.pid, 0); // signal 0: only whether the process exists
  } catch (error) {
    if (error.code === "ESRCH") return null;
  }
  return record;
}

/**
 * The base URL local commands use: $PORT when set (as `PORT=9000 npm start` was given), else the
 * server `npm start` is running, else the default port.
 */
export function localBase() {
  if (process.env.PORT) return `http://127.0.0.1:${process.env.PORT}`;
  return readRunningServer()?.base ?? `http://127.0.0.1:${DEFAULT_PORT}`;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls GET /health until it answers 200; fails early if the server process exits. Given a child
 * from {@link startDevServer}, only an answer carrying that child's start id counts: another server
 * answering on the port (another `npm start`) is not this one being ready.
 */
export async function waitForHealth(baseUrl, { timeoutMs = 120_000, child } = {}) {
  const deadline = Date.now() + timeoutMs;
  const expected = child?.startId;
  let stranger = false;
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(
        `the server exited with ${child.exitCode ?? child.signalCode} before it was ` +
          `ready${stranger ? ` (another server answers on ${baseUrl})` : ""}`,
      );
    }
    try {
      const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.status === 200) {
        if (!expected || response.headers.get("x-local-start-id") === expected) return;
        stranger = true;
      }
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const why = stranger ? `; another server answers there (not the one this command started)` : "";
  throw new Error(
    `${baseUrl}/health did not answer 200 from the server this command started within ${Math.round(timeoutMs / 1000)} s${why}`,
  );
}

/**
 * Stops a server started with `detached: true` (its own process group): SIGTERM to the local server,
 * which shuts its workerd down itself, then SIGKILL to the whole group for anything left behind.
 */
export async function stopProcessGroup(child, graceMs = 5_000) {
  if (!child || child.pid === undefined) return;
  const exited = child.exitCode !== null || child.signalCode !== null;
  const done = exited ? Promise.resolve() : new Promise((resolve) => child.once("exit", resolve));
  if (!exited) child.kill("SIGTERM");
  const timedOut = await Promise.race([done.then(() => false), new Promise((r) => setTimeout(() => r(true), graceMs))]);
  // The group may still hold workerd even when the server itself has exited.
  signalGroup(child, "SIGKILL");
  if (timedOut) await Promise.race([done, new Promise((r) => setTimeout(r, 2_000))]);
}

/** Sends a signal to the child's process group; a group that is already gone is not an error. */
export function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: nothing left to stop.
  }
}
