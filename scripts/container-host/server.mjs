// The local container host: runs job "images" on this machine for `npm start`, the smoke run and a
// newcomer's first jobs, speaking the protocol of src/dataprocessing/host/types.ts:
//   GET /images · PUT|GET|DELETE /groups/{name}
// An image is a folder of examples/images with an image.json ({ name, tag, description, command });
// its command runs as a child process in that folder with ONLY the group's environment (plus a PATH
// that finds node), a time limit (timeoutSeconds) and an output cap (the last 1 MiB is kept). When a
// Docker daemon answers and the image is not a local folder, it runs with `docker run` instead.
// Run alone: node scripts/container-host/server.mjs [port]   (default 8790)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DEFAULT_IMAGES_DIR = join(ROOT, "examples", "images");
export const DEFAULT_HOST_PORT = 8790;
export const OUTPUT_CAP_BYTES = 1024 * 1024;
const GROUP_NAME = /^containergroup-[A-Za-z0-9-]{1,100}$/;

/** The images of a folder: each sub-folder with an image.json. */
export function readImages(imagesDir = DEFAULT_IMAGES_DIR) {
  if (!existsSync(imagesDir)) return [];
  return readdirSync(imagesDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(imagesDir, d.name, "image.json")))
    .map((d) => ({ ...JSON.parse(readFileSync(join(imagesDir, d.name, "image.json"), "utf8")), dir: join(imagesDir, d.name) }));
}

function dockerAnswers() {
  const result = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 5000 });
  return result.status === 0;
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

/**
 * Starts the host. Returns { port, url, close() }.
 * @param {{ port?: number, host?: string, imagesDir?: string, log?: (line: string) => void }} options
 */
export function startContainerHost({ port = DEFAULT_HOST_PORT, host = "127.0.0.1", imagesDir = DEFAULT_IMAGES_DIR, log = () => {} } = {}) {
  const groups = new Map();
  const docker = dockerAnswers();
  const capacity = { maxCpuCores: cpus().length, maxMemoryGb: Math.max(1, Math.floor(totalmem() / 1024 ** 3)), maxGpuCores: 0, gpuSkus: [] };

  function start(name, spec) {
    const images = readImages(imagesDir);
    const [imageName, imageTag = "latest"] = String(spec.image ?? "").split(":");
    const image = images.find((i) => i.name === imageName && i.tag === imageTag);
    const group = { spec, phase: "pending", exitCode: null, error: null, tail: new Tail(OUTPUT_CAP_BYTES), child: null, timer: null, workDir: null };
    groups.set(name, group);
    const environment = Object.fromEntries(Object.entries(spec.environment ?? {}).map(([k, v]) => [k, String(v)]));
    let child;
    if (image) {
      const command = spec.command || image.command;
      if (!command) return fail(group, `image ${spec.image} has no command and the config gives none`);
      group.workDir = mkdtempSync(join(tmpdir(), `${name}-`));
      child = spawn("/bin/sh", ["-c", command], {
        cwd: image.dir,
        // Only the job's environment: nothing of this process (tokens, keys) leaks into a job.
        env: { ...environment, PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: group.workDir, TMPDIR: group.workDir },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
    } else if (docker) {
      const args = ["run", "--rm", "--name", name, "--cpus", String(spec.cpuCores ?? 1), "--memory", `${Math.round((spec.memoryGb ?? 1) * 1024)}m`];
      for (const key of Object.keys(environment)) args.push("-e", key); // values come from the environment, not the command line
      args.push(spec.image, ...(spec.command ? ["/bin/sh", "-c", spec.command] : []));
      child = spawn("docker", args, { env: { ...environment, PATH: process.env.PATH }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    } else {
      return fail(group, `no local image ${spec.image} (folders of ${imagesDir}) and no Docker daemon answers`);
    }
    group.child = child;
    group.phase = "running";
    let lastErrorLine = "";
    child.stdout.on("data", (chunk) => group.tail.push(chunk));
    child.stderr.on("data", (chunk) => {
      group.tail.push(chunk);
      const lines = String(chunk).split("\n").map((l) => l.trim()).filter(Boolean);
      if (lines.length > 0) lastErrorLine = lines[lines.length - 1];
    });
    child.on("error", (error) => fail(group, `could not start: ${error.message}`));
    child.on("close", (code, signal) => {
      clearTimeout(group.timer);
      group.child = null;
      if (group.phase !== "running") return; // already failed (time limit, removal)
      group.exitCode = code;
      if (code === 0) group.phase = "succeeded";
      else fail(group, `${lastErrorLine || (signal ? `killed by ${signal}` : "the container failed")} (exit code ${code ?? signal})`);
      cleanUp(group);
    });
    const limit = Number(spec.timeoutSeconds) || 3600;
    group.timer = setTimeout(() => {
      fail(group, `time limit of ${limit} s reached; the container was stopped`);
      kill(group);
    }, limit * 1000);
    log(`started ${name} (${spec.image})`);
  }

  function fail(group, error) {
    group.phase = "failed";
    group.error = error;
  }

  function kill(group) {
    if (group.child?.pid) {
      try {
        process.kill(-group.child.pid, "SIGKILL");
      } catch {
        group.child.kill("SIGKILL");
      }
    }
  }

  function cleanUp(group) {
    if (group.workDir) rmSync(group.workDir, { recursive: true, force: true });
    group.workDir = null;
  }

  const server = createServer(async (req, res) => {
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    try {
      const url = new URL(req.url, "http://host");
      const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
      if (req.method === "GET" && parts.length === 1 && parts[0] === "images") {
        const images = readImages(imagesDir).map(({ name, tag, description, command }) => ({ name, tag, description: description ?? null, command: command ?? null }));
        return send(200, { images, capacity });
      }
      if (parts.length === 2 && parts[0] === "groups") {
        const name = parts[1];
        if (!GROUP_NAME.test(name)) return send(400, { error: "a group name is containergroup-{id}" });
        const group = groups.get(name);
        if (req.method === "PUT") {
          if (group) return send(200, { name });
          let text = "";
          for await (const chunk of req) text += chunk;
          start(name, JSON.parse(text));
          return send(201, { name });
        }
        if (req.method === "GET") {
          if (!group) return send(404, { error: "unknown group" });
          const { output, truncated } = group.tail.read(Math.min(Number(url.searchParams.get("tailBytes")) || OUTPUT_CAP_BYTES, OUTPUT_CAP_BYTES));
          return send(200, { phase: group.phase, exitCode: group.exitCode, error: group.error, output, outputTruncated: truncated });
        }
        if (req.method === "DELETE") {
          if (group) {
            if (group.phase === "running" || group.phase === "pending") fail(group, "removed");
            kill(group);
            cleanUp(group);
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
        docker,
        close: () =>
          new Promise((done) => {
            for (const group of groups.values()) {
              kill(group);
              cleanUp(group);
            }
            groups.clear();
            server.close(() => done());
            server.closeAllConnections?.();
          }),
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] || process.env.CONTAINER_HOST_PORT || DEFAULT_HOST_PORT);
  const hostServer = await startContainerHost({ port, log: (line) => console.log(`container host: ${line}`) });
  console.log(`container host listening on ${hostServer.url} (images: ${DEFAULT_IMAGES_DIR}${hostServer.docker ? "; Docker available" : ""})`);
}
