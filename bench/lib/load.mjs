// autocannon runs with one shape for every target. Targets that are compared are measured in
// alternating rounds (A B A B A B) after one warm-up each, so that a slow spell of a shared machine
// lands on both sides of a ratio instead of on one; each figure is the median over the rounds.
// A run with any non-2xx answer or socket error fails the bench: a benchmark of 404s or 401s would
// look fast and mean nothing.
import autocannon from "autocannon";

export const LOAD = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
  /** Seconds per target per round. */
  duration: Number(process.env.BENCH_DURATION ?? 4),
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  warmup: Number(process.env.BENCH_WARMUP ?? 2),
};

export const round = (n, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

function once(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function loadOnce(target, duration, { warmup = false } = {}) {
  const result = await once({
    url: String(target.url),
    headers: target.headers ?? {},
    ...(target.method ? { method: target.method } : {}),
    ...(target.body !== undefined ? { body: target.body } : {}),
    connections: LOAD.connections,
    pipelining: 1,
    timeout: 30,
    duration,
  });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) {
    throw new Error(
      `${target.label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts out of ` +
        `${result.requests.total} requests (${target.url})`,
    );
  }
  // A warm-up of a slow target may end before its first answer; a measured run may not.
  if (result.requests.total === 0 && !warmup) throw new Error(`${target.label}: no request completed in ${duration} s (${target.url})`);
  return {
    requests: result.requests.total,
    reqPerSec: result.requests.total / duration,
    latencyMs: { mean: result.latency.mean, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
  };
}

/**
 * Measures targets in alternating rounds. Returns, per target, the median figures over the rounds
 * and each round's figures (so ratios can be taken round by round). With `cpuSeconds` (a reading of
 * the server's CPU time, e.g. bench/lib/cpu.mjs), each run also records the server's CPU time per
 * answered request (`cpuUsPerRequest`, microseconds): unlike req/s, it hardly moves when other
 * processes take the machine's cores.
 */
export async function measureRounds(targets, { cpuSeconds } = {}) {
  for (const target of targets) await loadOnce(target, LOAD.warmup, { warmup: true });
  const perRound = targets.map(() => []);
  for (let r = 0; r < LOAD.rounds; r++) {
    for (const [i, target] of targets.entries()) {
      const before = cpuSeconds?.();
      const figures = await loadOnce(target, LOAD.duration);
      if (cpuSeconds) figures.cpuUsPerRequest = round(((cpuSeconds() - before) * 1e6) / figures.requests, 1);
      perRound[i].push(figures);
    }
  }
  return targets.map((target, i) => {
    const rounds = perRound[i];
    const pick = (f) => round(median(rounds.map(f)));
    const figures = {
      label: target.label,
      requests: rounds.reduce((sum, x) => sum + x.requests, 0),
      reqPerSec: pick((x) => x.reqPerSec),
      latencyMs: {
        mean: pick((x) => x.latencyMs.mean),
        p50: pick((x) => x.latencyMs.p50),
        p99: pick((x) => x.latencyMs.p99),
        max: round(Math.max(...rounds.map((x) => x.latencyMs.max))),
      },
      ...(cpuSeconds ? { cpuUsPerRequest: pick((x) => x.cpuUsPerRequest) } : {}),
      rounds: rounds.map((x) => ({
        ...x,
        reqPerSec: round(x.reqPerSec),
        latencyMs: { mean: round(x.latencyMs.mean), p50: x.latencyMs.p50, p99: x.latencyMs.p99, max: x.latencyMs.max },
      })),
    };
    const cpu = cpuSeconds ? `, ${figures.cpuUsPerRequest} µs server CPU per request` : "";
    console.log(
      `  ${figures.label}: ${figures.reqPerSec} req/s, p50 ${figures.latencyMs.p50} ms, p99 ${figures.latencyMs.p99} ` +
        `ms${cpu} (${figures.requests} requests)`,
    );
    return figures;
  });
}

/** The median over rounds of a per-round ratio between two measured targets. */
export function roundRatio(a, b, f) {
  return round(median(a.rounds.map((x, i) => f(x) / f(b.rounds[i]))), 3);
}
