// npm start: prepares the local environment (API reference assets, the dev signing key, .dev.vars,
// the D1 migrations with the seeded defaults) and serves the Worker on http://127.0.0.1:${PORT:-8787}
// with scripts/local-server.mjs: the bundle `wrangler deploy` would ship, under Miniflare (real workerd)
// on its own socket, rebuilt and reloaded when the source changes. Not `wrangler dev`: its proxy drops
// connections under many clients (docs/decisions.md, "Overload"). Local D1/R2/Durable Object state
// lives in .wrangler/state (wrangler dev's layout) and survives a restart; the scheduled handler is
// reachable at /__scheduled?cron=* * * * *.
//
// The console gets what a newcomer needs (the URL, the token command, where state lives, how to
// stop) and, once the server is ready, one line per request and any warning or error. Everything
// the server and wrangler print (the migration tables, the build's bindings table, the Worker's own
// log lines) goes to .dev/start.log, written anew at each start; when the start fails, its last lines
// are printed with the reason.
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import {
  DEFAULT_PERSIST_DIR,
  DEFAULT_PORT,
  forgetRunningServer,
  portInUse,
  prepareLocal,
  recordRunningServer,
  ROOT,
  startDevServer,
  waitForHealth,
} from "./dev-env.mjs";
import { DEFAULT_HOST_PORT, jobLimitsFrom, startContainerHost } from "./container-host/server.mjs";

const LOG_FILE = join(ROOT, ".dev", "start.log");
const shown = (path) => relative(process.cwd(), path) || path;

function portFrom(name, fallback) {
  const raw = process.env[name];
  const port = Number(raw || fallback);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`start: ${name} must be a TCP port number (1-65535), not '${raw}'.`);
    process.exit(1);
  }
  return port;
}

const port = portFrom("PORT", DEFAULT_PORT);
const hostPort = portFrom("CONTAINER_HOST_PORT", DEFAULT_HOST_PORT);
// INSPECTOR_PORT: the Worker's DevTools inspector there (off unless set; wrangler dev had it on 9229).
const inspectorPort = process.env.INSPECTOR_PORT ? portFrom("INSPECTOR_PORT") : undefined;
const base = `http://127.0.0.1:${port}`;
let jobLimits;
try {
  // How many jobs the local container host runs at once, in all and per user (README, "Configuration").
  jobLimits = jobLimitsFrom(process.env);
} catch (error) {
  console.error(`start: ${error.message}.`);
  process.exit(1);
}
if (port === hostPort) {
  console.error(`start: PORT and CONTAINER_HOST_PORT are both ${port}; the API and the local container host need a port each.`);
  process.exit(1);
}

// Refuse before anything is written or started: a server already on the port would answer in this
// one's place (and reject its tokens).
for (const [name, value, what] of [
  ["PORT", port, "the API"],
  ["CONTAINER_HOST_PORT", hostPort, "the local container host"],
]) {
  const check = await portInUse(value);
  if (!check.inUse) continue;
  const holder = check.integrityEdge
    ? "another integrity-edge server (another `npm start`?) is already running there"
    : check.denied
      ? "this user may not listen on it"
      : "another program is listening on it";
  let free = value + 1;
  while (free < Math.min(value + 50, 65536) && (free === port || free === hostPort || (await portInUse(free)).inUse)) free++;
  const other = `${name}=${free}`;
  console.error(
    [
      `start: port ${value} on 127.0.0.1, ${what}'s port (${name}), is not free: ${holder}.`,
      `  Stop that server, or choose other ports, e.g. \`${other} npm start\` (PORT: the API, default ` +
        `${DEFAULT_PORT}; CONTAINER_HOST_PORT: the local container host, default ${DEFAULT_HOST_PORT}).`,
    ].join("\n"),
  );
  process.exit(1);
}

// The log of this start: everything the server, wrangler and the container host say.
mkdirSync(dirname(LOG_FILE), { recursive: true });
const logFd = openSync(LOG_FILE, "w", 0o600);
const writeLog = (text) => {
  try {
    writeSync(logFd, text.endsWith("\n") ? text : `${text}\n`);
  } catch {
    // A log that cannot be written never stops the server.
  }
};
writeLog(`# npm start at ${new Date().toISOString()}: API ${base}, container host port ${hostPort}`);

let ready = false;
let failing = false;
let server;
let containerHost;
// Container host notes from before the server is ready (e.g. why jobs cannot be isolated here): shown in the banner.
const hostNotes = [];

