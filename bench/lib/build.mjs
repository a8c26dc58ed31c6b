// Builds what the benchmark runs: the real Worker bundle (exactly what `wrangler deploy` would upload)
// and the small engine worker that hosts the list query engine over bench tables.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { build } from "esbuild";
import { bundleModules } from "../../scripts/bundle-modules.mjs";

/** Runs a command in the project root, failing loudly (its output is shown on failure only). */
export function run(root, command, args, { quiet = true } = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
    stdio: quiet ? "pipe" : "inherit",
    timeout: 180_000,
  });
  if (result.status !== 0) {
    if (quiet) process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`);
    throw new Error(`${command} ${args.join(" ")} failed (exit ${result.status ?? result.signal})`);
  }
  return `${result.stdout ?? ""}${result.stderr ?? ""}`;
}

/** `wrangler deploy --dry-run --outdir`: the deployable bundle, with its .wasm and other modules beside it. */
export function buildWorkerBundle(root, outdir) {
  rmSync(outdir, { recursive: true, force: true });
  run(root, "node", ["scripts/copy-assets.mjs"]);
  run(root, "npx", ["wrangler", "deploy", "--dry-run", "--outdir", relative(root, outdir)]);
  return bundleModules(outdir);
}

/** Bundles bench/engine-worker.ts (and the real src/pkg/query engine it imports) with esbuild. */
export async function buildEngineWorker(root, outdir) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, "engine-worker.js");
  await build({
    entryPoints: [join(root, "bench", "engine-worker.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    logLevel: "warning",
  });
  return outfile;
}
