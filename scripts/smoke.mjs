// Smoke run: starts the REAL local server the way `npm start` does (the deploy bundle under Miniflare, real workerd, real
// local D1/R2/Durable Objects), on a free port and a temporary state directory so the developer's
// .wrangler/state is never touched, and drives it over HTTP. It proves what the vitest suite cannot:
// the code-generation ban of the real runtime (the valueExpression sandbox must run without eval or
// new Function), the static assets of /docs, the cron entry, and state surviving a restart.
// Prints one line per check and ends with `N passed, N failed`; exits 1 on any failure.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  applyMigrations,
  DEV_VAR_DEFAULTS,
  freePort,
  LOCAL_OAUTH_CLIENT_ID,
  LOCAL_OAUTH_SECRET_FILE,
  prepareLocal,
  ROOT,
  signalGroup,
  startDevServer,
  stopProcessGroup,
  waitForHealth,
} from "./dev-env.mjs";
import { startContainerHost } from "./container-host/server.mjs";
import { checkGeneratedClient } from "./check-client.mjs";
import { runWalkthroughs } from "./readme-walkthroughs.mjs";
import { Agent, createServer as createHttpServer, request as httpRequest } from "node:http";
import { Webhook } from "standardwebhooks";

// 25 minutes: a bound against a hung server, not a target. The whole run takes about 5 minutes here (an alarm waits a
// minute unacknowledged to escalate, beside the README's walkthroughs, which run twice and wait for the dispatcher's
// next minute twice), more on a 2-core machine shared with other builds: one such run went past 15 minutes with every
// check passing.
const OVERALL_TIMEOUT_MS = Number(process.env.SMOKE_TIMEOUT_MS || 1_500_000);
const REQUEST_TIMEOUT_MS = 20_000;
const started = Date.now();
const runId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
const persistTo = mkdtempSync(join(tmpdir(), "integrity-edge-smoke-"));
const counts = { passed: 0, failed: 0, skipped: 0 };
const serverLog = [];
let server;
let base;
let finished = false;
let containerHost;

class Skip extends Error {}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/** SMOKE_ONLY=text runs only the checks whose name contains it (a developer's rerun of one failure; CI never sets it). */
const ONLY = process.env.SMOKE_ONLY;
const selected = (name) => !ONLY || name.includes(ONLY);

async function check(name, body) {
  const t0 = Date.now();
  if (!selected(name)) {
    counts.skipped++;
    return;
  }
  try {
    const note = await body();
    counts.passed++;
    console.log(`ok   ${name}${note ? ` (${note})` : ""} [${Date.now() - t0} ms]`);
  } catch (error) {
    if (error instanceof Skip) {
      counts.skipped++;
      console.log(`skip ${name}: ${error.message}`);
    } else {
      counts.failed++;
      console.log(`FAIL ${name}: ${error.message}`);
    }
  }
}

/** One HTTP request; JSON bodies are encoded, and the answer is read as text and, when it parses, JSON. */
async function http(path, { method = "GET", token, body, rawBody, headers = {} } = {}) {
  const h = new Headers(headers);
  if (token) h.set("authorization", `Bearer ${token}`);
  let payload = rawBody;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    if (!h.has("content-type")) h.set("content-type", "application/json");
  }
  const response = await fetch(`${base}${path}`, { method, headers: h, body: payload, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

function describe(res) {
  return `${res.status} ${res.text.slice(0, 300)}`;
}

/** A token minted by the real token script (its last output line), so the smoke proves that path too. */
function mintToken(args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts", "token.mjs"), ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      const last = out.trim().split("\n").pop()?.trim();
      if (code === 0 && last && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(last)) resolve(last);
      else reject(new Error(`token.mjs ${args.join(" ")} exited ${code}: ${err.trim()}`));
    });
  });
}

/** The array in a list answer: a bare array, or the first array property of a page object. */
function listOf(json) {
  if (Array.isArray(json)) return json;
  const inner = json && typeof json === "object" ? Object.values(json).find(Array.isArray) : undefined;
  return inner ?? [];
}

