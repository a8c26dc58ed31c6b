// The local container host: runs job "images" on this machine for `npm start`, the smoke run and a
// newcomer's first jobs, speaking the protocol of src/dataprocessing/host/types.ts:
//   GET /images · PUT|GET|DELETE /groups/{name}    (each with `Authorization: Bearer {secret}`)
// An image is a folder of examples/images with an image.json ({ name, tag, description, command }).
// Its command runs the way a container runs it (isolation.mjs, jail.sh): in namespaces of its own,
// as a uid of its own, in a working folder holding a copy of the image, with ONLY the group's
// environment, a time limit (timeoutSeconds), memory, CPU, process and disk limits, and an output cap
// (the last 1 MiB is kept); nothing of the service is in its filesystem and only the API's port is
// on its network. Where the jail cannot be made, folder images are refused, never run unisolated.
// When a Docker daemon answers and the image is not a local folder, it runs with `docker run` instead,
// with the same network rule (only the API). At most CONTAINER_HOST_MAX_JOBS jobs run at once, and
// CONTAINER_HOST_MAX_JOBS_PER_USER of one owner; the others wait, in order, saying so.
// Run alone: node scripts/container-host/server.mjs [port]   (default 8790; prints its secret)
import { execFile, spawn, spawnSync } from "node:child_process";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { connect, createServer as createNetServer } from "node:net";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_LIMITS, detectIsolation, FORWARDER, JOB_UIDS, startJailed, SYSTEM_PATH } from "./isolation.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DEFAULT_IMAGES_DIR = join(ROOT, "examples", "images");
export const DEFAULT_HOST_PORT = 8790;
export const OUTPUT_CAP_BYTES = 1024 * 1024;
const GROUP_NAME = /^containergroup-[A-Za-z0-9-]{1,100}$/;
/** setTimeout fires at once past 2^31 - 1 ms (24.8 days): longer limits are held at this. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** What the Docker CLI itself needs from this process to reach its daemon (never given to a job). */
const DOCKER_CLIENT_VARS = [
  "HOME",
  "DOCKER_HOST",
  "DOCKER_CONTEXT",
  "DOCKER_CONFIG",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
  "XDG_RUNTIME_DIR",
];

/** Jobs running at once on the host, and of one owner, unless CONTAINER_HOST_MAX_JOBS(_PER_USER) say otherwise. */
export const DEFAULT_MAX_JOBS = 4;
export const DEFAULT_MAX_JOBS_PER_USER = 2;

/**
 * The host's job limits from `env` (CONTAINER_HOST_MAX_JOBS, CONTAINER_HOST_MAX_JOBS_PER_USER):
 * positive whole numbers, the defaults when unset or empty. A value that is not one is refused, naming
 * the variable, never ignored.
 */
export function jobLimitsFrom(env = process.env) {
  const read = (name, fallback) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > 1000)
      throw new Error(`${name} must be a whole number of jobs from 1 to 1000, not '${raw}'`);
    return value;
  };
  return {
    maxJobs: read("CONTAINER_HOST_MAX_JOBS", DEFAULT_MAX_JOBS),
    maxJobsPerUser: read("CONTAINER_HOST_MAX_JOBS_PER_USER", DEFAULT_MAX_JOBS_PER_USER),
  };
}

/** The images of a folder: each sub-folder with an image.json. */
export function readImages(imagesDir = DEFAULT_IMAGES_DIR, log = () => {}) {
  if (!existsSync(imagesDir)) return [];
  const images = [];
  for (const d of readdirSync(imagesDir, { withFileTypes: true })) {
    const file = join(imagesDir, d.name, "image.json");
    if (!d.isDirectory() || !existsSync(file)) continue;
    try {
      const image = JSON.parse(readFileSync(file, "utf8"));
      if (typeof image.name !== "string" || typeof image.tag !== "string") throw new Error("name and tag must be strings");
      images.push({ ...image, dir: join(imagesDir, d.name) });
    } catch (error) {
      // One broken image.json hides that image, not every image.
      log(`skipped ${file}: ${error.message}`);
    }
  }
  return images;
}

function dockerAnswers(docker) {
  const result = spawnSync(docker, ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 5000 });
  return result.status === 0;
}

