// The machine description and the markdown summary pasted into docs/benchmarks.md.
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { round } from "./load.mjs";

export function machine() {
  let cpuModel = cpus()[0]?.model ?? "unknown";
  try {
    cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux: os.cpus() is as good as it gets
  }
  return { cpus: cpus().length, cpuModel, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version, platform: `${process.platform} ${process.arch}` };
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
  const lines = [
    `Run ${r.finishedAt} on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node};`,
    `autocannon ${r.load.connections} connections; per target ${r.load.warmup} s warm-up, then ${r.load.rounds} alternating rounds of ${r.load.duration} s`,
    `(figures: median over rounds; ratios: median of per-round ratios); load average before/after: ${r.loadAverage.before} / ${r.loadAverage.after}; total bench time ${r.totalSeconds} s.`,
    "",
    `### A. GET one ${a.resource === "PropertyDefinitions" ? "property definition" : "category (fallback: GET /PropertyDefinitions/{id} was not available)"}: full Worker vs minimal Worker`,
    "",
    ...LOAD_HEADER,
    loadRow(a.minimal),
    loadRow(a.full),
    "",
    `Ratio full/minimal (req/s): **${a.ratio}** (target >= ${a.target}: ${verdict(a.ratio >= a.target)}); per round: ${a.full.rounds.map((x, i) => round(x.reqPerSec / a.minimal.rounds[i].reqPerSec, 3)).join(", ")}.`,
    "",
    "### B. Two-term property filter + order, 10,000 vs 100,000 entities",
    "",
    `\`GET /{kind}/entities?${b.query}\` (matching: ${b.sizes.map((x) => `${x.total} of ${x.entities}`).join(", ")}; SQLite statistics: ${b.statistics}).`,
    "",
    ...LOAD_HEADER,
    ...b.sizes.flatMap((x) => [loadRow(x.list), loadRow(x.page)]),
    "",
    "D1 execution time per statement (meta.duration), 21 sequential calls without load, median (min), ms:",
    "",
    "| size | catalog lookup | page | total (count) |",
    "| --- | ---: | ---: | ---: |",
    ...b.sizes.map((x) => `| ${x.kind} | ${x.sqlMs.catalog} (${x.sqlMsMin.catalog}) | ${x.sqlMs.page} (${x.sqlMsMin.page}) | ${x.sqlMs.count} (${x.sqlMsMin.count}) |`),
    "",
    `Ratio 100k/10k, page + total (as runListQuery), mean latency: **${b.ratio.list}** (target <= ${b.target}: ${verdict(b.ratio.list <= b.target)}).`,
    `Ratio 100k/10k, page statement alone, mean latency: **${b.ratio.page}** (${verdict(b.ratio.page <= b.target)}).`,
    `Ratio 100k/10k of D1 execution time without load, median (min): page ${b.ratio.sqlPage} (${b.ratio.sqlPageMin}), total ${b.ratio.sqlCount} (${b.ratio.sqlCountMin}).`,
    "",
    "Query plan of the page statement (100k):",
    "",
    "```",
    ...b.sizes[b.sizes.length - 1].plan,
    "```",
    "",
    "Query plan of the total:",
    "",
    "```",
    ...b.sizes[b.sizes.length - 1].countPlan,
    "```",
    "",
    "### Startup",
    "",
    `- \`wrangler check startup\`: **${s.profile.cpuMs} ms** CPU (least of ${s.profile.cpuMsRuns.length} runs: ${s.profile.cpuMsRuns.join(", ")} ms); that run: ${s.profile.samples} samples (~${s.profile.sampleIntervalMs} ms interval) over ${s.profile.wallMs} ms; hottest: ${s.profile.hottest.map((h) => `${h.name} ${h.ms} ms`).join(", ")}.`,
    `- Bundle: ${s.bundle.entryKiB} KiB entry module, ${s.bundle.modules} module(s); WASM modules shipped: ${s.bundle.wasmModules.length ? s.bundle.wasmModules.join(", ") : "none"}.`,
    `- WASM instantiated during startup (probe): **${s.wasm.atStartup}**; WASM or instantiate frames in the startup profile: ${s.profile.wasmFrames.length ? s.profile.wasmFrames.join("; ") : "none"};` +
      ` self time in the WASM libraries' JS glue at startup: ${s.profile.wasmGlue.length ? s.profile.wasmGlue.map((g) => `${g.name} ${g.ms} ms`).join(", ") : "none sampled"}.`,
    `- After startup, POST /PropertyDefinitions with a valueExpression (HTTP ${s.wasm.afterExpression.status}) instantiated WASM ${s.wasm.afterExpression.instantiations} time(s)` +
      (s.wasm.afterExpression.instantiations > 0 ? " in the request: QuickJS loads lazily." : ": the sandbox did not run, so the lazy-loading check is not conclusive yet."),
  ];
  return lines.join("\n");
}
