// How the local container host starts jobs (node --test; `npm run test:host`): the limits on jobs
// running at once (in all and per user) with the rest waiting, visibly; what a start that fails leaves
// behind (nothing: no jail folder, cgroup or uid); the uid search when every uid is taken; what a
// job's environment holds (no path of this machine); the start-up probe's cgroup. Jobs run for real
// in the jail; what needs root (a uid per job, cgroups) is skipped elsewhere, saying so.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { hostClient, spec } from "./check-support.mjs";
import { JobUids } from "./isolation.mjs";
import { jobLimitsFrom, startContainerHost } from "./server.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
// A temporary folder of this check's own: the jail folders it finds there are this host's, whatever
// other hosts on the machine do meanwhile.
const ownTmp = mkdtempSync(join(tmpdir(), "host-starts-"));
process.env.TMPDIR = ownTmp;
const imagesDir = join(ownTmp, "images");
function image(name, script, extra = {}) {
  const dir = join(imagesDir, name.replace("/", "_"));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "image.json"), JSON.stringify({ name, tag: "latest", description: name, command: "node run.mjs", ...extra }));
  writeFileSync(join(dir, "run.mjs"), script);
}
image("t/environ", "console.log('ENV=' + JSON.stringify(process.env));");
image("t/shell", "", { command: "true" });

const unique = (what) => `containergroup-${what}-${Math.random().toString(36).slice(2, 8)}`;
const jailFolders = () => readdirSync(ownTmp).filter((d) => d.startsWith("integrity-edge-job-"));
/** The cgroup folders of a group (every start gets `{name}-{random}`), in every hierarchy of the host. */
const cgroupsOf = (host, name) =>
  Object.values(host.isolation.cgroups?.dirs ?? {}).flatMap((dir) =>
    existsSync(dir) ? readdirSync(dir).filter((d) => d === name || d.startsWith(`${name}-`)) : [],
  );
const eventually = async (check, what) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(check(), what);
};

const hosts = [];
async function newHost(options = {}) {
  const host = await startContainerHost({ port: 0, imagesDir, ...options });
  hosts.push(host);
  return { host, client: hostClient(host) };
}
let main;
before(async () => {
  main = await newHost({ maxJobs: 100, maxJobsPerUser: 100 });
});
after(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  rmSync(ownTmp, { recursive: true, force: true });
});
const jailed = () => main.host.isolation.mode !== "none";
const asRoot = () => main.host.isolation.mode === "root";

test("job limits come from CONTAINER_HOST_MAX_JOBS and CONTAINER_HOST_MAX_JOBS_PER_USER, with documented defaults", () => {
  assert.deepEqual(jobLimitsFrom({}), { maxJobs: 4, maxJobsPerUser: 2 });
  assert.deepEqual(jobLimitsFrom({ CONTAINER_HOST_MAX_JOBS: "8", CONTAINER_HOST_MAX_JOBS_PER_USER: "" }), {
    maxJobs: 8,
    maxJobsPerUser: 2,
  });
  assert.throws(
    () => jobLimitsFrom({ CONTAINER_HOST_MAX_JOBS: "0" }),
    /CONTAINER_HOST_MAX_JOBS must be a whole number of jobs from 1 to 1000, not '0'/,
  );
  assert.throws(() => jobLimitsFrom({ CONTAINER_HOST_MAX_JOBS_PER_USER: "two" }), /CONTAINER_HOST_MAX_JOBS_PER_USER/);
});

