// Tests of the local container host (node --test; `npm run test:host`): it runs real jailed
// processes, so it is checked in Node, not in the Workers pool. The isolation tests try what a
// hostile job would: read the service's keys, write into its checkout, outlive its cancellation,
// fork without end, fill the disk, reach other local servers.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { hostClient, spec } from "./check-support.mjs";
import { startContainerHost } from "./server.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const imagesDir = mkdtempSync(join(tmpdir(), "host-images-"));
function image(name, script, extra = {}) {
  const dir = join(imagesDir, name.replace("/", "_"));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "image.json"), JSON.stringify({ name, tag: "latest", description: name, command: "node run.mjs", ...extra }));
  writeFileSync(join(dir, "run.mjs"), script);
}
image("t/env", "console.log(JSON.stringify(Object.keys(process.env).sort())); console.log('VALUE=' + (process.env.VISIBLE ?? ''));");
image("t/fail", "console.error('something broke'); process.exit(3);");
image("t/sleep", "setTimeout(() => console.log('late'), 60000); console.log('sleeping');");
image("t/loud", "process.stdout.write('a'.repeat(1500 * 1024) + 'END\\n');");
image("t/counter", "setTimeout(() => {}, 3000);");
image("t/shell", "", { command: "true" });

// Stand-ins for what the service keeps in its checkout: the signing key and local state.
const secretDir = join(ROOT, ".wrangler", "isolation-check");
const sentinel = join(secretDir, "keys.json");
const SENTINEL_TEXT = "sentinel-private-key-d41d8cd9";
const planted = join(ROOT, "planted-by-a-job.txt");

// The "API" a job may reach, and its answer.
const api = createServer((req, res) => res.end(`api answered ${req.url}`));
const MAX_PROCESSES = 64;
const DISK_MB = 64;

let host;
let client;
const started = [];
before(async () => {
  mkdirSync(secretDir, { recursive: true });
  writeFileSync(sentinel, SENTINEL_TEXT, { mode: 0o644 });
  process.env.HOST_SECRET_SHOULD_NOT_LEAK = "leak";
  await new Promise((resolve) => api.listen(0, "127.0.0.1", resolve));
  host = await startContainerHost({
    port: 0,
    imagesDir,
    apiUrl: `http://127.0.0.1:${api.address().port}`,
    maxProcesses: MAX_PROCESSES,
    diskMb: DISK_MB,
    // The job limits have checks of their own (check-limits.mjs); here jobs of many checks overlap.
    maxJobs: 100,
    maxJobsPerUser: 100,
    log: (line) => started.push(line),
  });
  client = hostClient(host);
});
after(async () => {
  await host.close();
  await new Promise((resolve) => api.close(resolve));
  rmSync(imagesDir, { recursive: true, force: true });
  rmSync(secretDir, { recursive: true, force: true });
  rmSync(planted, { force: true });
});

const isolated = () => host.isolation.mode !== "none";
/** Runs a shell command as a job to its end; returns its final state. */
async function run(name, command, extra = {}) {
  assert.equal((await client.put(name, spec(name, "t/shell", { command, ...extra }))).status, 201);
  return client.until(name, ["succeeded", "failed"], { timeoutMs: 60_000 });
}
/** Host pids whose command line starts with `marker`. */
function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").startsWith(marker)) found.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}
const jailFolders = () => readdirSync(tmpdir()).filter((d) => d.startsWith("integrity-edge-job-"));

test("answers only requests carrying its secret", async () => {
  for (const [method, path] of [
    ["GET", "/images"],
    ["PUT", "/groups/containergroup-x"],
    ["GET", "/groups/containergroup-x"],
    ["DELETE", "/groups/containergroup-x"],
  ]) {
    const none = await fetch(`${host.url}${path}`, {
      method,
      body: method === "PUT" ? JSON.stringify(spec("containergroup-x", "t/env")) : undefined,
    });
    assert.equal(none.status, 401, `${method} ${path} without the secret`);
    const wrong = await fetch(`${host.url}${path}`, { method, headers: { authorization: `Bearer ${host.secret.slice(1)}x` } });
    assert.equal(wrong.status, 401, `${method} ${path} with a wrong secret`);
  }
  assert.equal(await client.get("containergroup-x"), null, "nothing was started");
});

