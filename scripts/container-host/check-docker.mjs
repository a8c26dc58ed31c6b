// The local host's Docker path (node --test; `npm run test:host`), against a recording fake Docker
// CLI: these machines have no Docker daemon, so what is proven is the commands the host gives
// Docker (arguments, where variable values travel, removal by name), not Docker itself. The fake runs
// its "container" in a network namespace of its own, as Docker's `--network none` does, so the
// network rule (only the API) is tried for real where this machine allows namespaces (root).
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { hostClient } from "./check-support.mjs";
import { dockerRunArgs, startContainerHost } from "./server.mjs";

const dir = mkdtempSync(join(tmpdir(), "fake-docker-"));
const record = join(dir, "calls.jsonl");
const containers = join(dir, "containers");
mkdirSync(containers);
const root = process.getuid?.() === 0;
// `docker info` answers; `docker run` records its arguments and environment, then runs the container
// (container.mjs) in a network namespace of its own with its loopback up (root only; elsewhere in
// place), keeping its pid for `docker inspect`; `docker rm -f` is recorded and kills it.
writeFileSync(
  join(dir, "fake-docker.mjs"),
  `import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
const [command, ...args] = process.argv.slice(2);
appendFileSync(${JSON.stringify(record)}, JSON.stringify({ command, args, env: process.env }) + "\\n");
const pidFile = (name) => ${JSON.stringify(containers)} + "/" + name;
if (command === "info") { console.log("28.0.0"); process.exit(0); }
if (command === "inspect") {
  const name = args[args.length - 1];
  if (!existsSync(pidFile(name))) { console.error("Error: No such object: " + name); process.exit(1); }
  console.log(readFileSync(pidFile(name), "utf8"));
  process.exit(0);
}
if (command === "rm") {
  const name = args[args.length - 1];
  if (existsSync(pidFile(name))) try { process.kill(Number(readFileSync(pidFile(name), "utf8"))); } catch {}
  process.exit(0);
}
if (command === "run") {
  const name = args[args.indexOf("--name") + 1];
  const container = ${JSON.stringify(join(dir, "container.mjs"))};
  const inNamespace = ["--net", "--", "/bin/sh", "-c", 'ip link set lo up && exec "$0" "$@"', process.execPath, container];
  const run = ${root}
    ? spawn("unshare", inNamespace, { stdio: "inherit" })
    : spawn(process.execPath, [container], { stdio: "inherit" });
  writeFileSync(pidFile(name), String(run.pid));
  run.on("close", (code) => process.exit(code ?? 1));
}
`,
);
// The container: prints, optionally tries the ports of FAKE_PROBE_PORTS on its loopback (the first
// until it answers, at most 10 s, as the API's port opens just after the container starts; the others
// once), sleeps FAKE_SLEEP_MS and exits with FAKE_EXIT.
writeFileSync(
  join(dir, "container.mjs"),
  `console.log("inside the container");
console.error("container error line");
const probe = async (port, waitMs) => {
  for (const deadline = Date.now() + waitMs; ; ) {
    try {
      const res = await fetch("http://127.0.0.1:" + port + "/probe");
      return port + ": " + res.status + " " + (await res.text());
    } catch (error) {
      if (Date.now() > deadline) return port + ": refused " + (error.cause?.code ?? error.message);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
};
const ports = (process.env.FAKE_PROBE_PORTS ?? "").split(",").filter(Boolean);
for (const [i, port] of ports.entries()) console.log(await probe(port, i === 0 ? 10_000 : 0));
setTimeout(() => process.exit(Number(process.env.FAKE_EXIT || 0)), Number(process.env.FAKE_SLEEP_MS || 0));
`,
);
const fakeDocker = join(dir, "docker");
writeFileSync(fakeDocker, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(dir, "fake-docker.mjs"))} "$@"\n`);
chmodSync(fakeDocker, 0o755);
const calls = () =>
  readFileSync(record, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));

// The API a job may reach, and another local server it may not.
const api = createServer((req, res) => res.end(`api answered ${req.url}`));
const other = createServer((req, res) => res.end("other server"));
let host, put, until;
before(async () => {
  process.env.HOST_SECRET_SHOULD_NOT_LEAK = "leak";
  await Promise.all([api, other].map((server) => new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))));
  host = await startContainerHost({
    port: 0,
    imagesDir: join(dir, "no-local-images"),
    dockerCommand: fakeDocker,
    apiUrl: `http://127.0.0.1:${api.address().port}`,
    // Off the root check: the arguments are the same; only the network test needs namespaces.
    dockerNetwork: { ok: true, reason: null },
    maxJobs: 100,
    maxJobsPerUser: 100,
  });
  ({ put, until } = hostClient(host));
});
after(async () => {
  await host.close();
  await Promise.all([api, other].map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

const spec = (name, extra = {}) => ({
  name,
  image: "registry.example:5000/scoring/model:1.4",
  command: null,
  environment: {},
  cpuCores: 2,
  memoryGb: 1.5,
  gpuCores: null,
  gpuSku: null,
  timeoutSeconds: 30,
  ...extra,
});

test("the host finds the daemon through `docker info`", () => {
  assert.equal(host.docker, true);
});

test("docker run names the group, sizes it, and passes variable names only on the command line", async () => {
  assert.equal(
    (await put("containergroup-d1", spec("containergroup-d1", { environment: { jobId: "d1", SECRET: "s3cr3t value" } }))).status,
    201,
  );
  const state = await until("containergroup-d1", ["succeeded", "failed"]);
  assert.equal(state.phase, "succeeded");
  assert.match(state.output, /inside the container/);
  const run = calls().find((c) => c.command === "run" && c.args.includes("containergroup-d1"));
  assert.deepEqual(run.args, [
    "--rm",
    "--name",
    "containergroup-d1",
    "--network",
    "none",
    "--cpus",
    "2",
    "--memory",
    "1536m",
    "--pids-limit",
    "256",
    "--security-opt",
    "no-new-privileges",
    "--cap-drop",
    "ALL",
    "-e",
    "jobId",
    "-e",
    "SECRET",
    "registry.example:5000/scoring/model:1.4",
  ]);
  assert.ok(!JSON.stringify(run.args).includes("s3cr3t"), "a value is never on the command line");
  // The CLI gets the values to forward, and nothing else of this process.
  assert.equal(run.env.SECRET, "s3cr3t value");
  assert.equal(run.env.jobId, "d1");
  assert.equal(run.env.HOST_SECRET_SHOULD_NOT_LEAK, undefined);
});

test("a run command replaces the entrypoint; GPUs are asked for", () => {
  assert.deepEqual(
    dockerRunArgs(
      "containergroup-g",
      { ...spec("containergroup-g"), command: "python score.py --all", gpuCores: 2, gpuSku: "V100" },
      { jobId: "g" },
    ),
    [
      "run",
      "--rm",
      "--name",
      "containergroup-g",
      "--network",
      "none",
      "--cpus",
      "2",
      "--memory",
      "1536m",
      "--pids-limit",
      "256",
      "--security-opt",
      "no-new-privileges",
      "--cap-drop",
      "ALL",
      "--gpus",
      "2",
      "-e",
      "jobId",
      "--entrypoint",
      "/bin/sh",
      "registry.example:5000/scoring/model:1.4",
      "-c",
      "python score.py --all",
    ],
  );
});

test("the container's exit code and last error line fail the group", async () => {
  await put("containergroup-d2", spec("containergroup-d2", { environment: { FAKE_EXIT: "4" } }));
  const state = await until("containergroup-d2", ["failed"]);
  assert.equal(state.exitCode, 4);
  assert.equal(state.error, "container error line (exit code 4)");
});

test("removing a group removes its container by name (stopping `docker run` alone would leave it running)", async () => {
  await put("containergroup-d3", spec("containergroup-d3", { environment: { FAKE_SLEEP_MS: "60000" } }));
  await until("containergroup-d3", ["running"]);
  assert.equal((await hostClient(host).del("containergroup-d3")).status, 204);
  for (let i = 0; i < 50 && !calls().some((c) => c.command === "rm"); i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(calls().find((c) => c.command === "rm").args, ["-f", "containergroup-d3"]);
});

test("the time limit removes the container too", async () => {
  await put("containergroup-d4", spec("containergroup-d4", { timeoutSeconds: 1, environment: { FAKE_SLEEP_MS: "60000" } }));
  const state = await until("containergroup-d4", ["failed"]);
  assert.match(state.error, /time limit of 1 s reached/);
  for (let i = 0; i < 50 && !calls().some((c) => c.command === "rm" && c.args[1] === "containergroup-d4"); i++)
    await new Promise((r) => setTimeout(r, 100));
  assert.ok(calls().some((c) => c.command === "rm" && c.args[1] === "containergroup-d4"));
});

test(
  "a Docker job reaches the API's port on its loopback, and no other local server (the network rule of folder images)",
  { skip: !root && "network namespaces need root here; the arguments (--network none) are checked above" },
  async () => {
    const apiPort = api.address().port;
    const otherPort = other.address().port;
    await put("containergroup-dnet", spec("containergroup-dnet", { environment: { FAKE_PROBE_PORTS: `${apiPort},${otherPort}` } }));
    const state = await until("containergroup-dnet", ["succeeded", "failed"], { timeoutMs: 40_000 });
    assert.equal(state.phase, "succeeded", state.error);
    assert.match(state.output, new RegExp(`${apiPort}: 200 api answered /probe`));
    assert.match(state.output, new RegExp(`${otherPort}: refused`));
  },
);

test("where the network rule cannot be made, Docker jobs are refused, never run with an open network", async () => {
  const bare = await startContainerHost({
    port: 0,
    imagesDir: join(dir, "no-local-images"),
    dockerCommand: fakeDocker,
    dockerNetwork: { ok: false, reason: "the host must run as root to open the API's port inside a container" },
  });
  try {
    const c = hostClient(bare);
    await c.put("containergroup-dbare", spec("containergroup-dbare"));
    const state = await c.until("containergroup-dbare", ["failed", "succeeded"]);
    assert.equal(state.phase, "failed");
    assert.match(state.error, /cannot be given their network rule \(only the API\) here, so none runs: the host must run as root/);
    assert.ok(!calls().some((c) => c.command === "run" && c.args.includes("containergroup-dbare")), "docker run was never called");
  } finally {
    await bare.close();
  }
});