test("at most the limits run at once; the rest wait in order, saying why, and start when a place frees", async (t) => {
  if (!jailed()) return t.skip(`jobs cannot be isolated here: ${main.host.isolation.reason}`);
  const { client } = await newHost({ maxJobs: 2, maxJobsPerUser: 1 });
  const run = (name, owner) => client.put(name, spec(name, "t/shell", { command: "exec sleep 120", timeoutSeconds: 120, owner }));
  const [alice1, alice2, bob1, carol1, carol2] = ["a1", "a2", "b1", "c1", "c2"].map(unique);
  assert.equal((await run(alice1, "alice")).status, 201);
  await client.until(alice1, ["running"]);
  // Alice's second waits for her first; Bob, behind her in the queue, is not held by it.
  assert.equal((await run(alice2, "alice")).status, 201);
  assert.equal((await run(bob1, "bob")).status, 201);
  await client.until(bob1, ["running"]);
  const waitingAlice = await client.get(alice2);
  assert.equal(waitingAlice.phase, "pending");
  assert.match(waitingAlice.waiting, /1 jobs of the same user are running, the limit per user \(CONTAINER_HOST_MAX_JOBS_PER_USER 1\)/);
  assert.match(waitingAlice.output, /\[container host\] waiting: /, "the output says so too (GET /Jobs/{id} shows it)");
  // Two run: Carol waits for the host's limit, behind Alice's second.
  assert.equal((await run(carol1, "carol")).status, 201);
  assert.equal((await run(carol2, "carol")).status, 201);
  const waitingCarol = await client.get(carol1);
  assert.equal(waitingCarol.phase, "pending");
  assert.match(waitingCarol.waiting, /2 jobs are running on this host, its limit \(CONTAINER_HOST_MAX_JOBS 2\).*\(1 waiting before it\)/);
  // A waiting group removed never starts.
  assert.equal((await client.del(carol2)).status, 204);
  // Alice's first ends: her second starts (first in line), Carol still waits for the host's limit.
  await client.del(alice1);
  const started = await client.until(alice2, ["running"]);
  assert.equal(started.waiting, null);
  assert.match(started.output, /\[container host\] a place is free: starting after \d+ s of waiting/);
  const stillWaiting = await client.get(carol1);
  assert.equal(stillWaiting.phase, "pending");
  assert.match(stillWaiting.waiting, /CONTAINER_HOST_MAX_JOBS 2\).*\(0 waiting before it\)/);
  await client.del(bob1);
  await client.until(carol1, ["running"]);
  assert.equal(await client.get(carol2), null);
  for (const name of [alice2, carol1]) await client.del(name);
});

test("a job's time limit counts from when it runs, not while it waits", async (t) => {
  if (!jailed()) return t.skip(`jobs cannot be isolated here: ${main.host.isolation.reason}`);
  const { client } = await newHost({ maxJobs: 1, maxJobsPerUser: 1 });
  const [first, second] = ["first", "second"].map(unique);
  // The second waits about 8 s for the first, twice its limit of 4 s. The limit leaves room for a
  // jailed start on a loaded machine: with a limit of 1 s this check once failed in CI, where the
  // quick stages run side by side.
  await client.put(first, spec(first, "t/shell", { command: "sleep 8", owner: "dana" }));
  await client.put(second, spec(second, "t/shell", { command: "echo ran", timeoutSeconds: 4, owner: "dana" }));
  assert.equal((await client.get(second)).phase, "pending");
  const done = await client.until(second, ["succeeded", "failed"]);
  assert.equal(done.phase, "succeeded", done.error);
  assert.match(done.output, /ran/);
});

test("a job that fails to start leaves no jail folder, cgroup or uid behind", async (t) => {
  if (!jailed()) return t.skip(`jobs cannot be isolated here: ${main.host.isolation.reason}`);
  const uids = new JobUids(3);
  const { host, client } = await newHost({ uids, maxJobs: 100, maxJobsPerUser: 100 });
  const folders = jailFolders().length;
  for (const environment of [{ BAD: "before\u0000after" }, { "NOT-A-NAME": "x" }]) {
    const name = unique("nostart");
    await client.put(name, spec(name, "t/shell", { command: "echo never", environment }));
    const state = await client.until(name, ["failed", "succeeded"]);
    assert.equal(state.phase, "failed");
    assert.match(state.error, /^could not start: the environment variable/);
    assert.deepEqual(cgroupsOf(host, name), []);
  }
  assert.equal(jailFolders().length, folders, "no jail folder left");
  assert.equal(uids.inUse, 0, "no uid kept");
});

test("when every job uid is taken, a start fails saying so, leaves nothing, and the uid search ends", async (t) => {
  if (!asRoot()) return t.skip("a uid per job needs the host to run as root");
  const uids = new JobUids(1);
  const { host, client } = await newHost({ uids, maxJobs: 100, maxJobsPerUser: 100 });
  const [holder, refused, after_] = ["holder", "refused", "after"].map(unique);
  await client.put(holder, spec(holder, "t/shell", { command: "exec sleep 120", timeoutSeconds: 120 }));
  await client.until(holder, ["running"]);
  const folders = jailFolders().length;
  await client.put(refused, spec(refused, "t/shell", { command: "echo never" }));
  const state = await client.until(refused, ["failed", "succeeded"]);
  assert.equal(state.phase, "failed");
  assert.equal(state.error, "could not start: every one of the 1 job uids is in use, so no other job can start now");
  assert.deepEqual(cgroupsOf(host, refused), []);
  assert.equal(jailFolders().length, folders);
  assert.equal(uids.inUse, 1);
  // The uid comes back with its job.
  await client.del(holder);
  await eventually(() => uids.inUse === 0, "the holder's uid is given back");
  await client.put(after_, spec(after_, "t/shell", { command: "echo ran" }));
  assert.equal((await client.until(after_, ["succeeded", "failed"])).phase, "succeeded");
});