test("lists the images of its folder with the machine's capacity", async () => {
  const body = await (await client.images()).json();
  assert.ok(body.images.some((i) => i.name === "t/env" && i.tag === "latest"));
  assert.ok(body.capacity.maxCpuCores >= 1);
});

test(
  "isolates jobs on this machine (CI runs as root: namespaces, a uid per job, cgroups)",
  { skip: process.getuid?.() !== 0 && "only root is sure to have every isolation tool" },
  () => {
    assert.equal(host.isolation.mode, "root");
    assert.ok(host.isolation.cgroups, "cgroups are made for the jobs");
  },
);

test("where jobs cannot be isolated, folder images are refused, never run bare", async () => {
  const bare = await startContainerHost({ port: 0, imagesDir, isolation: { mode: "none", reason: "no namespaces here" } });
  try {
    const c = hostClient(bare);
    await c.put("containergroup-bare", spec("containergroup-bare", "t/env"));
    const state = await c.until("containergroup-bare", ["failed", "succeeded"]);
    assert.equal(state.phase, "failed");
    assert.match(state.error, /cannot isolate jobs on this machine, so it runs none: no namespaces here/);
  } finally {
    await bare.close();
  }
});

test("runs with only the group's environment", async () => {
  assert.equal(
    (await client.put("containergroup-env1", spec("containergroup-env1", "t/env", { environment: { VISIBLE: "yes", jobId: "env1" } })))
      .status,
    201,
  );
  const state = await client.until("containergroup-env1", ["succeeded", "failed"]);
  assert.equal(state.phase, "succeeded", state.error);
  assert.equal(state.exitCode, 0);
  assert.match(state.output, /VALUE=yes/);
  assert.doesNotMatch(state.output, /HOST_SECRET_SHOULD_NOT_LEAK/);
});

test("a job cannot read the service's keys or state, as a command or through NODE_OPTIONS", async () => {
  assert.ok(isolated());
  const keys = join(ROOT, ".dev", "keys.json");
  const state = await run(
    "containergroup-steal",
    `cat ${sentinel} ${keys} ${join(ROOT, ".dev.vars")}; ls ${ROOT}; cat /proc/1/environ; echo done`,
  );
  assert.doesNotMatch(state.output, new RegExp(SENTINEL_TEXT));
  assert.doesNotMatch(state.output, /privateJwk|package\.json|LOCAL_CONTAINER_HOST_SECRET/);
  assert.match(state.output, /No such file or directory/);
  // A model's static parameters become its environment: NODE_OPTIONS runs code before the job's own.
  const steal = `import("node:fs").then((fs) => console.log("STOLEN:" + fs.readFileSync(${JSON.stringify(sentinel)}, "utf8")))`;
  const viaNode = await run("containergroup-node-options", "node -e 'setTimeout(() => {}, 200)'", {
    environment: { NODE_OPTIONS: `--import "data:text/javascript,${encodeURIComponent(steal)}"` },
  });
  assert.doesNotMatch(viaNode.output, new RegExp(SENTINEL_TEXT));
  assert.match(viaNode.output, /ENOENT/, "the code ran, and found nothing to read");
});