/** Stops whatever this start began, prints why it failed with the log's last lines, and exits 1. Once. */
async function fail(message) {
  if (failing) return;
  failing = true;
  if (server && server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  await containerHost?.close().catch(() => undefined);
  console.error(`start: ${message}`);
  const tail = readFileSync(LOG_FILE, "utf8")
    .replace(/\x1b\[[0-9;]*m/g, "")
    .trimEnd()
    .split("\n")
    .slice(-40);
  if (tail.length > 1) console.error(`--- the last lines of ${shown(LOG_FILE)} ---\n${tail.join("\n")}\n---`);
  process.exit(1);
}

// The local container host runs job containers as child processes of this script (stopped with it).
try {
  // Its secret is new every start and reaches only the Worker (through .dev.vars); jobs never see it.
  containerHost = await startContainerHost({
    port: hostPort,
    apiUrl: base,
    ...jobLimits,
    log: (line) => {
      writeLog(`container host: ${line}`);
      // Before the server is ready its lines are kept for the banner's end; after, they are news.
      if (ready) console.log(`container host: ${line}`);
      else hostNotes.push(line);
    },
  });
} catch (error) {
  await fail(`the local container host could not listen on port ${hostPort} (${error.message}); set CONTAINER_HOST_PORT to a free port.`);
}

console.log(`Preparing local state (API reference assets, dev signing key, .dev.vars, D1 migrations; details in ${shown(LOG_FILE)})...`);
try {
  const { created } = await prepareLocal({
    persistTo: DEFAULT_PERSIST_DIR,
    quiet: true,
    log: writeLog,
    // Request limits stay off locally: they never throttle a developer.
    vars: {
      CONTAINER_HOST_KIND: "local",
      LOCAL_CONTAINER_HOST_URL: containerHost.url,
      LOCAL_CONTAINER_HOST_SECRET: containerHost.secret,
      PUBLIC_API_URL: base,
      RATE_LIMITS: "off",
    },
  });
  if (created) console.log("Generated the local dev signing key in .dev/keys.json (trusted only through .dev.vars).");
} catch (error) {
  writeLog(error.message);
  await fail(error.message.split("\n")[0]);
}

console.log(`Building the Worker (wrangler deploy --dry-run) and starting it on ${base}...`);
// Ctrl-C reaches the server too (it is in this script's process group).
server = startDevServer({
  port,
  persistTo: DEFAULT_PERSIST_DIR,
  stdio: ["ignore", "pipe", "pipe"],
  inspectorPort,
});

/**
 * What reaches the console once the server is ready: the server's one line per request, rebuilds, and
 * any warning or error; not the Worker's info-level JSON request lines (the same request again) and
 * not wrangler's build tables. Everything is in the log file.
 */
function worthShowing(line) {
  if (/^\s*$/.test(line)) return false;
  if (line.startsWith("{")) return !/"level":"(debug|info)"/.test(line);
  if (
    /Your types might be out of date|update available|^\s*⛅️|^─+$|^\s*env\./.test(line) ||
    /Your Worker has access|^Binding\s+Resource|Using (secrets|vars) defined/.test(line)
  )
    return false;
  return true;
}

let failure = null;
function relay(stream, consoleStream) {
  let pending = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const raw of lines) {
      const line = raw.replace(/\x1b\[[0-9;]*m/g, "");
      writeLog(line);
      if (!ready && /EADDRINUSE|Address already in use/i.test(line))
        failure = `port ${port} was taken while the server started (PORT); choose another, e.g. \`PORT=${port + 1} npm start\`.`;
      if (!ready && /Build failed/.test(line))
        failure ??= "the Worker could not be built (wrangler deploy --dry-run failed; its output is below).";
      if (ready && worthShowing(line)) consoleStream.write(`${raw}\n`);
    }
  });
}
relay(server.stdout, process.stdout);
relay(server.stderr, process.stderr);

// Ctrl-C reaches the server too (same process group); this script only waits for it to finish.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (server.exitCode === null) server.kill(signal);
  });
}
server.on("exit", (code, signal) => {
  if (failing) return;
  if (!ready) return void fail(failure ?? `the local server exited with ${code ?? signal} before it was ready.`);
  forgetRunningServer();
  containerHost.close().finally(() => {
    closeSync(logFd);
    console.log("integrity-edge stopped.");
    process.exit(code ?? (signal ? 1 : 0));
  });
});
server.on("error", (error) => void fail(`could not run the local server: ${error.message}`));

function banner() {
  return [
    "",
    `integrity-edge is running on ${base}`,
    "",
    `  A token:        npm run token      (every permission, 1 hour; --help for --sub, --name, --permissions)`,
    `  Try it:         curl -H "Authorization: Bearer $(npm run -s token)" ${base}/Categories`,
    `  API reference:  ${base}/docs      (OpenAPI 3.1: ${base}/openapi.json)`,
    `  Fire the cron:  curl "${base}/__scheduled?cron=*+*+*+*+*"`,
    `  Machine client: POST ${base}/connect/token (client_credentials; client_id local-integration, secret in ` +
      `.dev/local-oauth-client-secret)`,
    `  Job containers: the local container host on ${containerHost.url} (examples/images; README, "Data processing")`,
    ...hostNotes.map((note) => `                  note: ${note}`),
    `  Local state:    ${shown(DEFAULT_PERSIST_DIR)} (kept across restarts; delete it to start empty); keys in .dev/`,
    `  Reload:         saving a file under src/ or durable-objects/ rebuilds and reloads the Worker`,
    ...(inspectorPort ? [`  Inspector:      chrome://inspect on 127.0.0.1:${inspectorPort} (INSPECTOR_PORT)`] : []),
    `  Full log:       ${shown(LOG_FILE)} (the build, every request, the Worker's own log lines)`,
    `  Stop:           Ctrl-C`,
    "",
  ].join("\n");
}

// Ready only when the server this command started answers (its start id in /health), never when
// some other server on the port does.
const watchdog = setInterval(() => {
  if (failure && !ready) {
    clearInterval(watchdog);
    void fail(failure);
  }
}, 250);
waitForHealth(base, { timeoutMs: 180_000, child: server }).then(
  () => {
    clearInterval(watchdog);
    if (failing) return;
    ready = true;
    recordRunningServer({ base, port, persistTo: DEFAULT_PERSIST_DIR });
    process.on("exit", forgetRunningServer);
    console.log(banner());
  },
  (error) => {
    clearInterval(watchdog);
    void fail(failure ?? error.message);
  },
);
