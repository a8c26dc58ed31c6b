// The CPU time of the workerd processes this bench started (its direct children), from /proc: the
// time every thread of them spent on a CPU (/proc/PID/task/TID/schedstat, nanoseconds; the D1
// database object runs in the same process and is included). Other engineers' workerd processes on
// the same machine are not counted (bench/lib/jobs.mjs's workerdCpuSeconds counts every workerd).
// CPU per request is the figure a shared machine disturbs least: a busy neighbour delays requests
// more than it makes them cost more cycles (it still does some, through caches and shared cores).
import { readdirSync, readFileSync } from "node:fs";

function ownWorkerdPids() {
  const pids = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(workerd)")) continue;
      // Fields after "(comm) ": state, ppid, ...
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === process.pid) pids.push(pid);
    } catch {
      // the process ended while being read
    }
  }
  return pids;
}

let cached;

/** Seconds of CPU time of this bench's workerd processes (all their threads) so far. */
export function ownWorkerdCpuSeconds() {
  cached ??= ownWorkerdPids();
  let ns = 0;
  let found = false;
  for (const pid of cached) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
          found = true;
        } catch {
          // the thread ended while being read
        }
      }
    } catch {
      // the process ended
    }
  }
  if (!found) {
    // A new Miniflare (another section) started other processes: look them up again.
    cached = ownWorkerdPids();
    if (cached.length > 0) return ownWorkerdCpuSeconds();
  }
  return ns / 1e9;
}