test("a job's environment holds its own variables and a few of the jail's, and no path of this machine", async (t) => {
  if (!jailed()) return t.skip(`jobs cannot be isolated here: ${main.host.isolation.reason}`);
  const name = unique("environ");
  await main.client.put(name, spec(name, "t/environ", { environment: { VISIBLE: "yes", jobId: "environ" } }));
  const state = await main.client.until(name, ["succeeded", "failed"]);
  assert.equal(state.phase, "succeeded", state.error);
  const environment = JSON.parse(/ENV=(.*)/.exec(state.output)[1]);
  // What the shell that runs the command adds (PWD, SHLVL, _) besides the entry script's own.
  const allowed = new Set(["PATH", "HOME", "TMPDIR", "PWD", "OLDPWD", "SHLVL", "_", "VISIBLE", "jobId"]);
  assert.deepEqual(
    Object.keys(environment).filter((k) => !allowed.has(k)),
    [],
    "no variable of the host (JOB_CGROUPS before)",
  );
  const text = JSON.stringify(environment);
  for (const hostPath of ["/sys/fs/cgroup", "integrity-edge-jobs", ownTmp, ROOT, "integrity-edge-job-"])
    assert.ok(!text.includes(hostPath), `${hostPath} is not in the job's environment: ${text}`);
  assert.equal(environment.HOME, "/job");
});

test("node from outside the system's folders (nvm, a tarball) shows in the jail as /opt/node, not where it lives", async (t) => {
  if (!jailed()) return t.skip(`jobs cannot be isolated here: ${main.host.isolation.reason}`);
  const prefix = join(ownTmp, "home", "someone", ".nvm", "node");
  mkdirSync(join(prefix, "bin"), { recursive: true });
  symlinkSync(process.execPath, join(prefix, "bin", "node"));
  // The API, which the jail's forwarder (run by that node too) lets the job reach.
  const api = createServer((req, res) => res.end("api answered"));
  await new Promise((resolve) => api.listen(0, "127.0.0.1", resolve));
  try {
    const { client } = await newHost({
      node: join(prefix, "bin", "node"),
      apiUrl: `http://127.0.0.1:${api.address().port}`,
      maxJobs: 100,
      maxJobsPerUser: 100,
    });
    const name = unique("nvm");
    await client.put(name, spec(name, "t/environ"));
    const state = await client.until(name, ["succeeded", "failed"]);
    assert.equal(state.phase, "succeeded", state.error);
    const environment = JSON.parse(/ENV=(.*)/.exec(state.output)[1]);
    assert.match(environment.PATH, /^\/opt\/node\/bin:/);
    assert.ok(!JSON.stringify(environment).includes("someone"), "the folder node lives in is not shown");
    const fetched = unique("nvm-api");
    const command = `node -e "fetch('http://127.0.0.1:${api.address().port}/').then((r) => r.text()).then(console.log)"`;
    await client.put(fetched, spec(fetched, "t/shell", { command }));
    const reached = await client.until(fetched, ["succeeded", "failed"]);
    assert.equal(reached.phase, "succeeded", reached.error);
    assert.match(reached.output, /api answered/);
  } finally {
    await new Promise((resolve) => api.close(resolve));
  }
});

test("the start-up probe's cgroup is its own at every start and is removed after", async (t) => {
  if (!main.host.isolation.cgroups) return t.skip("this host makes no cgroups here (it needs root and a cgroup hierarchy of its own)");
  const { host: second } = await newHost({ maxJobs: 1, maxJobsPerUser: 1 });
  const [a, b] = [main.host.isolation.probeName, second.isolation.probeName];
  assert.match(a, /^probe-\d+-[0-9a-f]{8}$/);
  assert.notEqual(a, b);
  assert.deepEqual([...cgroupsOf(main.host, a), ...cgroupsOf(second, b)], []);
});
