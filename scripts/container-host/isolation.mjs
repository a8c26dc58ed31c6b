// How the local container host isolates a job that runs from a folder image: Linux namespaces made
// by `unshare` (util-linux), a root built by jail.sh, an unprivileged uid per job, cgroup limits
// where the host may create cgroups, and rlimits. See README, "Data processing", for what this
// guarantees and what it does not.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const JAIL_SCRIPT = join(HERE, "jail.sh");
/** The forwarder that carries the API's port on a job's loopback to the host's API socket. */
export const FORWARDER = join(HERE, "forward.mjs");
/** What the jail's own root commands see as PATH (never the job's). */
export const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Job uids: one per running job, far above any account or subordinate-id range. */
const UID_BASE = 1_500_000_000;
const UID_SLOTS = 100_000;
/** Where the jail binds node's own prefix when node lives outside the system's folders (nvm, a tarball). */
const JAIL_NODE_PREFIX = "/opt/node";
/** System folders the jail binds read-only at their own paths (jail.sh). */
const SYSTEM_DIRS = /^\/(usr|bin|sbin|lib|lib32|lib64|libx32|etc)\//;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The defaults a job gets when its config does not say (README, "Data processing"). */
export const DEFAULT_LIMITS = Object.freeze({ memoryGb: 1, cpuCores: 1, maxProcesses: 256, diskMb: 1024 });

/** Shell single-quoting: the value is taken literally whatever it holds. */
export function shellQuote(value) {
  return `'${String(value).replace(/'/g, "'\\''")}'`;
}

/**
 * The uids jobs run as: one per running job, taken when its jail is made and given back when it is
 * removed. The search starts at a random slot (two hosts on one machine rarely pick the same uid) and
 * looks at each slot once: when every one is taken it fails, saying so, instead of searching forever.
 */
export class JobUids {
  constructor(count = UID_SLOTS, base = UID_BASE) {
    this.count = count;
    this.base = base;
    this.used = new Set();
    this.next = randomInt(count);
  }
  /** A free slot, taken; throws when there is none. */
  take() {
    for (let i = 0; i < this.count; i++) {
      const slot = (this.next + i) % this.count;
      if (this.used.has(slot)) continue;
      this.used.add(slot);
      this.next = (slot + 1) % this.count;
      return slot;
    }
    throw new Error(`every one of the ${this.count} job uids is in use, so no other job can start now`);
  }
  release(slot) {
    this.used.delete(slot);
  }
  get inUse() {
    return this.used.size;
  }
}

/** The uids of every host in this process. */
export const JOB_UIDS = new JobUids();

/**
 * Where node is inside the jail: at its own path when it lives in the system's folders (bound there
 * anyway), else under {@link JAIL_NODE_PREFIX}, so no path of this machine (a home folder) reaches the job.
 */
export function jailNodePath(node) {
  if (SYSTEM_DIRS.test(node)) return node;
  const prefix = dirname(dirname(node));
  return JAIL_NODE_PREFIX + node.slice(prefix.length);
}

/**
 * The entry script the jail runs as the job's uid: its environment (the group's alone, plus a PATH,
 * HOME and TMPDIR inside the jail) and its command, run from its working folder. jail.sh starts it
 * with an empty environment, so nothing else (no host path) is in the job's.
 */
export function entryScript(command, environment, nodeDir) {
  const lines = [`export PATH=${shellQuote(`${nodeDir}:/usr/local/bin:/usr/bin:/bin`)}`, "export HOME=/job", "export TMPDIR=/job/.tmp"];
  for (const [name, value] of Object.entries(environment)) {
    if (!ENV_NAME.test(name)) throw new Error(`the environment variable name ${JSON.stringify(name)} is not a valid name`);
    if (String(value).includes("\0")) throw new Error(`the environment variable ${name} holds a NUL character`);
    lines.push(`export ${name}=${shellQuote(value)}`);
  }
  lines.push("cd /job", `exec /bin/sh -c ${shellQuote(command)}`, "");
  return lines.join("\n");
}

/** The cgroup hierarchies this process may make job groups in: v2 (unified) or v1 (memory, pids, cpu). */
function findCgroups() {
  const root = "/sys/fs/cgroup";
  const parent = "integrity-edge-jobs";
  try {
    if (existsSync(join(root, "cgroup.controllers"))) {
      const dir = join(root, parent);
      mkdirSync(dir, { recursive: true });
      const available = readFileSync(join(root, "cgroup.subtree_control"), "utf8");
      for (const c of ["memory", "pids", "cpu"]) if (!available.includes(c)) writeFileSync(join(root, "cgroup.subtree_control"), `+${c}`);
      writeFileSync(join(dir, "cgroup.subtree_control"), "+memory +pids +cpu");
      return { version: 2, dirs: { unified: dir } };
    }
    const dirs = {};
    for (const c of ["memory", "pids", "cpu"]) {
      if (!existsSync(join(root, c, "cgroup.procs"))) return null;
      dirs[c] = join(root, c, parent);
      mkdirSync(dirs[c], { recursive: true });
    }
    return { version: 1, dirs };
  } catch {
    return null;
  }
}