test("a job runs as an unprivileged uid in a working folder of its own, removed when it ends", async () => {
  const before_ = jailFolders().length;
  const state = await run("containergroup-whoami", "id -u; pwd; echo kept > note; cat note; ls /proc | grep -c '^[0-9]'");
  assert.equal(state.phase, "succeeded", state.error);
  const [uid, cwd, note] = state.output.trim().split("\n");
  assert.notEqual(Number(uid), 0);
  assert.notEqual(Number(uid), process.getuid());
  assert.equal(cwd, "/job");
  assert.equal(note, "kept");
  for (let i = 0; i < 50 && jailFolders().length > before_; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(jailFolders().length, before_, "the working folder is gone");
});

test("a job cannot write into the checkout", async () => {
  const state = await run(
    "containergroup-plant",
    `echo pwned > ${planted}; echo pwned > ${join(ROOT, "package.json")}; echo pwned > /usr/pwned`,
  );
  assert.equal(existsSync(planted), false);
  assert.doesNotMatch(readFileSync(join(ROOT, "package.json"), "utf8"), /pwned/);
  assert.equal(existsSync("/usr/pwned"), false);
  assert.equal(state.phase, "failed");
});

test("a job sees neither other jobs nor the host's processes", async () => {
  await client.put(
    "containergroup-other",
    spec("containergroup-other", "t/shell", { command: "echo other-secret > /job/mine; exec sleep 1801" }),
  );
  await client.until("containergroup-other", ["running"]);
  const state = await run("containergroup-peek", "ps -eo args; cat /proc/*/root/job/mine 2>&1; ls /tmp/integrity-edge-job-* 2>&1");
  assert.doesNotMatch(state.output, /sleep 1801|other-secret|wrangler|check-server/);
  assert.ok(!state.output.includes(ROOT), "no path of the service shows");
  await client.del("containergroup-other");
});

test("cancellation ends every process of the job, including ones that called setsid or double-forked", async () => {
  await client.put(
    "containergroup-escape",
    spec("containergroup-escape", "t/shell", {
      command: "setsid sh -c 'exec sleep 1711' & (setsid sh -c 'sleep 1712 & exit 0' &); nohup sleep 1713 & sleep 1714",
    }),
  );
  await client.until("containergroup-escape", ["running"]);
  for (let i = 0; i < 50 && processesWith("sleep 171").length < 4; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(processesWith("sleep 171").length, 4, "the escapes are running before the cancellation");
  assert.equal((await client.del("containergroup-escape")).status, 204);
  for (let i = 0; i < 50 && processesWith("sleep 171").length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesWith("sleep 171"), []);
});

test("the time limit ends the escapes too", async () => {
  await client.put(
    "containergroup-slow1",
    spec("containergroup-slow1", "t/shell", { command: "setsid sh -c 'exec sleep 1721' & exec sleep 1722", timeoutSeconds: 1 }),
  );
  const state = await client.until("containergroup-slow1", ["failed", "succeeded"]);
  assert.equal(state.phase, "failed");
  assert.match(state.error, /time limit of 1 s/);
  for (let i = 0; i < 50 && processesWith("sleep 172").length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesWith("sleep 172"), []);
});

test("a job cannot start more processes than its limit", async () => {
  const state = await run("containergroup-forks", "i=0; while [ $i -lt 1000 ]; do sleep 1731 & i=$((i+1)); done; echo forked-all", {
    timeoutSeconds: 20,
  });
  assert.ok(processesWith("sleep 1731").length <= MAX_PROCESSES, "never more than the limit at once");
  assert.doesNotMatch(state.output, /forked-all/);
  assert.match(state.output, /fork|Resource temporarily unavailable/i);
  for (let i = 0; i < 50 && processesWith("sleep 1731").length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesWith("sleep 1731"), [], "and they end with it");
});

test("a job cannot write more than its disk limit (2 GB asked, 64 MiB given)", async () => {
  const state = await run("containergroup-fill", "dd if=/dev/zero of=/job/big bs=1M count=2048 2>&1; ls -l /job/big", {
    timeoutSeconds: 30,
  });
  assert.match(state.output, /No space left on device|File too large/);
  const size = Number(/(\d+) \w+ +\d+ [\d:]+ \/job\/big/.exec(state.output)?.[1] ?? /\s(\d{6,})\s/.exec(state.output)?.[1]);
  assert.ok(size <= DISK_MB * 1024 * 1024, `wrote ${size} bytes`);
});

test("a job reaches the API's port on its loopback, and no other local server", async () => {
  const apiPort = api.address().port;
  const hostPort = new URL(host.url).port;
  const probe = (port) =>
    `fetch('http://127.0.0.1:${port}/probe').then(async (r) => console.log('${port}:', r.status, await r.text()), ` +
    `(e) => console.log('${port}: refused', e.cause?.code))`;
  const state = await run("containergroup-net", `node -e "${probe(apiPort)}"; node -e "${probe(hostPort)}"`);
  assert.match(state.output, new RegExp(`${apiPort}: 200 api answered /probe`));
  assert.match(state.output, new RegExp(`${hostPort}: refused`));
});

test("starts a group once however often it is put", async () => {
  const body = spec("containergroup-once", "t/counter");
  assert.equal((await client.put("containergroup-once", body)).status, 201);
  assert.equal((await client.put("containergroup-once", body)).status, 200);
  assert.equal(started.filter((line) => line.startsWith("started containergroup-once ")).length, 1);
  await client.del("containergroup-once");
});

test("a non-zero exit fails with the last error line", async () => {
  await client.put("containergroup-fail1", spec("containergroup-fail1", "t/fail"));
  const state = await client.until("containergroup-fail1", ["failed"]);
  assert.equal(state.exitCode, 3);
  assert.equal(state.error, "something broke (exit code 3)");
});

test("keeps the last 1 MiB of output and the asked-for tail", async () => {
  await client.put("containergroup-loud1", spec("containergroup-loud1", "t/loud"));
  await client.until("containergroup-loud1", ["succeeded"]);
  const full = await client.get("containergroup-loud1");
  assert.equal(Buffer.byteLength(full.output), 1024 * 1024);
  assert.equal(full.outputTruncated, true);
  assert.ok(full.output.endsWith("END\n"));
  const tail = await client.get("containergroup-loud1", 10);
  assert.equal(tail.output, "aaaaaaEND\n");
});

test("removing a group kills it and forgets it; removing again succeeds", async () => {
  await client.put("containergroup-gone", spec("containergroup-gone", "t/sleep"));
  await client.until("containergroup-gone", ["running"]);
  assert.equal((await client.del("containergroup-gone")).status, 204);
  assert.equal(await client.get("containergroup-gone"), null);
  assert.equal((await client.del("containergroup-gone")).status, 204);
});

test("an image it does not have fails clearly", async () => {
  await client.put("containergroup-none", spec("containergroup-none", "t/missing"));
  const state = await client.get("containergroup-none");
  if (!host.docker) {
    assert.equal(state.phase, "failed");
    assert.match(state.error, /no local image t\/missing:latest/);
  }
});

test("a start arriving while another's body is still on its way starts nothing", async () => {
  const body = JSON.stringify(spec("containergroup-race", "t/counter"));
  // The first PUT sends its headers now and its body later; the second arrives complete in between.
  const first = request(`${host.url}/groups/containergroup-race`, {
    method: "PUT",
    headers: { authorization: `Bearer ${host.secret}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
  });
  const firstStatus = new Promise((resolve, reject) =>
    first
      .on("response", (res) => {
        res.resume();
        resolve(res.statusCode);
      })
      .on("error", reject),
  );
  first.flushHeaders();
  await new Promise((r) => setTimeout(r, 150));
  const second = await client.put("containergroup-race", body);
  first.end(body);
  assert.equal(second.status, 200);
  assert.equal(await firstStatus, 201);
  assert.equal(started.filter((line) => line.startsWith("started containergroup-race ")).length, 1);
  await client.del("containergroup-race");
});

test("a body that is not a group spec is a 400 and reserves nothing", async () => {
  const bad = await client.put("containergroup-bad", "{not json");
  assert.equal(bad.status, 400);
  assert.equal(await client.get("containergroup-bad"), null);
  const noImage = await client.put("containergroup-bad", { name: "containergroup-bad" });
  assert.equal(noImage.status, 400);
  assert.match((await noImage.json()).error, /image/);
  assert.equal(await client.get("containergroup-bad"), null);
  assert.equal((await client.put("containergroup-bad", spec("containergroup-bad", "t/env"))).status, 201);
});

test("a time limit beyond what a timer holds does not stop the group at once", async () => {
  await client.put("containergroup-long", spec("containergroup-long", "t/sleep", { timeoutSeconds: 30 * 24 * 3600 }));
  await client.until("containergroup-long", ["running"]);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await client.get("containergroup-long")).phase, "running");
  await client.del("containergroup-long");
});

test("tailBytes=0 answers the state without output", async () => {
  await client.put("containergroup-tail0", spec("containergroup-tail0", "t/env"));
  await client.until("containergroup-tail0", ["succeeded"]);
  const state = await client.get("containergroup-tail0", 0);
  assert.equal(state.output, "");
  assert.equal(state.outputTruncated, true);
});

test("a broken image.json hides that image only", async () => {
  mkdirSync(join(imagesDir, "broken"), { recursive: true });
  writeFileSync(join(imagesDir, "broken", "image.json"), "{");
  const res = await client.images();
  assert.equal(res.status, 200);
  assert.ok((await res.json()).images.some((i) => i.name === "t/env"));
  rmSync(join(imagesDir, "broken"), { recursive: true, force: true });
});
