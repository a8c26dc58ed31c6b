// The local host's Docker path (node --test; `npm run test:host`), against a recording fake Docker
// CLI: these machines have no Docker daemon, so what is proven is the commands the host gives
// Docker (arguments, where variable values travel, removal by name), not Docker itself.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { hostClient } from "./check-support.mjs";
import { dockerRunArgs, startContainerHost } from "./server.mjs";

const dir = mkdtempSync(join(tmpdir(), "fake-docker-"));
const record = join(dir, "calls.jsonl");
// `docker info` answers; `docker run` records its arguments and environment, prints, then sleeps
// FAKE_SLEEP_MS and exits with FAKE_EXIT; `docker rm -f` is recorded.
writeFileSync(
  join(dir, "fake-docker.mjs"),
  `import { appendFileSync } from "node:fs";
const [command, ...args] = process.argv.slice(2);
appendFileSync(${JSON.stringify(record)}, JSON.stringify({ command, args, env: process.env }) + "\\n");
if (command === "info") { console.log("28.0.0"); process.exit(0); }
if (command === "run") {
  console.log("inside the container");
  console.error("container error line");
  setTimeout(() => process.exit(Number(process.env.FAKE_EXIT || 0)), Number(process.env.FAKE_SLEEP_MS || 0));
}
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

let host, put, until;
before(async () => {
  process.env.HOST_SECRET_SHOULD_NOT_LEAK = "leak";
  host = await startContainerHost({ port: 0, imagesDir: join(dir, "no-local-images"), dockerCommand: fakeDocker });
  ({ put, until } = hostClient(host));
});
after(async () => {
  await host.close();
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