/** The folders of a job's cgroups (none when cgroups are not ours). */
export function cgroupDirsOf(cgroups, name) {
  if (!cgroups) return [];
  if (cgroups.version === 2) return [join(cgroups.dirs.unified, name)];
  return [join(cgroups.dirs.memory, name), join(cgroups.dirs.pids, name), join(cgroups.dirs.cpu, name)];
}

/**
 * Makes the job's cgroups with its limits, adding each folder to `made` as soon as it exists, so a
 * failure halfway leaves the caller knowing what to remove.
 */
function makeCgroups(cgroups, name, limits, made) {
  if (!cgroups) return;
  const memory = Math.round(limits.memoryGb * 1024 ** 3);
  const quota = Math.max(1000, Math.round(limits.cpuCores * 100_000));
  const dirs = cgroupDirsOf(cgroups, name);
  for (const dir of dirs) {
    mkdirSync(dir);
    made.push(dir);
  }
  if (cgroups.version === 2) {
    const [dir] = dirs;
    writeFileSync(join(dir, "memory.max"), String(memory));
    if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
    writeFileSync(join(dir, "pids.max"), String(limits.maxProcesses));
    writeFileSync(join(dir, "cpu.max"), `${quota} 100000`);
    return;
  }
  const [memoryDir, pidsDir, cpuDir] = dirs;
  writeFileSync(join(memoryDir, "memory.limit_in_bytes"), String(memory));
  if (existsSync(join(memoryDir, "memory.memsw.limit_in_bytes")))
    writeFileSync(join(memoryDir, "memory.memsw.limit_in_bytes"), String(memory));
  writeFileSync(join(pidsDir, "pids.max"), String(limits.maxProcesses));
  writeFileSync(join(cpuDir, "cpu.cfs_period_us"), "100000");
  writeFileSync(join(cpuDir, "cpu.cfs_quota_us"), String(quota));
}

/** Removes cgroups no process ever joined (a start that failed before its first process). */
function removeEmptyCgroups(dirs) {
  for (const dir of dirs) {
    try {
      rmdirSync(dir);
    } catch {
      // Gone already; a busy one is left to removeCgroups.
    }
  }
}

