// The machine description and the markdown summary pasted into docs/benchmarks.md.
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { listSummary } from "./list.mjs";
import { round } from "./load.mjs";

export function machine() {
  let cpuModel = cpus()[0]?.model ?? "unknown";
  try {
    cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux: os.cpus() is as good as it gets
  }
  return {
    cpus: cpus().length,
    cpuModel,
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

const verdict = (ok) => (ok ? "met" : "**NOT met**");

function loadRow(figures) {
  const l = figures.latencyMs;
  return `| ${figures.label} | ${figures.reqPerSec} | ${l.p50} | ${l.p99} | ${l.mean} | ${figures.requests} |`;
}

const LOAD_HEADER = ["| target | req/s | p50 ms | p99 ms | mean ms | requests |", "| --- | ---: | ---: | ---: | ---: | ---: |"];

export function markdownSummary(r) {
  const a = r.benchA;
  const b = r.benchB;
  const s = r.startup;
  const header = [
    `Run ${r.finishedAt} (\`${r.command}\`) on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} ` +
      `GiB, Node ${r.machine.node};`,
    `autocannon ${r.load.connections} connections; per target ${r.load.warmup} s warm-up, then ${r.load.rounds} ` +
      `alternating rounds of ${r.load.duration} s`,
    `(figures: median over rounds; ratios: median of per-round ratios); load average before/after: ` +
      `${r.loadAverage.before} / ${r.loadAverage.after}; total bench time ${r.totalSeconds} s.`,
    "",
  ];
  const benchA = a
    ? [
        `### A. GET one ${
          a.resource === "PropertyDefinitions"
            ? "property definition"
            : "category (fallback: GET /PropertyDefinitions/{id} was not available)"
        }: full Worker vs minimal Worker`,
        "",
        ...LOAD_HEADER,
        loadRow(a.minimal),
        loadRow(a.full),
        "",
        `Ratio full/minimal (req/s): **${a.ratio}** (target >= ${a.target}: ` +
          verdict(a.ratio >= a.target) +
          (a.roundTarget === undefined ? "" : `; every round >= ${a.roundTarget}: ${verdict(a.lowestRound >= a.roundTarget)}`) +
          "); " +
          `per round: ${a.full.rounds.map((x, i) => round(x.reqPerSec / a.minimal.rounds[i].reqPerSec, 3)).join(", ")}.`,
        ...(a.cpuRatio === undefined
          ? []
          : [
              "",
              `Server CPU per request (workerd, the D1 object included): minimal ${a.minimal.cpuUsPerRequest} µs, full ` +
                `${a.full.cpuUsPerRequest} µs; ratio by CPU (minimal/full) **${a.cpuRatio}**.`,
            ]),
        "",
      ]
    : [];
  const startup = s
    ? [
        "",
        "### Startup",
        "",
        `- \`wrangler check startup\`: **${s.profile.cpuMs} ms** CPU (least of ${s.profile.cpuMsRuns.length} runs: ` +
          `${s.profile.cpuMsRuns.join(", ")} ms); that run: ${s.profile.samples} samples (~${s.profile.sampleIntervalMs} ` +
          `ms interval) over ${s.profile.wallMs} ms; hottest: ` +
          `${s.profile.hottest.map((h) => `${h.name} ${h.ms} ms`).join(", ")}.`,
        `- Bundle: ${s.bundle.entryKiB} KiB entry module, ${s.bundle.modules} module(s); WASM modules shipped: ` +
          `${s.bundle.wasmModules.length ? s.bundle.wasmModules.join(", ") : "none"}.`,
        `- WASM instantiated during startup (probe): **${s.wasm.atStartup}**; WASM or instantiate frames in the startup ` +
          `profile: ${s.profile.wasmFrames.length ? s.profile.wasmFrames.join("; ") : "none"};` +
          ` self time in the WASM libraries' JS glue at startup: ` +
          `${s.profile.wasmGlue.length ? s.profile.wasmGlue.map((g) => `${g.name} ${g.ms} ms`).join(", ") : "none sampled"}.`,
        `- After startup, POST /PropertyDefinitions with a valueExpression (HTTP ${s.wasm.afterExpression.status}) ` +
          `instantiated WASM ${s.wasm.afterExpression.instantiations} time(s)` +
          (s.wasm.afterExpression.instantiations > 0
            ? " in the request: QuickJS loads lazily."
            : ": the sandbox did not run, so the lazy-loading check is not conclusive yet."),
      ]
    : [];
  return [...header, ...benchA, listSummary(b, b.statistics), ...startup].join("\n");
}
