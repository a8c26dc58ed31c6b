// Tests of the local container host (node --test; `npm run test:host`): it runs real child
// processes, so it is checked in Node, not in the Workers pool.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startContainerHost } from "./server.mjs";

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
image("t/counter", "import { appendFileSync } from 'node:fs'; appendFileSync(process.env.COUNT_FILE, 'x'); setTimeout(() => {}, 3000);");

let host;
before(async () => {
  process.env.HOST_SECRET_SHOULD_NOT_LEAK = "leak";
  host = await startContainerHost({ port: 0, imagesDir });
});
after(async () => {
  await host.close();
  rmSync(imagesDir, { recursive: true, force: true });
});

const spec = (name, image, extra = {}) => ({ name, image: `${image}:latest`, command: null, environment: {}, cpuCores: 1, memoryGb: 1, gpuCores: null, gpuSku: null, timeoutSeconds: 30, ...extra });
const put = (name, body) => fetch(`${host.url}/groups/${name}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const get = async (name, tail = 1 << 20) => {
  const res = await fetch(`${host.url}/groups/${name}?tailBytes=${tail}`);
  return res.status === 404 ? null : res.json();
};
async function until(name, phases) {
  for (let i = 0; i < 100; i++) {
    const state = await get(name);
    if (state && phases.includes(state.phase)) return state;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} never reached ${phases}`);
}

test("lists the images of its folder with the machine's capacity", async () => {
  const body = await (await fetch(`${host.url}/images`)).json();
  assert.ok(body.images.some((i) => i.name === "t/env" && i.tag === "latest"));
  assert.ok(body.capacity.maxCpuCores >= 1);
});

test("runs with only the group's environment", async () => {
  assert.equal((await put("containergroup-env1", spec("containergroup-env1", "t/env", { environment: { VISIBLE: "yes", jobId: "env1" } }))).status, 201);
  const state = await until("containergroup-env1", ["succeeded", "failed"]);
  assert.equal(state.phase, "succeeded");
  assert.equal(state.exitCode, 0);
  assert.match(state.output, /VALUE=yes/);
  assert.doesNotMatch(state.output, /HOST_SECRET_SHOULD_NOT_LEAK/);
});

test("starts a group once however often it is put", async () => {
  const countFile = join(imagesDir, "count.txt");
  const body = spec("containergroup-once", "t/counter", { environment: { COUNT_FILE: countFile } });
  assert.equal((await put("containergroup-once", body)).status, 201);
  assert.equal((await put("containergroup-once", body)).status, 200);
  await new Promise((r) => setTimeout(r, 500));
  const { readFileSync } = await import("node:fs");
  assert.equal(readFileSync(countFile, "utf8"), "x");
});

test("a non-zero exit fails with the last error line", async () => {
  await put("containergroup-fail1", spec("containergroup-fail1", "t/fail"));
  const state = await until("containergroup-fail1", ["failed"]);
  assert.equal(state.exitCode, 3);
  assert.equal(state.error, "something broke (exit code 3)");
});

test("stops a group at its time limit", async () => {
  await put("containergroup-slow1", spec("containergroup-slow1", "t/sleep", { timeoutSeconds: 1 }));
  const state = await until("containergroup-slow1", ["failed", "succeeded"]);
  assert.equal(state.phase, "failed");
  assert.match(state.error, /time limit of 1 s/);
});

test("keeps the last 1 MiB of output and the asked-for tail", async () => {
  await put("containergroup-loud1", spec("containergroup-loud1", "t/loud"));
  await until("containergroup-loud1", ["succeeded"]);
  const full = await get("containergroup-loud1");
  assert.equal(Buffer.byteLength(full.output), 1024 * 1024);
  assert.equal(full.outputTruncated, true);
  assert.ok(full.output.endsWith("END\n"));
  const tail = await get("containergroup-loud1", 10);
  assert.equal(tail.output, "aaaaaaEND\n");
});

test("removing a group kills it and forgets it; removing again succeeds", async () => {
  await put("containergroup-gone", spec("containergroup-gone", "t/sleep"));
  await until("containergroup-gone", ["running"]);
  assert.equal((await fetch(`${host.url}/groups/containergroup-gone`, { method: "DELETE" })).status, 204);
  assert.equal(await get("containergroup-gone"), null);
  assert.equal((await fetch(`${host.url}/groups/containergroup-gone`, { method: "DELETE" })).status, 204);
});

test("an image it does not have fails clearly", async () => {
  await put("containergroup-none", spec("containergroup-none", "t/missing"));
  const state = await get("containergroup-none");
  if (!host.docker) {
    assert.equal(state.phase, "failed");
    assert.match(state.error, /no local image t\/missing:latest/);
  }
});

test("a start arriving while another's body is still on its way starts nothing", async () => {
  const countFile = join(imagesDir, "count-concurrent.txt");
  const body = JSON.stringify(spec("containergroup-race", "t/counter", { environment: { COUNT_FILE: countFile } }));
  // The first PUT sends its headers now and its body later; the second arrives complete in between.
  const first = request(`${host.url}/groups/containergroup-race`, { method: "PUT", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } });
  const firstStatus = new Promise((resolve, reject) => first.on("response", (res) => { res.resume(); resolve(res.statusCode); }).on("error", reject));
  first.flushHeaders();
  await new Promise((r) => setTimeout(r, 150));
  const second = await fetch(`${host.url}/groups/containergroup-race`, { method: "PUT", headers: { "content-type": "application/json" }, body });
  first.end(body);
  assert.equal(second.status, 200);
  assert.equal(await firstStatus, 201);
  await new Promise((r) => setTimeout(r, 500));
  const { readFileSync } = await import("node:fs");
  assert.equal(readFileSync(countFile, "utf8"), "x");
});

test("a body that is not a group spec is a 400 and reserves nothing", async () => {
  const bad = await fetch(`${host.url}/groups/containergroup-bad`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{not json" });
  assert.equal(bad.status, 400);
  assert.equal(await get("containergroup-bad"), null);
  const noImage = await put("containergroup-bad", { name: "containergroup-bad" });
  assert.equal(noImage.status, 400);
  assert.match((await noImage.json()).error, /image/);
  assert.equal(await get("containergroup-bad"), null);
  assert.equal((await put("containergroup-bad", spec("containergroup-bad", "t/env"))).status, 201);
});

test("a time limit beyond what a timer holds does not stop the group at once", async () => {
  await put("containergroup-long", spec("containergroup-long", "t/sleep", { timeoutSeconds: 30 * 24 * 3600 }));
  await until("containergroup-long", ["running"]);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await get("containergroup-long")).phase, "running");
  await fetch(`${host.url}/groups/containergroup-long`, { method: "DELETE" });
});

test("tailBytes=0 answers the state without output", async () => {
  await put("containergroup-tail0", spec("containergroup-tail0", "t/env"));
  await until("containergroup-tail0", ["succeeded"]);
  const state = await get("containergroup-tail0", 0);
  assert.equal(state.output, "");
  assert.equal(state.outputTruncated, true);
});

test("a broken image.json hides that image only", async () => {
  mkdirSync(join(imagesDir, "broken"), { recursive: true });
  writeFileSync(join(imagesDir, "broken", "image.json"), "{");
  const res = await fetch(`${host.url}/images`);
  assert.equal(res.status, 200);
  assert.ok((await res.json()).images.some((i) => i.name === "t/env"));
  rmSync(join(imagesDir, "broken"), { recursive: true, force: true });
});
