// npm start: prepares the local environment (API reference assets, the dev signing key, .dev.vars,
// the D1 migrations with the seeded defaults) and serves the Worker with `wrangler dev` on
// http://127.0.0.1:${PORT:-8787}. Local D1/R2/Durable Object/Queue state lives in .wrangler/state and
// survives a restart; the scheduled handler is reachable at /__scheduled?cron=* * * * *.
import { DEFAULT_PERSIST_DIR, DEFAULT_PORT, prepareLocal, startDevServer, waitForHealth } from "./dev-env.mjs";
import { DEFAULT_HOST_PORT, startContainerHost } from "./container-host/server.mjs";

const port = Number(process.env.PORT || DEFAULT_PORT);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`start: PORT must be a TCP port number, not '${process.env.PORT}'.`);
  process.exit(1);
}
const base = `http://127.0.0.1:${port}`;
const hostPort = Number(process.env.CONTAINER_HOST_PORT || DEFAULT_HOST_PORT);

function banner() {
  return [
    "",
    `integrity-edge is running on ${base}`,
    `  API reference:  ${base}/docs  (OpenAPI 3.1 document: ${base}/openapi.json)`,
    `  Health:         ${base}/health`,
    `  A token:        npm run token   (every permission; see --help for --sub, --name, --permissions)`,
    `  Call the API:   curl -H "Authorization: Bearer $(npm run -s token)" ${base}/Categories`,
    `  Fire the cron:  curl "${base}/__scheduled?cron=*+*+*+*+*"`,
    `  Machine client: POST ${base}/connect/token (client_credentials; client_id local-integration, secret in .dev/local-oauth-client-secret)`,
    `  Job containers: the local container host on ${containerHost.url} (examples/images; README, "Data processing")`,
    `  Local state:    ${DEFAULT_PERSIST_DIR} (kept across restarts; delete it to start empty)`,
    "",
  ].join("\n");
}

// The local container host runs job containers as child processes of this script (stopped with it).
let containerHost;
try {
  // Its secret is new every start and reaches only the Worker (through .dev.vars); jobs never see it.
  containerHost = await startContainerHost({ port: hostPort, apiUrl: base, log: (line) => console.log(`container host: ${line}`) });
} catch (error) {
  console.error(`start: the local container host could not listen on port ${hostPort} (${error.message}); set CONTAINER_HOST_PORT to a free port.`);
  process.exit(1);
}

try {
  console.log("Preparing local state (assets, dev signing key, .dev.vars, D1 migrations)...");
  const { created } = await prepareLocal({
    persistTo: DEFAULT_PERSIST_DIR,
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
  console.error(`start: ${error.message}`);
  process.exit(1);
}

const server = startDevServer({ port, persistTo: DEFAULT_PERSIST_DIR });
// Ctrl-C reaches wrangler too (same process group); this script only waits for it to finish.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (server.exitCode === null) server.kill(signal);
  });
}
server.on("exit", (code, signal) => containerHost.close().finally(() => process.exit(code ?? (signal ? 1 : 0))));
server.on("error", (error) => {
  console.error(`start: could not run wrangler: ${error.message}`);
  process.exit(1);
});

// Printed once the server answers, so it is not lost above wrangler's own start-up output.
waitForHealth(base, { timeoutMs: 180_000, child: server }).then(
  () => console.log(banner()),
  (error) => console.error(`start: ${error.message}`),
);