/**
 * The `docker run` arguments of a group. Variable values never appear on the command line (where
 * `ps` shows them): `-e NAME` takes each value from the Docker CLI's own environment. `--network none`:
 * the container's network is its own loopback alone, on which the host's forwarder opens the API's
 * port (dockerForwarder), as in a jailed job's.
 */
export function dockerRunArgs(name, spec, environment, maxProcesses = DEFAULT_LIMITS.maxProcesses) {
  const args = [
    "run",
    "--rm",
    "--name",
    name,
    "--network",
    "none",
    "--cpus",
    String(spec.cpuCores ?? 1),
    "--memory",
    `${Math.round((spec.memoryGb ?? 1) * 1024)}m`,
  ];
  args.push("--pids-limit", String(maxProcesses), "--security-opt", "no-new-privileges", "--cap-drop", "ALL");
  if (spec.gpuCores) args.push("--gpus", String(spec.gpuCores));
  for (const key of Object.keys(environment)) args.push("-e", key);
  // The config's runCommand replaces the image's entrypoint, as Azure's container `command` does.
  if (spec.command) args.push("--entrypoint", "/bin/sh", spec.image, "-c", spec.command);
  else args.push(spec.image);
  return args;
}

/** Output so far: keeps the last `cap` bytes. */
class Tail {
  constructor(cap) {
    this.cap = cap;
    this.chunks = [];
    this.size = 0;
    this.dropped = false;
  }
  push(chunk) {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.cap && this.chunks.length > 0) {
      const excess = this.size - this.cap;
      const first = this.chunks[0];
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
      this.dropped = true;
    }
  }
  read(maxBytes) {
    const all = Buffer.concat(this.chunks);
    const tail = all.length > maxBytes ? all.subarray(all.length - maxBytes) : all;
    // Do not start in the middle of a UTF-8 sequence.
    let start = 0;
    while (start < tail.length && start < 4 && (tail[start] & 0xc0) === 0x80) start++;
    return { output: tail.subarray(start).toString("utf8"), truncated: this.dropped || all.length > maxBytes };
  }
}

