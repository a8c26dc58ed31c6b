// How the local container host isolates a job that runs from a folder image: Linux namespaces made
// by `unshare` (util-linux), a root built by jail.sh, an unprivileged uid per job, cgroup limits
// where the host may create cgroups, and rlimits. See README, "Data processing", for what this
// guarantees and what it does not.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const JAIL_SCRIPT = join(HERE, "jail.sh");
const FORWARDER = join(HERE, "forward.mjs");
/** What the jail's own root commands see as PATH (never the job's). */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Job uids: one per running job, far above any account or subordinate-id range. */
const UID_BASE = 1_500_000_000;
const UID_SLOTS = 100_000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The defaults a job gets when its config does not say (README, "Data processing"). */
export const DEFAULT_LIMITS = Object.freeze({ memoryGb: 1, cpuCores: 1, maxProcesses: 256, diskMb: 1024 });

/** Shell single-quoting: the value is taken literally whatever it holds. */
export function shellQuote(value) {
  return `'${String(value).replace(/'/g, "'\\''")}'`;
}

/**
 * The entry script the jail runs as the job's uid: its environment (the group's alone, plus a PATH,
 * HOME and TMPDIR inside the jail) and its command, run from its working folder.
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

/** Makes the job's cgroups with its limits; returns their folders (empty when cgroups are not ours). */
function makeCgroups(cgroups, name, limits) {
  if (!cgroups) return [];
  const memory = Math.round(limits.memoryGb * 1024 ** 3);
  const quota = Math.max(1000, Math.round(limits.cpuCores * 100_000));
  if (cgroups.version === 2) {
    const dir = join(cgroups.dirs.unified, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "memory.max"), String(memory));
    if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
    writeFileSync(join(dir, "pids.max"), String(limits.maxProcesses));
    writeFileSync(join(dir, "cpu.max"), `${quota} 100000`);
    return [dir];
  }
  const memoryDir = join(cgroups.dirs.memory, name);
  const pidsDir = join(cgroups.dirs.pids, name);
  const cpuDir = join(cgroups.dirs.cpu, name);
  for (const dir of [memoryDir, pidsDir, cpuDir]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(memoryDir, "memory.limit_in_bytes"), String(memory));
  if (existsSync(join(memoryDir, "memory.memsw.limit_in_bytes")))
    writeFileSync(join(memoryDir, "memory.memsw.limit_in_bytes"), String(memory));
  writeFileSync(join(pidsDir, "pids.max"), String(limits.maxProcesses));
  writeFileSync(join(cpuDir, "cpu.cfs_period_us"), "100000");
  writeFileSync(join(cpuDir, "cpu.cfs_quota_us"), String(quota));
  return [memoryDir, pidsDir, cpuDir];
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
 * filesystem, process and network isolation, rlimits but no cgroups) or `none` with the reason.
 */
export function detectIsolation() {
  if (process.platform !== "linux")
    return { mode: "none", reason: "job isolation needs Linux namespaces (this is " + process.platform + ")" };
  const missing = ["unshare", "setpriv", "prlimit", "chroot", "ip", "mount"].filter(
    (tool) => spawnSync("sh", ["-c", `command -v ${tool}`], { env: { PATH: SYSTEM_PATH } }).status !== 0,
  );
  if (missing.length > 0) return { mode: "none", reason: `job isolation needs ${missing.join(", ")} (util-linux, coreutils, iproute2)` };
  const root = process.getuid?.() === 0;
  const cgroups = root ? findCgroups() : null;
  const probe = { mode: root ? "root" : "user", cgroups };
  const image = mkdtempSync(join(tmpdir(), "integrity-edge-probe-"));
  try {
    const run = jailCommand(probe, {
      name: "containergroup-probe",
      imageDir: image,
      command: "echo jailed",
      environment: {},
      limits: DEFAULT_LIMITS,
      timeoutSeconds: 10,
      apiPort: 0,
      apiSocket: "",
    });
    const result = spawnSync(run.command, run.args, { env: run.env, encoding: "utf8", timeout: 20_000 });
    run.cleanUp();
    if (result.status === 0 && result.stdout.trim() === "jailed") return probe;
    const why = (result.stderr || result.error?.message || `exit ${result.status}`).trim().split("\n").slice(-2).join(" ");
    return { mode: "none", reason: `the jail could not be made here: ${why}` };
  } finally {
    rmSync(image, { recursive: true, force: true });
  }
}

let nextSlot = 0;
const slotsInUse = new Set();

/**
 * The command that runs one job in the jail, and how to clean up after it. `limits` are what the job
 * may use; `apiPort`/`apiSocket` the one port of the job's loopback that leads to the API (0: none).
 */
function jailCommand(isolation, { name, imageDir, command, environment, limits, timeoutSeconds, apiPort, apiSocket }) {
  const jail = mkdtempSync(join(tmpdir(), "integrity-edge-job-"));
  mkdirSync(join(jail, "root"));
  let slot = null;
  let uid = 0;
  if (isolation.mode === "root") {
    while (slotsInUse.has(nextSlot)) nextSlot = (nextSlot + 1) % UID_SLOTS;
    slot = nextSlot;
    slotsInUse.add(slot);
    nextSlot = (nextSlot + 1) % UID_SLOTS;
    uid = UID_BASE + slot;
  }
  const cgroupDirs = makeCgroups(isolation.cgroups, name, limits);
  writeFileSync(join(jail, "entry.sh"), entryScript(command, environment, dirname(process.execPath)), { mode: 0o600 });
  const cpuSeconds = Math.max(1, Math.ceil(timeoutSeconds * Math.max(1, limits.cpuCores)) + 1);
  const unshare = ["unshare", "--pid", "--fork", "--kill-child", "--mount", "--net", "--ipc", "--uts"];
  if (isolation.mode === "user") unshare.push("--user", "--map-root-user");
  const jailArgs = [
    JAIL_SCRIPT,
    jail,
    imageDir,
    String(uid),
    String(limits.diskMb),
    String(apiPort),
    apiSocket,
    process.execPath,
    FORWARDER,
    String(limits.maxProcesses),
    String(cpuSeconds),
  ];
  // A shell that joins the job's cgroups first, so everything the job ever starts is inside them.
  const join_ = 'for d in $JOB_CGROUPS; do echo $$ > "$d/cgroup.procs" || exit 125; done; exec "$@"';
  return {
    command: "/bin/sh",
    args: ["-c", join_, "jail", ...unshare, "--", "/bin/sh", ...jailArgs],
    env: { PATH: SYSTEM_PATH, JOB_CGROUPS: cgroupDirs.join(" ") },
    cgroupDirs,
    cleanUp: () => {
      rmSync(jail, { recursive: true, force: true });
      if (slot !== null) slotsInUse.delete(slot);
    },
  };
}

/**
 * Starts a job in the jail. Returns the child (its stdout and stderr are the job's output) and
 * `stop()`, which ends every process the job started (the PID namespace goes with its first process,
 * and the cgroups are emptied) and removes its working folder and cgroups.
 */
export function startJailed(isolation, options) {
  const run = jailCommand(isolation, options);
  const child = spawn(run.command, run.args, { env: run.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stopped = null;
  const stop = () => {
    stopped ??= (async () => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
      await removeCgroups(run.cgroupDirs);
      run.cleanUp();
    })();
    return stopped;
  };
  return { child, stop };
}
