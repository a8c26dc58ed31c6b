// The modules of a Worker bundle built by `wrangler deploy --dry-run --outdir`, as Miniflare takes them:
// what the local server (scripts/local-server.mjs) serves and the benches run.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The bundle's modules in the order Miniflare wants them (entry first). Listed explicitly rather than
 * discovered from imports so a dynamically imported chunk or a .wasm file is never missed.
 */
export function bundleModules(outdir, entry = "index.js") {
  const files = readdirSync(outdir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(outdir, join(d.parentPath ?? d.path, d.name)))
    .filter((f) => !f.endsWith(".map") && f !== "README.md");
  const typeOf = (file) => {
    if (/\.(m?js)$/.test(file)) return "ESModule";
    if (file.endsWith(".wasm")) return "CompiledWasm";
    if (/\.(txt|html|sql)$/.test(file)) return "Text";
    return "Data";
  };
  const ordered = [entry, ...files.filter((f) => f !== entry).sort()];
  return ordered.map((file) => ({ type: typeOf(file), path: join(outdir, file) }));
}