/** True when the request carries the host's secret (compared in constant time). */
function authorised(req, secret) {
  const given = Buffer.from(String(req.headers.authorization ?? ""));
  const expected = Buffer.from(`Bearer ${secret}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The socket through which jobs reach the API: each job's loopback has the API's port, whose
 * connections the jail's forwarder carries here, and this carries them to the API. Null when the
 * API is not an http URL on this machine's loopback (then jobs get no network at all).
 */
async function apiBridge(apiUrl) {
  let url;
  try {
    url = apiUrl ? new URL(apiUrl) : null;
  } catch {
    url = null;
  }
  if (!url || url.protocol !== "http:" || !["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) return null;
  const port = Number(url.port || 80);
  const dir = mkdtempSync(join(tmpdir(), "integrity-edge-api-"));
  // The forwarder connects as nobody: the folder is passable and the socket open to it. Jobs never see it.
  chmodSync(dir, 0o711);
  const path = join(dir, "api.sock");
  // A copy of the forwarder a Docker job's runs from, as nobody, whatever the checkout's permissions.
  const forwarder = join(dir, "forward.mjs");
  copyFileSync(FORWARDER, forwarder);
  chmodSync(forwarder, 0o644);
  const server = createNetServer((client) => {
    const upstream = connect(port, url.hostname.replace(/^\[|\]$/g, ""));
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    client.pipe(upstream).pipe(client);
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(path, resolve));
  chmodSync(path, 0o666);
  return {
    port,
    path,
    forwarder,
    close: () => new Promise((done) => server.close(() => (rmSync(dir, { recursive: true, force: true }), done()))),
  };
}

/**
 * Whether a Docker job can be given the jailed jobs' network rule here: the host joins its container's
 * network namespace (nsenter) to start the forwarder there, which takes root.
 */
function dockerNetworkCheck() {
  if (process.getuid?.() !== 0) return { ok: false, reason: "the host must run as root to open the API's port inside a container" };
  const missing = ["nsenter", "setpriv"].filter(
    (tool) => spawnSync("sh", ["-c", `command -v ${tool}`], { env: { PATH: SYSTEM_PATH } }).status !== 0,
  );
  return missing.length > 0 ? { ok: false, reason: `it needs ${missing.join(", ")} (util-linux)` } : { ok: true, reason: null };
}

/** The pid of a running container's first process, or 0 while it has none (pulling, created, gone). */
function dockerPid(dockerCommand, name) {
  return new Promise((resolve) => {
    execFile(dockerCommand, ["inspect", "--format", "{{.State.Pid}}", name], { timeout: 10_000 }, (error, stdout) =>
      resolve(error ? 0 : Number(String(stdout).trim()) || 0),
    );
  });
}

/**
 * Starts the host. Returns { port, url, secret, isolation, docker, close() }.
 * @param {{ port?: number, host?: string, imagesDir?: string, log?: (line: string) => void, dockerCommand?: string,
 *   secret?: string, apiUrl?: string, isolation?: object, maxProcesses?: number, diskMb?: number, maxJobs?: number,
 *   maxJobsPerUser?: number, uids?: import("./isolation.mjs").JobUids, node?: string, dockerNetwork?: object }} options
 *   dockerCommand: the Docker CLI to use (`docker`; the tests give a recording fake).
 *   secret: what every request must carry as `Authorization: Bearer {secret}` (a random one when not given).
 *   apiUrl: the API jobs may reach (its port is the only one on a job's loopback).
 *   isolation: what detectIsolation() found (detected when not given); maxProcesses, diskMb: limits of every job.
 *   maxJobs, maxJobsPerUser: jobs running at once, in all and of one owner (jobLimitsFrom(process.env) when not given).
 *   uids: the job uids to take from (this process's when not given); node: the node jobs run (this one's);
 *   dockerNetwork: whether Docker jobs can get their network rule ({ ok, reason }; checked when not given).
 */
export async function startContainerHost({
  port = DEFAULT_HOST_PORT,
  host = "127.0.0.1",
  imagesDir = DEFAULT_IMAGES_DIR,
  log = () => {},
  dockerCommand = "docker",
  secret = randomBytes(32).toString("base64url"),
  apiUrl = "",
  isolation = undefined,
  maxProcesses = DEFAULT_LIMITS.maxProcesses,
  diskMb = DEFAULT_LIMITS.diskMb,
  maxJobs = undefined,
  maxJobsPerUser = undefined,
  uids = JOB_UIDS,
  node = process.execPath,
  dockerNetwork = undefined,
} = {}) {
  const limitsFromEnv = maxJobs === undefined || maxJobsPerUser === undefined ? jobLimitsFrom(process.env) : null;
  const jobLimits = { total: maxJobs ?? limitsFromEnv.maxJobs, perUser: maxJobsPerUser ?? limitsFromEnv.maxJobsPerUser };
  const groups = new Map();
  /** Groups that wait for a free place, oldest first. */
  const queue = [];
  /** Groups holding a place (their process runs). */
  const running = new Set();
  /** Set by close(): nothing waiting starts any more. */
  let closing = false;
  const docker = dockerAnswers(dockerCommand);
  const dockerRule = docker ? (dockerNetwork ?? dockerNetworkCheck()) : { ok: false, reason: "no Docker daemon answers" };
  if (docker && !dockerRule.ok) log(`jobs from Docker images cannot run here: ${dockerRule.reason}`);
  const capacity = {
    maxCpuCores: cpus().length,
    maxMemoryGb: Math.max(1, Math.floor(totalmem() / 1024 ** 3)),
    maxGpuCores: 0,
    gpuSkus: [],
  };
  const jail = isolation ?? (await detectIsolation({ uids }));
  if (jail.mode === "none") log(`jobs from folder images cannot run here: ${jail.reason}`);
  const bridge = await apiBridge(apiUrl);

  /** A group's record, reserved under its name before anything else happens (so a start is never done twice). */
  function reserve(name) {
    const group = {
      name,
      spec: null,
      owner: null,
      phase: "pending",
      waiting: null,
      queuedAt: null,
      exitCode: null,
      error: null,
      tail: new Tail(OUTPUT_CAP_BYTES),
      child: null,
      forwarder: null,
      timer: null,
      stop: null,
      docker: false,
    };
    groups.set(name, group);
    return group;
  }

  /** A line of the host's own in the group's output (why it waits, when it starts), so whoever reads it sees. */
  function note(group, text) {
    group.tail.push(Buffer.from(`[container host] ${text}\n`));
  }

  /** Why a group of this owner cannot start now, or null when a place is free for it. */
  function waitReason(owner) {
    if (running.size >= jobLimits.total)
      return (
        `${running.size} jobs are running on this host, its limit (CONTAINER_HOST_MAX_JOBS ${jobLimits.total}); ` +
        "it starts when one ends"
      );
    const mine = [...running].filter((g) => g.owner === owner).length;
    if (mine >= jobLimits.perUser)
      return (
        `${mine} jobs of the same user are running, the limit per user (CONTAINER_HOST_MAX_JOBS_PER_USER ` +
        `${jobLimits.perUser}); it starts when one of them ends`
      );
    return null;
  }

  /** Starts the group now when a place is free, else queues it (phase pending, `waiting` saying why). */
  function admit(group, spec) {
    group.spec = spec;
    // Who the job runs for (the Worker sends the job's owner); a spec without one counts as one user.
    group.owner = typeof spec.owner === "string" && spec.owner !== "" ? spec.owner : "(no owner)";
    const why = waitReason(group.owner);
    if (!why) return start(group, spec);
    group.waiting = why;
    group.queuedAt = Date.now();
    queue.push(group);
    note(group, `waiting: ${why}`);
    log(`queued ${group.name}: ${why}`);
  }

  /** Gives a place back and starts whatever waits and now fits, oldest first (one user's queue never holds another's). */
  function release(group) {
    if (!running.delete(group) || closing) return;
    for (const waiting of [...queue]) {
      const why = waitReason(waiting.owner);
      if (why) {
        waiting.waiting = why;
        continue;
      }
      queue.splice(queue.indexOf(waiting), 1);
      waiting.waiting = null;
      note(waiting, `a place is free: starting after ${Math.round((Date.now() - waiting.queuedAt) / 1000)} s of waiting`);
      start(waiting, waiting.spec);
    }
  }

  function start(group, spec) {
    const name = group.name;
    const images = readImages(imagesDir, log);
    const at = String(spec.image ?? "").lastIndexOf(":");
    const [imageName, imageTag] =
      at > 0 && !String(spec.image).slice(at).includes("/")
        ? [spec.image.slice(0, at), spec.image.slice(at + 1)]
        : [String(spec.image ?? ""), "latest"];
    const image = images.find((i) => i.name === imageName && i.tag === imageTag);
    const environment = Object.fromEntries(Object.entries(spec.environment ?? {}).map(([k, v]) => [k, String(v)]));
    let child;
    if (image) {
      const command = spec.command || image.command;
      if (!command) return fail(group, `image ${spec.image} has no command and the config gives none`);
      if (jail.mode === "none")
        return fail(
          group,
          `the local container host cannot isolate jobs on this machine, so it runs none: ${jail.reason} (README, "Data processing")`,
        );
      const limits = {
        memoryGb: Math.min(Number(spec.memoryGb) || DEFAULT_LIMITS.memoryGb, capacity.maxMemoryGb),
        cpuCores: Math.min(Number(spec.cpuCores) || DEFAULT_LIMITS.cpuCores, capacity.maxCpuCores),
        maxProcesses,
        diskMb,
      };
      try {
        const timeoutSeconds = Number(spec.timeoutSeconds) || 3600;
        // Only the job's environment: nothing of this process (tokens, keys) leaks into a job.
        ({ child, stop: group.stop } = startJailed(
          jail,
          {
            name,
            imageDir: image.dir,
            command,
            environment,
            limits,
            timeoutSeconds,
            apiPort: bridge?.port ?? 0,
            apiSocket: bridge?.path ?? "",
            node,
          },
          uids,
        ));
      } catch (error) {
        // startJailed undid whatever it had made (folder, cgroups, uid): nothing of the job is left.
        return fail(group, `could not start: ${error.message}`);
      }
    } else if (docker) {
      if (!dockerRule.ok)
        return fail(
          group,
          `Docker jobs cannot be given their network rule (only the API) here, so none runs: ${dockerRule.reason} ` +
            '(README, "Data processing")',
        );
      const client = Object.fromEntries(DOCKER_CLIENT_VARS.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
      group.docker = true;
      child = spawn(dockerCommand, dockerRunArgs(name, spec, environment, maxProcesses), {
        env: { ...client, ...environment, PATH: process.env.PATH },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
    } else {
      return fail(group, `no local image ${spec.image} (folders of ${imagesDir}) and no Docker daemon answers`);
    }
    group.child = child;
    group.phase = "running";
    running.add(group);
    let lastErrorLine = "";
    child.stdout.on("data", (chunk) => group.tail.push(chunk));
    child.stderr.on("data", (chunk) => {
      group.tail.push(chunk);
      const lines = String(chunk)
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
      if (lines.length > 0) lastErrorLine = lines[lines.length - 1];
    });
    child.on("error", (error) => {
      clearTimeout(group.timer);
      fail(group, `could not start: ${error.message}`);
      stopForwarder(group);
      release(group);
    });
    child.on("close", (code, signal) => {
      clearTimeout(group.timer);
      group.child = null;
      stopForwarder(group);
      cleanUp(group);
      release(group);
      if (group.phase !== "running") return; // already failed (time limit, removal, could not start)
      group.exitCode = code;
      if (code === 0) group.phase = "succeeded";
      else fail(group, `${lastErrorLine || (signal ? `killed by ${signal}` : "the container failed")} (exit code ${code ?? signal})`);
    });
    if (group.docker && bridge) dockerForwarder(group).catch((error) => log(`no API port for ${name}: ${error.message}`));
    const limit = Number(spec.timeoutSeconds) || 3600;
    group.timer = setTimeout(
      () => {
        fail(group, `time limit of ${limit} s reached; the container was stopped`);
        kill(group);
      },
      Math.min(limit * 1000, MAX_TIMER_MS),
    );
    log(`started ${name} (${spec.image})`);
  }

  /**
   * A Docker job's API port: once its container runs (it may first be pulled), the forwarder joins the
   * container's network namespace as nobody and listens on its loopback at the API's port, carrying
   * each connection to the host's API socket. The container has no other network (`--network none`).
   */
  async function dockerForwarder(group) {
    let pid = 0;
    for (let delay = 50; group.child && group.phase === "running"; delay = Math.min(delay * 2, 1000)) {
      pid = await dockerPid(dockerCommand, group.name);
      if (pid > 0) break;
      await new Promise((r) => setTimeout(r, delay));
    }
    if (!pid || !group.child || group.phase !== "running") return;
    const forwarder = spawn(
      "nsenter",
      [
        "--target",
        String(pid),
        "--net",
        "--",
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
        node,
        bridge.forwarder,
        String(bridge.port),
        bridge.path,
      ],
      { env: { PATH: SYSTEM_PATH }, stdio: ["ignore", "ignore", "pipe", "pipe"] },
    );
    group.forwarder = forwarder;
    let said = "";
    forwarder.stderr.on("data", (chunk) => (said += chunk));
    forwarder.on("error", (error) => log(`no API port for ${group.name}: ${error.message}`));
    forwarder.on("close", (code) => {
      if (group.forwarder === forwarder && group.phase === "running") log(`the API port of ${group.name} closed (${code}): ${said.trim()}`);
    });
    await new Promise((resolve) => forwarder.stdio[3].on("data", resolve).on("end", resolve).on("error", resolve));
    if (group.phase !== "running") stopForwarder(group);
  }

  function stopForwarder(group) {
    group.forwarder?.kill("SIGKILL");
    group.forwarder = null;
  }

  function fail(group, error) {
    group.phase = "failed";
    group.error = error;
    group.waiting = null;
  }

  /**
   * Stops every process of the group: a jailed job's PID namespace and cgroups are emptied whatever
   * its processes did (setsid, double forks); a Docker container is removed by name (killing
   * `docker run` alone leaves it running). A group still waiting leaves the queue.
   */
  function kill(group, { wait = false } = {}) {
    clearTimeout(group.timer);
    const queued = queue.indexOf(group);
    if (queued >= 0) queue.splice(queued, 1);
    stopForwarder(group);
    if (group.stop) return group.stop();
    if (group.docker && group.child) {
      const args = ["rm", "-f", group.name];
      if (wait) spawnSync(dockerCommand, args, { stdio: "ignore", timeout: 15_000 });
      else spawn(dockerCommand, args, { stdio: "ignore" }).on("error", () => {});
    }
    if (group.child?.pid) {
      try {
        process.kill(-group.child.pid, "SIGKILL");
      } catch {
        group.child.kill("SIGKILL");
      }
    }
  }

  /** Removes a jailed job's working folder and cgroups once it has ended. */
  function cleanUp(group) {
    return group.stop?.();
  }

  const server = createServer(async (req, res) => {
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (!authorised(req, secret)) {
      req.resume();
      return send(401, { error: "the container host takes requests only from the API (Authorization: Bearer with the host's secret)" });
    }
    try {
      const url = new URL(req.url, "http://host");
      const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
      if (req.method === "GET" && parts.length === 1 && parts[0] === "images") {
        const images = readImages(imagesDir, log).map(({ name, tag, description, command }) => ({
          name,
          tag,
          description: description ?? null,
          command: command ?? null,
        }));
        return send(200, { images, capacity });
      }
      if (parts.length === 2 && parts[0] === "groups") {
        const name = parts[1];
        if (!GROUP_NAME.test(name)) return send(400, { error: "a group name is containergroup-{id}" });
        const group = groups.get(name);
        if (req.method === "PUT") {
          if (group) return send(200, { name });
          // Reserved before the body is read: a second PUT arriving meanwhile finds it and starts nothing.
          const reserved = reserve(name);
          let spec;
          try {
            let text = "";
            for await (const chunk of req) text += chunk;
            spec = JSON.parse(text);
            if (!spec || typeof spec !== "object" || typeof spec.image !== "string" || spec.image === "")
              throw new Error("the body must be a group spec with an image");
          } catch (error) {
            if (groups.get(name) === reserved) groups.delete(name);
            return send(400, { error: error.message });
          }
          if (groups.get(name) !== reserved) return send(200, { name }); // removed while its body was read
          admit(reserved, spec);
          return send(201, { name });
        }
        if (req.method === "GET") {
          if (!group) return send(404, { error: "unknown group" });
          const asked = url.searchParams.has("tailBytes") ? Number(url.searchParams.get("tailBytes")) : OUTPUT_CAP_BYTES;
          const { output, truncated } = group.tail.read(
            Number.isFinite(asked) && asked >= 0 ? Math.min(asked, OUTPUT_CAP_BYTES) : OUTPUT_CAP_BYTES,
          );
          return send(200, {
            phase: group.phase,
            exitCode: group.exitCode,
            error: group.error,
            output,
            outputTruncated: truncated,
            waiting: group.waiting === null ? null : `${group.waiting} (${queue.indexOf(group)} waiting before it)`,
          });
        }
        if (req.method === "DELETE") {
          if (group) {
            if (group.phase === "running" || group.phase === "pending") fail(group, "removed");
            await kill(group);
            groups.delete(name);
            log(`removed ${name}`);
          }
          return send(204);
        }
      }
      send(404, { error: "not found" });
    } catch (error) {
      send(500, { error: error.message });
    }
  });

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      resolve({
        port: actual,
        url: `http://${host}:${actual}`,
        secret,
        docker,
        isolation: jail,
        close: async () => {
          closing = true;
          queue.length = 0;
          await Promise.all([...groups.values()].map((group) => kill(group, { wait: true })));
          groups.clear();
          await bridge?.close();
          await new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections?.();
          });
        },
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] || process.env.CONTAINER_HOST_PORT || DEFAULT_HOST_PORT);
  const hostServer = await startContainerHost({
    port,
    apiUrl: process.env.PUBLIC_API_URL ?? "",
    log: (line) => console.log(`container host: ${line}`),
  });
  console.log(
    `container host listening on ${hostServer.url} (images: ${DEFAULT_IMAGES_DIR}; isolation: ` +
      `${hostServer.isolation.mode}${hostServer.docker ? "; Docker available" : ""})`,
  );
  console.log(`its secret (LOCAL_CONTAINER_HOST_SECRET): ${hostServer.secret}`);
}