async function startServer(port) {
  server = startDevServer({
    port,
    persistTo,
    detached: true, // its own process group, so stopping it also stops workerd
    stdio: ["ignore", "pipe", "pipe"],
    // The smoke run's receivers are on 127.0.0.1 whatever a developer allows in .dev.vars (vars win over it).
    vars: { WEBHOOK_ALLOWED_TARGETS: DEV_VAR_DEFAULTS.WEBHOOK_ALLOWED_TARGETS },
    // What the run tests is the build it started with, whatever is edited meanwhile.
    watch: false,
  });
  // The local server exits when its first build fails; a "Build failed" line says why sooner.
  let buildFailed;
  const failedBuild = new Promise((_, reject) => (buildFailed = reject));
  failedBuild.catch(() => undefined);
  const keep = (chunk) => {
    // Strips the terminal colour codes from the server's output.
    for (const line of String(chunk)
      .replace(/\x1b\[[0-9;]*m/g, "")
      .split("\n")) {
      if (!line.trim()) continue;
      serverLog.push(line);
      if (/Build failed/.test(line)) buildFailed(new Error("the local server could not build the worker (its output is below)"));
    }
    if (serverLog.length > 200) serverLog.splice(0, serverLog.length - 200);
  };
  server.stdout.on("data", keep);
  server.stderr.on("data", keep);
  await Promise.race([waitForHealth(base, { timeoutMs: 120_000, child: server }), failedBuild]);
}

async function stopServer() {
  const s = server;
  server = undefined;
  await stopProcessGroup(s);
}

async function finish(reason) {
  if (finished) return;
  finished = true;
  if (reason) {
    counts.failed++;
    console.log(`FAIL smoke run: ${reason}`);
  }
  await stopServer().catch(() => undefined);
  await containerHost?.close().catch(() => undefined);
  rmSync(persistTo, { recursive: true, force: true });
  if (counts.failed > 0 && serverLog.length > 0) {
    console.log("--- last lines of the server's output ---");
    console.log(serverLog.slice(-60).join("\n"));
    console.log("---");
  }
  console.log(`smoke run took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : "";
  console.log(`${counts.passed} passed, ${counts.failed} failed${skipped}`);
  process.exit(counts.failed > 0 ? 1 : 0);
}

// Whatever happens, the server goes: an exit hook for the synchronous end, signals and a hard timeout.
process.on("exit", () => server && signalGroup(server, "SIGKILL"));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => finish(`interrupted by ${signal}`));
setTimeout(() => finish(`overall timeout of ${OVERALL_TIMEOUT_MS / 1000} s`), OVERALL_TIMEOUT_MS);

async function run() {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  console.log(`smoke: preparing ${persistTo} and starting the local server on ${base}`);
  containerHost = await startContainerHost({ port: 0, apiUrl: base });
  await prepareLocal({
    persistTo,
    quiet: true,
    vars: {
      CONTAINER_HOST_KIND: "local",
      LOCAL_CONTAINER_HOST_URL: containerHost.url,
      LOCAL_CONTAINER_HOST_SECRET: containerHost.secret,
      PUBLIC_API_URL: base,
      RATE_LIMITS: "off",
    },
  });
  await startServer(port);
  console.log(`smoke: server ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const admin = await mintToken();
  const reader = await mintToken([
    "--sub",
    "00000000-0000-4000-8000-00000000beef",
    "--name",
    "Smoke Reader",
    "--permissions",
    "properties_read",
  ]);

  await check("GET /health answers 200", async () => {
    const res = await http("/health");
    expect(res.status === 200 && res.json?.status === "ok", describe(res));
  });

  await check("GET /openapi.json is OpenAPI 3.1 with paths", async () => {
    const res = await http("/openapi.json");
    expect(res.status === 200, describe(res));
    expect(String(res.json?.openapi).startsWith("3.1"), `openapi is ${res.json?.openapi}`);
    const paths = Object.keys(res.json?.paths ?? {});
    expect(paths.length > 0, "no paths");
    return `${paths.length} paths`;
  });

  await check("npm start refuses a PORT that a server already holds, naming it, before starting anything", async () => {
    const port = new URL(base).port;
    const second = spawnSync(process.execPath, [join(ROOT, "scripts", "start.mjs")], {
      cwd: ROOT,
      env: { ...process.env, PORT: port },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(second.status === 1, `exit ${second.status ?? second.signal}: ${second.stdout}${second.stderr}`);
    expect(
      second.stderr.includes(`port ${port} on 127.0.0.1, the API's port (PORT), is not free`) &&
        second.stderr.includes("another integrity-edge server"),
      second.stderr,
    );
    expect(!second.stdout.includes("is running on"), second.stdout);
  });

  // The README's TypeScript lines: openapi-typescript types from this server's document, openapi-fetch over them.
  await check("a client generated from /openapi.json type-checks, refuses wrong calls, and creates and reads a deviation", () =>
    checkGeneratedClient({ base, token: admin }),
  );

  await check("GET /docs is HTML whose script is served by the worker", async () => {
    const page = await http("/docs");
    expect(page.status === 200 && page.headers.get("content-type")?.includes("text/html"), describe(page));
    expect(page.text.includes("/docs/assets/swagger-ui-bundle.js"), "the page does not load /docs/assets/swagger-ui-bundle.js");
    const script = await http("/docs/assets/swagger-ui-bundle.js");
    expect(script.status === 200, `swagger-ui-bundle.js: ${script.status}`);
    expect(
      /javascript/.test(script.headers.get("content-type") ?? ""),
      `swagger-ui-bundle.js content-type ${script.headers.get("content-type")}`,
    );
    return `script ${Math.round(script.text.length / 1024)} KiB`;
  });

  await check("no token: 401 with WWW-Authenticate", async () => {
    const res = await http("/Categories");
    expect(res.status === 401 && res.json?.code === "Unauthorized", describe(res));
    expect(/^Bearer /.test(res.headers.get("www-authenticate") ?? ""), `www-authenticate: ${res.headers.get("www-authenticate")}`);
  });

  await check("a token with a forged signature: 401", async () => {
    const [h, p, s] = admin.split(".");
    const forged = `${h}.${p}.${s.startsWith("A") ? "B" : "A"}${s.slice(1)}`;
    const res = await http("/Categories", { token: forged });
    expect(res.status === 401, describe(res));
  });

  await check("a token from `npm run token` is accepted", async () => {
    const res = await http("/Categories", { token: admin });
    expect(res.status === 200 && Array.isArray(listOf(res.json)), describe(res));
  });

  await check("missing permission: 403 (properties_read token writing)", async () => {
    const read = await http("/Categories", { token: reader });
    expect(read.status === 200, `read with properties_read: ${describe(read)}`);
    const res = await http("/Categories", { method: "POST", token: reader, body: { name: `smoke-forbidden-${runId}` } });
    expect(res.status === 403 && res.json?.code === "Forbidden", describe(res));
  });

  await check("category create, get with ETag, stale If-Match 412, update, delete", async () => {
    const created = await http("/Categories", { method: "POST", token: admin, body: { name: `smoke-${runId}` } });
    expect(created.status === 201, `create: ${describe(created)}`);
    const id = created.json.id;
    expect(created.headers.get("location") === `/Categories/${id}`, `location: ${created.headers.get("location")}`);
    const got = await http(`/Categories/${id}`, { token: admin });
    const etag = got.headers.get("etag");
    expect(got.status === 200 && got.json?.name === `smoke-${runId}` && etag, `get: ${describe(got)}`);
    const stale = await http("/Categories", {
      method: "PUT",
      token: admin,
      headers: { "if-match": '"stale-etag"' },
      body: { id, name: `smoke-renamed-${runId}` },
    });
    expect(stale.status === 412 && stale.json?.code === "PreconditionFailed", `stale PUT: ${describe(stale)}`);
    const renamed = await http("/Categories", {
      method: "PUT",
      token: admin,
      headers: { "if-match": etag },
      body: { id, name: `smoke-renamed-${runId}` },
    });
    expect(renamed.status === 200 && renamed.json?.name === `smoke-renamed-${runId}`, `PUT: ${describe(renamed)}`);
    expect(renamed.headers.get("etag") && renamed.headers.get("etag") !== etag, "the ETag did not change on update");
    const staleDelete = await http(`/Categories/${id}`, { method: "DELETE", token: admin, headers: { "if-match": etag } });
    expect(staleDelete.status === 412, `stale DELETE: ${describe(staleDelete)}`);
    const deleted = await http(`/Categories/${id}`, {
      method: "DELETE",
      token: admin,
      headers: { "if-match": renamed.headers.get("etag") },
    });
    expect(deleted.status === 204, `DELETE: ${describe(deleted)}`);
    const gone = await http(`/Categories/${id}`, { token: admin });
    expect(gone.status === 404, `GET after delete: ${describe(gone)}`);
  });

  await check("Idempotency-Key: replay returns the same body; other body with the same key 422", async () => {
    const headers = { "idempotency-key": `smoke-${runId}` };
    const first = await http("/Categories", { method: "POST", token: admin, headers, body: { name: `smoke-idem-${runId}` } });
    expect(first.status === 201, `first: ${describe(first)}`);
    const again = await http("/Categories", { method: "POST", token: admin, headers, body: { name: `smoke-idem-${runId}` } });
    expect(again.status === 201 && again.text === first.text, `replay: ${describe(again)}`);
    expect(again.headers.get("idempotent-replayed") === "true", `idempotent-replayed: ${again.headers.get("idempotent-replayed")}`);
    const other = await http("/Categories", { method: "POST", token: admin, headers, body: { name: `smoke-idem-other-${runId}` } });
    expect(other.status === 422 && other.json?.code === "IdempotencyKeyReused", `other body: ${describe(other)}`);
  });

  await check("api-version 9.9: 400 UnsupportedApiVersion", async () => {
    const res = await http("/Categories", { token: admin, headers: { "api-version": "9.9" } });
    expect(res.status === 400 && res.json?.code === "UnsupportedApiVersion", describe(res));
  });

  await check("unknown route 404, wrong method 405", async () => {
    const missing = await http(`/NoSuchResource-${runId}`, { token: admin });
    expect(missing.status === 404, `unknown route: ${describe(missing)}`);
    const wrong = await http("/Categories", { method: "PATCH", token: admin, body: {} });
    expect(wrong.status === 405 && wrong.headers.get("allow"), `PATCH /Categories: ${describe(wrong)}`);
  });

  await check("oversize body: 413", async () => {
    const res = await http("/Categories", { method: "POST", token: admin, body: { name: "x".repeat(1_100_000) } });
    expect(res.status === 413 && res.json?.code === "PayloadTooLarge", describe(res));
  });

  /**
   * A client of one kept-alive socket: `send` answers the status, the body and whether the request went on
   * the socket already open, so a check can prove that a refusal left its connection to the next request.
   */
  function oneSocketClient(timeoutMs) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method, path, { headers = {}, body, token } = {}) =>
      new Promise((resolve, reject) => {
        const auth = token ? { authorization: `Bearer ${token}` } : {};
        const req = httpRequest(`${base}${path}`, { method, agent, headers: { ...auth, ...headers }, timeout: timeoutMs }, (res) => {
          let text = "";
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode, text, reused: req.reusedSocket }));
        });
        req.on("timeout", () => req.destroy(new Error(`${method} ${path} did not answer within ${timeoutMs} ms on the kept-alive socket`)));
        req.on("error", (error) => reject(new Error(`${method} ${path}: ${error.code ?? error.message}`)));
        req.end(body);
      });
    return { send, close: () => agent.destroy() };
  }

  await check("a request refused before its body is read leaves the connection for the next one (401, 413)", async () => {
    // One keep-alive connection: the refused POST's unread body is drained, so the GET after it reuses the socket.
    const { send, close } = oneSocketClient(REQUEST_TIMEOUT_MS);
    try {
      const json = { "content-type": "application/json" };
      const answers = [
        await send("POST", "/Categories", { headers: json, body: JSON.stringify({ name: "x".repeat(300_000) }) }),
        await send("GET", "/health"),
        await send("POST", "/Categories", { headers: json, body: JSON.stringify({ name: "x".repeat(1_100_000) }), token: admin }),
        await send("GET", "/health"),
      ];
      expect(answers.map((a) => a.status).join() === "401,200,413,200", `statuses ${answers.map((a) => a.status)}`);
      expect(
        answers.slice(1).every((a) => a.reused),
        `socket reused: ${answers.map((a) => a.reused)}`,
      );
    } finally {
      close();
    }
  });

  await check("wrong content type: 415", async () => {
    const res = await http("/Categories", {
      method: "POST",
      token: admin,
      headers: { "content-type": "text/plain" },
      rawBody: JSON.stringify({ name: `smoke-text-${runId}` }),
    });
    expect(res.status === 415 && res.json?.code === "UnsupportedMediaType", describe(res));
  });

  await check("the scheduled handler fires (/__scheduled)", async () => {
    const res = await http("/__scheduled?cron=*+*+*+*+*");
    expect(res.status === 200, describe(res));
  });

  await check("seeded default category Ungrouped", async () => {
    const res = await http("/Categories", { token: admin });
    const defaults = listOf(res.json).filter((c) => c.isDefault);
    expect(defaults.length === 1 && defaults[0].name === "Ungrouped", `defaults: ${JSON.stringify(defaults)}`);
  });

  await check("seeded default entity type General", async () => {
    const res = await http("/EntityTypes", { token: admin });
    if (res.status === 404) throw new Skip("GET /EntityTypes is not implemented yet");
    expect(res.status === 200, describe(res));
    expect(
      listOf(res.json).some((t) => t.name === "General"),
      `no General in ${res.text.slice(0, 300)}`,
    );
  });

  await check("seeded system statuses", async () => {
    const res = await http("/SystemStatuses", { token: admin });
    if (res.status === 404) throw new Skip("GET /SystemStatuses is not implemented yet");
    expect(res.status === 200, describe(res));
    const names = listOf(res.json).map((s) => (typeof s === "string" ? s : s.name));
    const missing = ["new", "active", "inProgress", "onHold", "completed", "closed", "cancelled"].filter((n) => !names.includes(n));
    expect(missing.length === 0, `missing ${missing.join(", ")} in ${res.text.slice(0, 300)}`);
  });

  // The sandbox proof: under workerd (as in production) eval and new Function throw, so a correct
  // answer here shows valueExpression runs in the QuickJS WASM sandbox, and the loop its time limit.
  await check("sandbox: DryRun evaluates `return a * b + properties.c` to 42", async () => {
    const res = await http("/PropertyDefinitions/DryRun", {
      method: "POST",
      token: admin,
      body: {
        expression: "return a * b + properties.c",
        properties: [
          { name: "a", value: 6 },
          { name: "b", value: 7 },
          { name: "c", value: 0 },
        ],
      },
    });
    expect(res.status === 200 && res.json?.valid === true && res.json?.value === 42, describe(res));
  });

  await check("sandbox: DryRun answers `while(true){}` with valid false", async () => {
    const res = await http("/PropertyDefinitions/DryRun", {
      method: "POST",
      token: admin,
      body: { expression: "while(true){}", properties: [] },
    });
    expect(res.status === 200 && res.json?.valid === false, describe(res));
    return res.json?.errors?.[0]?.rule ?? res.json?.code;
  });

  // The same loop with a return, so no static rule (e.g. "must return") can answer before it runs:
  // only the sandbox's time limit can stop it.
  await check("sandbox: DryRun stops `while (true) {} return 1` at the time limit", async () => {
    const t0 = Date.now();
    const res = await http("/PropertyDefinitions/DryRun", {
      method: "POST",
      token: admin,
      body: { expression: "while (true) {} return 1", properties: [] },
    });
    expect(res.status === 200 && res.json?.valid === false, describe(res));
    expect(/time|interrupt|longer than|too long/i.test(res.text), `the answer does not mention the time limit: ${res.text.slice(0, 300)}`);
    return `answered in ${Date.now() - t0} ms`;
  });

  // The README's work item example, on the real runtime: the TemplateWriter Durable Object serialises
  // template edits, and an edit of a template a work item is based on becomes revision 2.
  await check("work item from a template; the next template edit is revision 2", async () => {
    const at = await http("/ActivityTemplates", {
      method: "POST",
      token: admin,
      body: { displayName: `smoke-measure-${runId}`, inputTemplates: [{ name: "thickness", format: "decimal", required: true }] },
    });
    expect(at.status === 201, `activity template: ${describe(at)}`);
    const wt = await http("/WorkTemplates", {
      method: "POST",
      token: admin,
      body: { displayName: `smoke-tank-${runId}`, tags: ["tank"], activityTemplates: [{ activityTemplateId: at.json.id }] },
    });
    expect(wt.status === 201 && wt.json.revision === 1, `work template: ${describe(wt)}`);
    const wi = await http("/WorkItems", {
      method: "POST",
      token: admin,
      body: { displayName: `smoke-T-101-${runId}`, basedOn: [{ id: wt.json.id }] },
    });
    expect(wi.status === 201 && wi.json.basedOn?.[0]?.revision === 1, `work item: ${describe(wi)}`);
    const edited = await http("/WorkTemplates", {
      method: "PUT",
      token: admin,
      body: { ...wt.json, displayName: `smoke-tank-v2-${runId}` },
    });
    expect(edited.status === 200 && edited.json.revision === 2, `template edit: ${describe(edited)}`);
    const kept = await http(`/WorkItems/${wi.json.id}`, { token: admin });
    expect(kept.json?.basedOn?.[0]?.revision === 1, `the work item moved off revision 1: ${describe(kept)}`);
  });

  await check("POST /connect/token: the local machine client gets a token the API accepts", async () => {
    const secret = readFileSync(LOCAL_OAUTH_SECRET_FILE, "utf8").trim();
    const res = await http("/connect/token", {
      method: "POST",
      rawBody: new URLSearchParams({ grant_type: "client_credentials", client_id: LOCAL_OAUTH_CLIENT_ID, client_secret: secret }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status === 200 && res.json?.access_token, `token: ${describe(res)}`);
    const used = await http("/Categories", { token: res.json.access_token });
    expect(used.status === 200, `with the token: ${describe(used)}`);
    const wrong = await http("/connect/token", {
      method: "POST",
      rawBody: new URLSearchParams({ grant_type: "client_credentials", client_id: LOCAL_OAUTH_CLIENT_ID, client_secret: "wrong" }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(wrong.status === 401 && wrong.json?.error === "invalid_client", `wrong secret: ${describe(wrong)}`);
  });

  await check("a multipart upload refused part-way leaves its keep-alive connection usable (GET and POST next)", async () => {
    // One socket for everything: a refusal must not leave the rest of its body unread on it.
    const client = oneSocketClient(8000);
    const send = (method, path, options = {}) => client.send(method, path, { ...options, token: admin });
    const form = (parts) => {
      const boundary = `smoke${runId}`;
      const chunks = parts.map(
        ([name, filename, content]) =>
          `--${boundary}\r\nContent-Disposition: form-data; ` +
          `name="${name}"${filename ? `; filename="${filename}"` : ""}\r\n\r\n${content}\r\n`,
      );
      return { body: chunks.join("") + `--${boundary}--\r\n`, headers: { "content-type": `multipart/form-data; boundary=${boundary}` } };
    };
    const big = "x".repeat(20_000);
    const refusals = [
      [
        "/Files",
        form([
          ["Bogus", null, "1"],
          ["File", "a.csv", big],
        ]),
      ],
      [
        "/Files",
        form([
          ["DataTypeId", null, "no-such-type"],
          ["File", "a.exe", big],
        ]),
      ],
      [
        "/Medias",
        form([
          ["File", "a.bin", big],
          ["File", "b.bin", big],
          ["Type", null, "document"],
        ]),
      ],
    ];
    for (const [path, { body, headers }] of refusals) {
      const refused = await send("POST", path, { body, headers });
      expect(refused.status === 400 || refused.status === 404, `${path}: ${refused.status} ${refused.text.slice(0, 200)}`);
      const t0 = Date.now();
      const health = await send("GET", "/health");
      expect(health.status === 200, `GET after the refusal: ${health.status}`);
      const created = await send("POST", "/Categories", {
        body: JSON.stringify({ name: `smoke-keepalive-${runId}-${Date.now()}` }),
        headers: { "content-type": "application/json" },
      });
      expect(created.status === 201, `POST after the refusal: ${created.status} ${created.text.slice(0, 200)}`);
      expect(Date.now() - t0 < 3000, `the next requests took ${Date.now() - t0} ms`);
    }
    client.close();
  });

  /** POSTs a fixture image to /Medias; it must be stored and pass its integrity check. Its sizes, as "WxH" by name. */
  async function uploadImage(fixture, type, name) {
    const form = new FormData();
    form.append("File", new Blob([readFileSync(join(ROOT, "test/fixtures/images", fixture))], { type }), name);
    form.append("Type", "image");
    const res = await http("/Medias", { method: "POST", token: admin, rawBody: form });
    expect(res.status === 201, describe(res));
    expect(res.json.recognition.integrity === "passed", `integrity ${res.json.recognition.integrity}: ${res.json.recognition.detail}`);
    return Object.fromEntries(res.json.sizes.map((s) => [s.name, `${s.width}x${s.height}`]));
  }

  await check("an iPhone-style HEIC (a rotated grid of tiles) gets a Small JPEG from the bundled libheif", async () => {
    const sizes = await uploadImage("grid-rotated.heic", "image/heic", "IMG_0001.HEIC");
    expect(sizes.Small === "171x256", `sizes ${JSON.stringify(sizes)}`);
  });

  await check("a 4.3 MP grid AVIF gets Medium and Small from the bundled libavif, a tile at a time", async () => {
    const sizes = await uploadImage("avifenc-grid-4mp.avif", "image/avif", "photo.avif");
    expect(sizes.Medium === "1000x750" && sizes.Small === "256x192", `sizes ${JSON.stringify(sizes)}`);
  });

  await check("search: a deviation created over HTTP is found by a word of its description within 5 s", async () => {
    const word = `smokeword${runId.replace(/[^a-z0-9]/g, "")}`;
    const created = await http("/Deviations", {
      method: "POST",
      token: admin,
      body: { referenceId: `SMOKE-SRCH-${runId}`, description: `hairline ${word} near the weld` },
    });
    expect(created.status === 201, `deviation: ${describe(created)}`);
    const t0 = Date.now();
    for (;;) {
      const found = await http("/Indices/00000000-0000-4000-8000-000000000002/Search", {
        method: "POST",
        token: admin,
        body: { text: word },
      });
      if (found.json?.results?.[0]?.id === created.json.id) return `${Date.now() - t0} ms after the 201`;
      if (Date.now() - t0 > 5000) throw new Error(`not found within 5 s: ${describe(found)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  // The README's walkthroughs as a reader pastes them (README.md, "Calling the API"), twice in a row on
  // this server: the second pass proves each runs again (unique names, found rather than made twice).
  // They run from here on beside the checks that follow, as a reader's would beside other users' work
  // (the one-minute waits of both are then spent once); the restart at the end waits for them.
  const walkthroughs = (async () => {
    for (const pass of ONLY && !selected("README walkthrough") ? [] : [1, 2]) {
      // A pass that could not run at all is one failed check (never an unhandled rejection before the
      // await at the end, which would end the run without stopping the server).
      const results = await runWalkthroughs({ base }).catch((error) => [{ name: "(all)", ok: false, ms: 0, output: String(error) }]);
      for (const { name, ok, ms, output } of results) {
        await check(`README walkthrough "${name}" (pass ${pass})`, async () => {
          if (!ok) throw new Error(`\n${output.replace(/^/gm, "    ")}`);
          return `${(ms / 1000).toFixed(1)} s`;
        });
      }
    }
  })();

  // --- Data processing on the real local container host ---------------------------------------
  const fireCron = () => http("/__scheduled?cron=*+*+*+*+*");
  // Checks that wait out the dispatcher's minutes (a monitor's schedule, a custom index's, an alarm's
  // escalation: 40 to 120 s each, nearly all of it waiting) start and run beside the checks that follow
  // them and the walkthroughs; each uses its own monitor, index and receiver, and the restart at the end
  // waits for all of them. One after another they were half the run.
  const background = [];
  /** Fires the cron (the runners' refresh) until the job reaches one of `statuses`. */
  async function jobUntil(id, statuses, timeoutMs = 45_000) {
    const deadline = Date.now() + timeoutMs;
    let job;
    while (Date.now() < deadline) {
      await fireCron();
      job = await http(`/Jobs/${id}`, { token: admin });
      if (statuses.includes(job.json?.status)) return job.json;
      await new Promise((r) => setTimeout(r, 1000));
    }
    throw new Error(`job ${id} is ${job?.json?.status} after ${timeoutMs / 1000} s, not ${statuses.join("/")}: ${describe(job)}`);
  }
  async function jobConfig(name, image, extra = {}) {
    const res = await http("/JobConfigurations", {
      method: "POST",
      token: admin,
      body: {
        name: `smoke-${name}-${runId}`,
        jobDefinition: image,
        runConfigs: { cpuCores: 1, memory: 1, gpuCores: null, gpuSku: null },
        runOptions: { GREETING: "smoke" },
        ...extra,
      },
    });
    expect(res.status === 201, `config ${name}: ${describe(res)}`);
    return res.json;
  }

  await check("GET /JobDefinitions lists the local host's example images", async () => {
    const res = await http("/JobDefinitions", { token: admin });
    const images = listOf(res.json).map((d) => d.image);
    expect(res.status === 200 && images.includes("examples/hello:latest") && images.includes("examples/fail:latest"), describe(res));
  });

  await check("a job runs examples/hello, prints, posts an output and ends Success", async () => {
    const type = await http("/OutputTypes", {
      method: "POST",
      token: admin,
      body: { name: `smoke-greeting-${runId}`, schema: { type: "object", required: ["greeting"] } },
    });
    expect(type.status === 201, `output type: ${describe(type)}`);
    const config = await jobConfig("hello", "examples/hello:latest", { outputTypeId: type.json.id });
    const run = await http(`/Jobs/Execution/${config.id}`, { method: "POST", token: admin });
    expect(run.status === 201 && run.json.jobId, `execution: ${describe(run)}`);
    const job = await jobUntil(run.json.jobId, ["Success", "Failed"]);
    expect(job.status === "Success", `ended ${job.status}: ${job.errorMessage} / ${job.output}`);
    expect(
      job.output.includes("GREETING") && !job.output.includes("smoke\n") && job.output.includes("posted an output: 201"),
      `output: ${job.output}`,
    );
    const outputs = await http(`/Jobs/${job.id}/Outputs`, { token: admin });
    expect(outputs.json?.[0]?.output?.greeting === "hello", `outputs: ${describe(outputs)}`);
    return `job ${job.id}`;
  });

  await check("a failing job ends Failed with its error message", async () => {
    const config = await jobConfig("fail", "examples/fail:latest");
    const run = await http(`/Jobs/Execution/${config.id}`, { method: "POST", token: admin });
    const job = await jobUntil(run.json.jobId, ["Success", "Failed"]);
    expect(job.status === "Failed" && job.errorMessage.includes("the input data set is empty"), `${job.status}: ${job.errorMessage}`);
  });

  await check("the local host runs a job jailed: it cannot read the signing key or write into the checkout", async () => {
    const keys = join(ROOT, ".dev", "keys.json");
    const planted = join(ROOT, `jailbreak-${runId}.txt`);
    const config = await jobConfig("jailbreak", "examples/hello:latest", {
      runCommand: `cat ${keys} ${join(ROOT, ".dev.vars")}; echo pwned > ${planted}; id -u; echo end`,
    });
    const run = await http(`/Jobs/Execution/${config.id}`, { method: "POST", token: admin });
    const job = await jobUntil(run.json.jobId, ["Success", "Failed"]);
    const key = JSON.parse(readFileSync(keys, "utf8")).privateJwk.d;
    expect(
      !job.output.includes(key) && !job.output.includes("privateJwk") && !job.output.includes("LOCAL_CONTAINER_HOST_SECRET"),
      `output: ${job.output}`,
    );
    expect(
      job.output.includes("No such file or directory") && /\n\d+\nend/.test(job.output) && !/\n0\nend/.test(job.output),
      `output: ${job.output}`,
    );
    expect(!existsSync(planted), `${planted} was written`);
    return job.output.trim().split("\n").slice(-2, -1)[0] ? `uid ${job.output.trim().split("\n").slice(-2, -1)[0]}` : "";
  });

  await check("NODE_OPTIONS in a model's static parameters runs inside the jail and finds no signing key", async () => {
    let definition = await http("/ModelDefinitions", {
      method: "POST",
      token: admin,
      body: { name: "models/criticality", version: "1.0", location: "ACR" },
    });
    if (definition.status === 409) definition = await http("/ModelDefinitions/models%2Fcriticality/versions/1.0", { token: admin });
    const keys = join(ROOT, ".dev", "keys.json");
    const steal = `import("node:fs").then((fs) => console.log("STOLEN:" + fs.readFileSync(${JSON.stringify(keys)}, "utf8")))`;
    const model = await http("/Models", {
      method: "POST",
      token: admin,
      body: {
        name: `smoke-steal-${runId}`,
        modelDefinitionName: "models/criticality",
        modelDefinitionVersion: "1.0",
        cpuCores: 1,
        memory: 1,
        staticParameters: { NODE_OPTIONS: `--import "data:text/javascript,${encodeURIComponent(steal)}"` },
      },
    });
    expect(model.status === 201, `model: ${describe(model)}`);
    const monitor = await http("/Monitors", {
      method: "POST",
      token: admin,
      body: { name: `smoke-steal-${runId}`, modelId: model.json.id, status: "Active" },
    });
    const run = await http(`/MonitorJobs/Execution/${monitor.json.id}`, { method: "POST", token: admin });
    expect(run.status === 201 || run.status === 200, `execution: ${describe(run)}`);
    let job;
    for (let i = 0; i < 60; i++) {
      await fireCron();
      job = listOf((await http(`/MonitorJobs?monitorIds=${monitor.json.id}`, { token: admin })).json)[0];
      if (job && ["Succeeded", "Failed"].includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 750));
    }
    const key = JSON.parse(readFileSync(keys, "utf8")).privateJwk.d;
    expect(job && ["Succeeded", "Failed"].includes(job.status), `monitor job: ${JSON.stringify(job)?.slice(0, 300)}`);
    expect(
      !String(job.output).includes(key) && !String(job.output).includes("STOLEN:{") && String(job.output).includes("ENOENT"),
      `output: ${job.output}`,
    );
    return `monitor job ${job.status}`;
  });

  await check("a three-job chain whose second job fails leaves the third Failed", async () => {
    const [a, b, c] = [
      await jobConfig("chain-a", "examples/hello:latest"),
      await jobConfig("chain-b", "examples/fail:latest"),
      await jobConfig("chain-c", "examples/hello:latest"),
    ];
    const run = await http("/Jobs/ChainExecution", { method: "POST", token: admin, body: { jobConfigIds: [a.id, b.id, c.id] } });
    expect(run.status === 201 && run.json.jobIds?.length === 3, describe(run));
    const [first, second, third] = run.json.jobIds;
    const last = await jobUntil(third, ["Failed", "Success"], 60_000);
    const firstJob = (await http(`/Jobs/${first}`, { token: admin })).json;
    const secondJob = (await http(`/Jobs/${second}`, { token: admin })).json;
    expect(firstJob.status === "Success" && secondJob.status === "Failed", `first ${firstJob.status}, second ${secondJob.status}`);
    expect(last.status === "Failed" && last.errorMessage.includes(second), `third: ${last.status} ${last.errorMessage}`);
  });

  await check("firing the cron advances the output of a running slow job", async () => {
    const config = await jobConfig("slow", "examples/slow:latest", { runOptions: { SLOW_SECONDS: "60" } });
    const run = await http(`/Jobs/Execution/${config.id}`, { method: "POST", token: admin });
    const running = await jobUntil(run.json.jobId, ["InProgress"]);
    // The cron answers at once and refreshes in the background (waitUntil): read until the refresh shows.
    const outputAfterCron = async (previous) => {
      await fireCron();
      for (let i = 0; i < 20; i++) {
        const output = (await http(`/Jobs/${running.id}`, { token: admin })).json.output ?? "";
        if (output !== previous) return output;
        await new Promise((r) => setTimeout(r, 250));
      }
      return previous;
    };
    await new Promise((r) => setTimeout(r, 2000));
    const before = await outputAfterCron((await http(`/Jobs/${running.id}`, { token: admin })).json.output ?? "");
    await new Promise((r) => setTimeout(r, 3000));
    const after = await outputAfterCron(before);
    expect(
      after.length > before.length && after.startsWith(before.slice(0, 10)),
      `output did not grow: '${before.slice(-40)}' -> '${after.slice(-40)}'`,
    );
    const cancelled = await http(`/Jobs/${running.id}/Cancellation`, { method: "POST", token: admin });
    expect(cancelled.status === 200 && cancelled.json.status === "Failed", `cancel: ${describe(cancelled)}`);
    return `${before.split("\n").length - 1} -> ${after.split("\n").length - 1} lines`;
  });

  background.push(
    check("a monitor on a local model image runs on its one-minute schedule (cron fired by hand) and updates criticality", async () => {
      let definition = await http("/ModelDefinitions", {
        method: "POST",
        token: admin,
        body: { name: "models/criticality", version: "1.0", location: "ACR" },
      });
      if (definition.status === 409) definition = await http("/ModelDefinitions/models%2Fcriticality/versions/1.0", { token: admin });
      expect(definition.json?.id, `definition: ${describe(definition)}`);
      const model = await http("/Models", {
        method: "POST",
        token: admin,
        body: {
          name: `smoke-model-${runId}`,
          modelDefinitionName: "models/criticality",
          modelDefinitionVersion: "1.0",
          cpuCores: 1,
          memory: 1,
          staticParameters: { BASE_CRITICALITY: "70" },
        },
      });
      expect(model.status === 201, `model: ${describe(model)}`);
      const population = await http(`/Models/${model.json.id}/Populations`, {
        method: "POST",
        token: admin,
        body: { name: "plants", assetType: "Plant" },
      });
      const plants = [];
      for (const i of [1, 2]) {
        const plant = await http("/Assets", { method: "POST", token: admin, body: { name: `smoke-plant-${i}-${runId}`, kind: "plant" } });
        await http(`/Models/${model.json.id}/Populations/${population.json.id}/Items`, {
          method: "POST",
          token: admin,
          body: { assetReference: { id: plant.json.id } },
        });
        plants.push(plant.json.id);
      }
      const monitor = await http("/Monitors", {
        method: "POST",
        token: admin,
        body: { name: `smoke-monitor-${runId}`, modelId: model.json.id, status: "Active", triggerSchedule: "* * * * *" },
      });
      expect(monitor.status === 201 && monitor.json.nextRunAt, `monitor: ${describe(monitor)}`);
      // Wait for the minute the monitor is due, then fire the cron by hand (wrangler's /__scheduled runs it now).
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(monitor.json.nextRunAt) + 1500 - Date.now())));
      await fireCron();
      let job;
      for (let i = 0; i < 40; i++) {
        const jobs = await http(`/MonitorJobs?monitorIds=${monitor.json.id}`, { token: admin });
        job = listOf(jobs.json)[0];
        if (job && (job.status === "Succeeded" || job.status === "Failed")) break;
        await new Promise((r) => setTimeout(r, 750));
        await fireCron();
      }
      expect(job?.status === "Succeeded", `monitor job: ${JSON.stringify(job)?.slice(0, 400)}`);
      expect(job.trigger === "schedule" && job.output.includes("posted the criticality: 201"), `output: ${job.output}`);
      const read = await http(`/Monitors/${monitor.json.id}`, { token: admin });
      const items = read.json.populations[0].items;
      expect(
        items.length === 2 && items.every((it) => typeof it.criticality === "number" && it.band && it.lastMonitorJobId === job.id),
        `items: ${JSON.stringify(items)}`,
      );
      return items.map((it) => `${it.criticality} ${it.band}`).join(", ");
    }),
  );

  background.push(
    check(
      "search: a custom index from the README's example library synchronises on its schedule (cron fired by hand) and " +
        "a saved query over it executes",
      async () => {
        const first = `smokefirst${runId.replace(/[^a-z0-9]/g, "")}`;
        const later = `smokelater${runId.replace(/[^a-z0-9]/g, "")}`;
        await http("/Deviations", {
          method: "POST",
          token: admin,
          body: { referenceId: `SMOKE-LIB1-${runId}`, description: `${first} bolt`, status: "new" },
        });
        const form = new FormData();
        form.append("Name", `smoke-open-deviations-${runId}`);
        form.append("DisplayName", "Open deviations (smoke)");
        form.append("TriggerSchedule", "* * * * *");
        form.append(
          "File",
          new File([readFileSync(join(ROOT, "examples", "search", "open-deviations.js"))], "open-deviations.js", {
            type: "text/javascript",
          }),
        );
        const created = await http("/Indices", { method: "POST", token: admin, rawBody: form, headers: { "api-version": "1.1" } });
        expect(created.status === 201, `index: ${describe(created)}`);
        const id = created.json.id;
        const waitFor = async (predicate, what) => {
          for (let i = 0; i < 80; i++) {
            const index = await http(`/Indices/${id}`, { token: admin });
            if (predicate(index.json)) return index.json;
            await new Promise((r) => setTimeout(r, 250));
          }
          throw new Error(`${what}: ${JSON.stringify((await http(`/Indices/${id}`, { token: admin })).json).slice(0, 500)}`);
        };
        const ready = await waitFor((i) => i.status === "Ready", "first synchronisation");
        await http("/Deviations", {
          method: "POST",
          token: admin,
          body: { referenceId: `SMOKE-LIB2-${runId}`, description: `${later} bolt`, status: "active" },
        });
        await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(ready.nextSynchronizationAt) + 1500 - Date.now())));
        await fireCron();
        const scheduled = await waitFor(
          (i) => i.status === "Ready" && i.lastSynchronization?.reason === "trigger schedule",
          "scheduled synchronisation",
        );
        const saved = await http("/Queries", {
          method: "POST",
          token: admin,
          body: {
            name: `smoke query ${runId}`,
            index: { id },
            queryObject: { text: later },
            metadata: { action: { isVisible: true, order: 1 } },
          },
        });
        expect(saved.status === 201, `query: ${describe(saved)}`);
        const run = await http(`/Queries/${saved.json.id}/Execution`, { method: "POST", token: admin });
        expect(
          run.status === 200 && run.json.total === 1 && run.json.results[0].fields.referenceId === `SMOKE-LIB2-${runId}`,
          `execution: ${describe(run)}`,
        );
        return `${scheduled.documentCount} documents`;
      },
    ),
  );

  /**
   * A local webhook receiver on 127.0.0.1: records every request (headers, body) and answers 204.
   * `subscribe(body)` makes a subscription to it (201 expected) and `stop()` deletes those subscriptions
   * before it closes: a subscription left to a closed port would get a delivery for every later event
   * (an import's thousand deviations), each waiting out its attempt, in front of the README's webhooks.
   */
  async function startReceiver() {
    const got = [];
    const subscriptions = [];
    const receiver = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise((resolve, reject) => receiver.once("error", reject).listen(0, "127.0.0.1", resolve));
    const subscribe = async (body) => {
      const sub = await http("/Subscriptions", { method: "POST", token: admin, body });
      if (sub.status === 201) subscriptions.push(sub.json.id);
      return sub;
    };
    const stop = async () => {
      for (const id of subscriptions) await http(`/Subscriptions/${id}`, { method: "DELETE", token: admin });
      receiver.close();
      receiver.closeAllConnections();
    };
    return { got, receiver, subscribe, stop };
  }

  /** A POST that must create (201): the entity it answers. */
  async function created(path, body) {
    const res = await http(path, { method: "POST", token: admin, body });
    expect(res.status === 201, `${path}: ${describe(res)}`);
    return res.json;
  }

  /**
   * A pump (equipment under a plant of its own) in the population of a model of the local models/vibration
   * image, which reports a vibration of 9.4: what both monitoring checks watch.
   */
  async function pumpWithVibrationModel({ plantName, pumpName, modelName }) {
    const plant = await created("/Assets", { name: plantName, kind: "plant" });
    const pump = await created("/Assets", { name: pumpName, kind: "equipment", parentId: plant.id });
    const definition = await http("/ModelDefinitions", {
      method: "POST",
      token: admin,
      body: { name: "models/vibration", version: "1.0", location: "ACR" },
    });
    expect(definition.status === 201 || definition.status === 409, `definition: ${describe(definition)}`);
    const model = await created("/Models", {
      name: modelName,
      modelDefinitionName: "models/vibration",
      modelDefinitionVersion: "1.0",
      cpuCores: 1,
      memory: 1,
      configurableParameters: { VIBRATION: "9.4" },
    });
    const population = await created(`/Models/${model.id}/Populations`, { name: "pumps", assetType: "Equipment" });
    await created(`/Models/${model.id}/Populations/${population.id}/Items`, { assetReference: { id: pump.id } });
    return { pump, model };
  }

  /** The signed `alarm.{action}` webhook of `alarmId` among what a receiver `got`, verified with the subscription's secret. */
  async function alarmWebhook(got, secret, alarmId, action, timeoutMs = 15_000) {
    const t0 = Date.now();
    let hook;
    while (!(hook = got.find((h) => h.body.includes(alarmId) && h.body.includes(`"alarm.${action}"`)))) {
      if (Date.now() - t0 > timeoutMs)
        throw new Error(`no alarm.${action} webhook for ${alarmId} within ${timeoutMs / 1000} s (${got.length} other requests)`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const payload = new Webhook(secret).verify(hook.body, hook.headers);
    expect(payload.type === `alarm.${action}` && payload.data.entityId === alarmId, `webhook: ${hook.body.slice(0, 300)}`);
    return payload;
  }

  /** One run of a monitor on demand, to its end (the cron fired by hand meanwhile); it must succeed. */
  async function runMonitorToEnd(monitorId) {
    const run = await http(`/MonitorJobs/Execution/${monitorId}`, { method: "POST", token: admin });
    expect(run.status === 201, `execution: ${describe(run)}`);
    let job;
    for (let i = 0; i < 60; i++) {
      await fireCron();
      job = (await http(`/MonitorJobs/${run.json.id}`, { token: admin })).json;
      if (["Succeeded", "Failed", "Unknown"].includes(job?.status)) break;
      await new Promise((r) => setTimeout(r, 750));
    }
    expect(job?.status === "Succeeded", `monitor job: ${JSON.stringify(job)?.slice(0, 500)}`);
    return job;
  }

  await check(
    "webhooks: a local receiver subscribed to deviation.created gets a webhook signed as Standard Webhooks " +
      "specifies after POST /Deviations",
    async () => {
      const { got, receiver, subscribe, stop } = await startReceiver();
      try {
        const url = `http://127.0.0.1:${receiver.address().port}/hooks/${runId}`;
        // Production's rule, on the real server: a private target is refused.
        const refused = await http("/Subscriptions", {
          method: "POST",
          token: admin,
          body: { url: "https://169.254.169.254/hook", filters: [{ entityKind: "deviation" }] },
        });
        expect(refused.status === 400, `a link-local target: ${describe(refused)}`);
        const sub = await subscribe({ url, filters: [{ entityKind: "deviation", action: "created" }] });
        expect(sub.status === 201 && sub.json.secret?.startsWith("whsec_"), `subscription: ${describe(sub)}`);
        const deviation = await http("/Deviations", {
          method: "POST",
          token: admin,
          body: { referenceId: `SMOKE-HOOK-${runId}`, description: "Corrosion under insulation near the pump" },
        });
        expect(deviation.status === 201, `deviation: ${describe(deviation)}`);
        const t0 = Date.now();
        let hook;
        while (!(hook = got.find((h) => h.body.includes(deviation.json.id)))) {
          if (Date.now() - t0 > 15_000) throw new Error(`no webhook within 15 s (${got.length} other requests)`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const payload = new Webhook(sub.json.secret).verify(hook.body, hook.headers);
        expect(payload.type === "deviation.created" && payload.data.entityId === deviation.json.id, `payload: ${hook.body.slice(0, 300)}`);
        expect(
          hook.headers["webhook-id"] === payload.data.eventId,
          `webhook-id ${hook.headers["webhook-id"]} is not the event id ${payload.data.eventId}`,
        );
        let listed;
        for (let i = 0; i < 50; i++) {
          listed = await http(`/Subscriptions/${sub.json.id}/Deliveries`, { token: admin });
          if (listed.json?.[0]?.status === "succeeded") break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(
          listed.json?.[0]?.status === "succeeded" && listed.json[0].lastResponse?.statusCode === 204,
          `deliveries: ${describe(listed)}`,
        );
        return `${Date.now() - t0} ms after the 201`;
      } finally {
        await stop();
      }
    },
  );

  await check(
    "monitoring loop: a pump's vibration over a controller's limit enters an alarm, raises a deviation on the pump " +
      "and creates a work item from a template, and a local receiver gets the signed alarm webhook; the same reading " +
      "creates nothing; a normal reading leaves the alarm",
    async () => {
      // The webhook side: a local receiver subscribed to alarm events (README, "Webhooks").
      const { got, receiver, subscribe, stop } = await startReceiver();
      try {
        const sub = await subscribe({
          url: `http://127.0.0.1:${receiver.address().port}/alarms/${runId}`,
          filters: [{ entityKind: "alarm" }],
        });
        expect(sub.status === 201 && sub.json.secret, `subscription: ${describe(sub)}`);
        const webhook = (alarmId, action) => alarmWebhook(got, sub.json.secret, alarmId, action);

        // What the README's walkthrough does ("From a monitor to a work item in five minutes").
        const at = await created("/ActivityTemplates", { displayName: `Measure bearing vibration ${runId}` });
        const wt = await created("/WorkTemplates", {
          displayName: `Pump bearing inspection ${runId}`,
          activityTemplates: [{ activityTemplateId: at.id }],
        });
        const { pump, model } = await pumpWithVibrationModel({
          plantName: `smoke-loop-plant-${runId}`,
          pumpName: `P-101-${runId}`,
          modelName: `smoke-vibration-${runId}`,
        });
        const monitor = await created("/Monitors", {
          name: `smoke-pump-watch-${runId}`,
          modelId: model.id,
          status: "Active",
          controllers: [
            {
              name: "High vibration",
              conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7.1 }],
              actions: { raiseDeviation: { status: "active" }, createWorkItem: { workTemplateId: wt.id }, setCriticality: { value: 90 } },
              onLeave: { deviationStatus: "closed" },
            },
          ],
        });
        const runMonitor = async () => {
          const job = await runMonitorToEnd(monitor.id);
          expect(job.output.includes("posted the readings: 201"), `monitor job: ${JSON.stringify(job)?.slice(0, 500)}`);
          return job;
        };
        const item = async () => (await http(`/Monitors/${monitor.id}`, { token: admin })).json.populations[0].items[0];

        // 9.4 mm/s: the alarm is entered with its deviation, work item and criticality.
        const first = await runMonitor();
        const entered = await item();
        const alarm = entered.alarms[0];
        expect(
          entered.alarms.length === 1 &&
            alarm.monitorJobId === first.id &&
            alarm.deviationId &&
            alarm.workItemId &&
            entered.criticality === 90,
          `item: ${JSON.stringify(entered)}`,
        );
        const inAlarm = listOf((await http(`/Monitors/PopulationItems?monitorIds=${monitor.id}&alarmState=alarm`, { token: admin })).json);
        expect(inAlarm.length === 1 && inAlarm[0].id === entered.id, `alarmState=alarm: ${JSON.stringify(inAlarm)}`);
        const deviation = (await http(`/Deviations/${alarm.deviationId}`, { token: admin })).json;
        expect(
          deviation.assetReference.equipment?.id === pump.id &&
            deviation.status === "active" &&
            deviation.origin.kind === "monitoring" &&
            deviation.origin.monitor.id === monitor.id &&
            deviation.origin.monitorJobId === first.id,
          `deviation: ${JSON.stringify(deviation).slice(0, 500)}`,
        );
        expect(
          deviation.description.includes("vibration GreaterThen 7.1: 9.4 seen") && deviation.workItemIds[0] === alarm.workItemId,
          `deviation: ${deviation.description} ${deviation.workItemIds}`,
        );
        const workItem = (await http(`/WorkItems/${alarm.workItemId}`, { token: admin })).json;
        expect(
          workItem.basedOn[0]?.id === wt.id && workItem.deviationIds[0] === alarm.deviationId,
          `work item: ${JSON.stringify(workItem).slice(0, 400)}`,
        );
        const enteredHook = await webhook(alarm.id, "entered");

        // The same reading: nothing new.
        await runMonitor();
        const still = await item();
        const history = listOf((await http(`/Monitors/${monitor.id}/PopulationItems/${entered.id}/Alarms`, { token: admin })).json);
        expect(
          still.alarms.length === 1 && still.alarms[0].id === alarm.id && history.length === 1,
          `after the same reading: ${JSON.stringify(still.alarms)} ${JSON.stringify(history)}`,
        );
        const links = listOf((await http(`/Deviations/${alarm.deviationId}/WorkItems`, { token: admin })).json);
        expect(links.length === 1, `work items of the deviation: ${JSON.stringify(links)}`);

        // 2.0 mm/s (the monitor read, its parameter changed, sent back): the alarm is left and the deviation closed.
        const read = await http(`/Monitors/${monitor.id}`, { token: admin });
        const saved = await http("/Monitors", {
          method: "PUT",
          token: admin,
          headers: { "if-match": read.headers.get("etag") },
          body: { ...read.json, configurableParameters: { VIBRATION: "2.0" } },
        });
        expect(saved.status === 200, `monitor PUT: ${describe(saved)}`);
        const third = await runMonitor();
        const normal = await item();
        const after = listOf((await http(`/Monitors/${monitor.id}/PopulationItems/${entered.id}/Alarms`, { token: admin })).json);
        expect(
          normal.alarms.length === 0 && after.map((e) => e.action).join() === "left,entered" && after[0].monitorJobId === third.id,
          `after a normal reading: ${JSON.stringify(after)}`,
        );
        const closed = (await http(`/Deviations/${alarm.deviationId}`, { token: admin })).json;
        expect(closed.status === "closed", `deviation status ${closed.status}`);
        await webhook(alarm.id, "left");
        return `alarm ${alarm.id.slice(0, 8)}: entered (webhook ${enteredHook.data.eventId.slice(0, 8)}), kept, left; deviation closed`;
      } finally {
        await stop();
      }
    },
  );

  background.push(
    check(
      "working an alarm: entered, escalated once (a minute unacknowledged), acknowledged, shelved until it clears, " +
        "cleared; a local receiver gets each as a signed webhook naming the severity",
      async () => {
        const { got, receiver, subscribe, stop } = await startReceiver();
        try {
          const sub = await subscribe({
            url: `http://127.0.0.1:${receiver.address().port}/worked/${runId}`,
            filters: [{ entityKind: "alarm" }],
          });
          expect(sub.status === 201 && sub.json.secret, `subscription: ${describe(sub)}`);
          const webhook = (alarmId, action) => alarmWebhook(got, sub.json.secret, alarmId, action);
          const { model } = await pumpWithVibrationModel({
            plantName: `smoke-alarm-plant-${runId}`,
            pumpName: `P-201-${runId}`,
            modelName: `smoke-worked-${runId}`,
          });
          const monitor = await created("/Monitors", {
            name: `smoke-worked-watch-${runId}`,
            modelId: model.id,
            status: "Active",
            controllers: [
              {
                name: "High vibration",
                severity: "high",
                conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7.1 }],
                escalation: { afterMinutes: 1, repeatMinutes: 600 },
              },
            ],
          });
          const runMonitor = () => runMonitorToEnd(monitor.id);
          const act = async (alarmId, action, body) => {
            const res = await http(`/Alarms/${alarmId}/${action}`, { method: "POST", token: admin, body });
            expect(res.status === 200, `${action}: ${describe(res)}`);
            return res.json;
          };

          await runMonitor();
          const board = await http(`/Alarms?monitorIds=${monitor.id}`, { token: admin });
          const alarm = listOf(board.json)[0];
          expect(alarm?.status === "activeUnacknowledged" && alarm.severity === "high", `board: ${describe(board)}`);
          const entered = await webhook(alarm.id, "entered");
          expect(entered.data.entity?.severity === "high", `entered webhook: ${JSON.stringify(entered).slice(0, 400)}`);

          // Nobody acknowledges it for a minute: the clock (the minute cron, fired by hand) escalates it, once. The
          // timers run once a minute (a fixed schedule of the dispatcher), so it comes 60 to 120 s after entering.
          const due = Date.parse(alarm.enteredAt) + 60_000;
          const t0 = Date.now();
          let escalation;
          while ((escalation = (await http(`/Alarms/${alarm.id}`, { token: admin })).json.escalation).count === 0) {
            if (Date.now() - t0 > 200_000) throw new Error(`not escalated within 200 s: ${JSON.stringify(escalation)}`);
            await new Promise((r) => setTimeout(r, Math.max(1000, Math.min(5000, due - Date.now()))));
            await fireCron();
          }
          const escalated = await webhook(alarm.id, "escalated");
          expect(escalated.data.entity?.severity === "high", `escalated webhook: ${JSON.stringify(escalated).slice(0, 400)}`);
          expect(escalation.count === 1, `escalation: ${JSON.stringify(escalation)}`);

          const acked = await act(alarm.id, "Acknowledgement", { comment: `smoke ${runId}: on it` });
          expect(acked.status === "activeAcknowledged" && acked.escalation.nextAt === null, `acknowledged: ${JSON.stringify(acked)}`);
          await webhook(alarm.id, "acknowledged");
          const shelved = await act(alarm.id, "Shelving", { oneShot: true, comment: "until the bearing is greased" });
          expect(shelved.shelving, `shelved: ${JSON.stringify(shelved)}`);
          await webhook(alarm.id, "shelved");

          // The reading comes back to normal: the alarm clears, and its one-shot shelving ends with it.
          const read = await http(`/Monitors/${monitor.id}`, { token: admin });
          const saved = await http("/Monitors", {
            method: "PUT",
            token: admin,
            headers: { "if-match": read.headers.get("etag") },
            body: { ...read.json, configurableParameters: { VIBRATION: "2.0" } },
          });
          expect(saved.status === 200, `monitor PUT: ${describe(saved)}`);
          await runMonitor();
          await webhook(alarm.id, "left");
          const final = (await http(`/Alarms/${alarm.id}`, { token: admin })).json;
          const actions = final.history.map((e) => e.action);
          expect(
            final.status === "clearedAcknowledged" &&
              ["entered", "escalated", "acknowledged", "shelved", "left"].every((a) => actions.includes(a)),
            `alarm: ${final.status} ${actions.join(",")}`,
          );
          return `${actions.join(", ")}; escalated ${((Date.now() - t0) / 1000).toFixed(0)} s after entering was seen`;
        } finally {
          await stop();
        }
      },
    ),
  );

  await walkthroughs;
  // The restart below would cut off a background check still waiting.
  await Promise.all(background);

  await check("state survives a restart (same persist dir, migrations re-applied)", async () => {
    const kept = await http("/Categories", { method: "POST", token: admin, body: { name: `smoke-persist-${runId}` } });
    expect(kept.status === 201, `create: ${describe(kept)}`);
    await stopServer();
    applyMigrations(persistTo, { quiet: true });
    await startServer(port);
    const res = await http(`/Categories/${kept.json.id}`, { token: admin });
    expect(res.status === 200 && res.json?.name === `smoke-persist-${runId}`, `after restart: ${describe(res)}`);
    const all = await http("/Categories", { token: admin });
    const defaults = listOf(all.json).filter((c) => c.isDefault);
    expect(defaults.length === 1, `${defaults.length} default categories after re-applying the migrations`);
  });
}

run().then(
  () => finish(),
  (error) => finish(error.message),
);