/** Kills whatever is left in the job's cgroups and removes them (a few tries: exits are asynchronous). */
async function removeCgroups(dirs) {
  for (let attempt = 0; attempt < 50 && dirs.some((d) => existsSync(d)); attempt++) {
    for (const dir of dirs) {
      if (!existsSync(dir)) continue;
      try {
        if (existsSync(join(dir, "cgroup.kill"))) writeFileSync(join(dir, "cgroup.kill"), "1");
        for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
          try {
            process.kill(Number(pid), "SIGKILL");
          } catch {
            // Gone already.
          }
        }
        rmdirSync(dir);
      } catch {
        // Still busy: try again shortly.
      }
    }
    if (dirs.some((d) => existsSync(d))) await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Finds how jobs can be isolated here, by running one trivial job through the jail: `root` (namespaces,
 * a uid per job, cgroups when the host may make them), `user` (an unprivileged user namespace: the same
 * filesystem, process and network isolation, rlimits but no cgroups) or `none` with the reason. The
 * probe is a job like any other: its cgroup has a name of its own at every start (`probeName`, so two
 * hosts starting at once never share one) and is removed with its jail folder when it ends.
 */
export async function detectIsolation({ uids = JOB_UIDS } = {}) {
  if (process.platform !== "linux")
    return { mode: "none", reason: "job isolation needs Linux namespaces (this is " + process.platform + ")" };
  const missing = ["unshare", "setpriv", "prlimit", "chroot", "ip", "mount", "env"].filter(
    (tool) => spawnSync("sh", ["-c", `command -v ${tool}`], { env: { PATH: SYSTEM_PATH } }).status !== 0,
  );
  if (missing.length > 0) return { mode: "none", reason: `job isolation needs ${missing.join(", ")} (util-linux, coreutils, iproute2)` };
  const root = process.getuid?.() === 0;
  const cgroups = root ? findCgroups() : null;
  const probe = { mode: root ? "root" : "user", cgroups };
  const probeName = `probe-${process.pid}-${randomBytes(4).toString("hex")}`;
  const image = mkdtempSync(join(tmpdir(), "integrity-edge-probe-"));
  try {
    const { child, stop } = startJailed(
      probe,
      {
        name: probeName,
        imageDir: image,
        command: "echo jailed",
        environment: {},
        limits: DEFAULT_LIMITS,
        timeoutSeconds: 10,
        apiPort: 0,
        apiSocket: "",
      },
      uids,
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => stop(), 20_000);
    const status = await new Promise((resolve) => {
      child.on("error", (error) => resolve({ error }));
      child.on("close", (code) => resolve({ code }));
    });
    clearTimeout(timer);
    await stop();
    if (status.code === 0 && stdout.trim() === "jailed") return { ...probe, probeName };
    const why = (stderr || status.error?.message || `exit ${status.code}`).trim().split("\n").slice(-2).join(" ");
    return { mode: "none", reason: `the jail could not be made here: ${why}`, probeName };
  } catch (error) {
    return { mode: "none", reason: `the jail could not be made here: ${error.message}`, probeName };
  } finally {
    rmSync(image, { recursive: true, force: true });
  }
}

/**
 * The command that runs one job in the jail, and how to clean up after it. `limits` are what the job
 * may use; `apiPort`/`apiSocket` the one port of the job's loopback that leads to the API (0: none);
 * `node` the node the job and the forwarder run (this process's own unless the checks give another).
 * Whatever it made before a failure (the jail folder, cgroups, the uid) is undone before it throws.
 */
function jailCommand(isolation, options, uids) {
  const { name, imageDir, command, environment, limits, timeoutSeconds, apiPort, apiSocket, node = process.execPath } = options;
  const made = { jail: null, slot: null, cgroupDirs: [] };
  const cleanUp = () => {
    if (made.jail) rmSync(made.jail, { recursive: true, force: true });
    if (made.slot !== null) uids.release(made.slot);
    made.jail = null;
    made.slot = null;
  };
  try {
    const jailNode = jailNodePath(node);
    // The script first: a variable it refuses (a NUL, a bad name) fails the start before anything is made.
    const entry = entryScript(command, environment, dirname(jailNode));
    made.jail = mkdtempSync(join(tmpdir(), "integrity-edge-job-"));
    mkdirSync(join(made.jail, "root"));
    if (isolation.mode === "root") made.slot = uids.take();
    const uid = made.slot === null ? 0 : uids.base + made.slot;
    // A cgroup name of its own at every start: two hosts on one machine may run groups of one name.
    makeCgroups(isolation.cgroups, `${name}-${randomBytes(4).toString("hex")}`, limits, made.cgroupDirs);
    writeFileSync(join(made.jail, "entry.sh"), entry, { mode: 0o600 });
    const cpuSeconds = Math.max(1, Math.ceil(timeoutSeconds * Math.max(1, limits.cpuCores)) + 1);
    const unshare = ["unshare", "--pid", "--fork", "--kill-child", "--mount", "--net", "--ipc", "--uts"];
    if (isolation.mode === "user") unshare.push("--user", "--map-root-user");
    const jailArgs = [
      JAIL_SCRIPT,
      made.jail,
      imageDir,
      String(uid),
      String(limits.diskMb),
      String(apiPort),
      apiSocket,
      node,
      FORWARDER,
      String(limits.maxProcesses),
      String(cpuSeconds),
      jailNode,
    ];
    // A shell that joins the job's cgroups first, so everything the job ever starts is inside them. The
    // folders are its first argument, never a variable: nothing of them reaches the job's environment.
    const join_ = 'for d in $1; do echo $$ > "$d/cgroup.procs" || exit 125; done; shift; exec "$@"';
    return {
      command: "/bin/sh",
      args: ["-c", join_, "jail", made.cgroupDirs.join(" "), ...unshare, "--", "/bin/sh", ...jailArgs],
      env: { PATH: SYSTEM_PATH },
      cgroupDirs: made.cgroupDirs,
      cleanUp,
    };
  } catch (error) {
    removeEmptyCgroups(made.cgroupDirs);
    cleanUp();
    throw error;
  }
}

/**
 * Starts a job in the jail. Returns the child (its stdout and stderr are the job's output) and
 * `stop()`, which ends every process the job started (the PID namespace goes with its first process,
 * and the cgroups are emptied) and removes its working folder and cgroups, and gives its uid back.
 * Throws, having undone everything, when the jail cannot be prepared.
 */
export function startJailed(isolation, options, uids = JOB_UIDS) {
  const run = jailCommand(isolation, options, uids);
  const child = spawn(run.command, run.args, { env: run.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stopped = null;
  const stop = () => {
    stopped ??= (async () => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone (or never started: spawn failed).
      }
      await removeCgroups(run.cgroupDirs);
      run.cleanUp();
    })();
    return stopped;
  };
  // A spawn that fails (no /bin/sh) emits only "error": the jail is undone then too.
  child.on("error", () => stop());
  return { child, stop };
}
