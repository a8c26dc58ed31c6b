// Bundle check: builds the Worker exactly as `wrangler deploy` would (--dry-run, nothing uploaded),
// then fails when
//   - the upload is larger than 3 MiB gzipped (the Workers Free plan's limit; paid plans allow 10 MiB),
//   - our own code (src/, durable-objects/) contains an eval( / new Function( call site or an alias of
//     the Function constructor: both throw on Workers, and vitest-pool-workers cannot catch them
//     because code generation is allowed there,
//   - the bundle or wrangler.toml names the local dev issuer or an inline JWKS (the local trust must
//     never reach a deployment), or wrangler.toml names the local container host (a deployment never
//     runs jobs on it: with no host configured, execution answers 501).
// Call sites inside libraries are listed with the library's name but do not fail the check: they are
// either guarded (zod's JIT checks `allowsEval` first, which is false on Workers) or on paths we do not
// call; the smoke run proves the paths we do call against the real runtime.
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { copyAssets, DEV_ISSUER, ROOT, runWrangler } from "./dev-env.mjs";

const LIMIT_GZIP = 3 * 1024 * 1024;
const OUT_DIR = join(ROOT, ".wrangler", "bundle");
const OWN_CODE = /^(src|durable-objects)\//;
// Code generation: a call of eval or the Function constructor (with or without `new`), and aliases
// such as zod's `const F = Function; new F(...)` that a plain `new Function(` search would miss.
const CODEGEN = [
  { name: "new Function(", pattern: /\bnew\s+Function\s*\(/ },
  { name: "Function(", pattern: /(?<![\w$.]|new\s+)Function\s*\(/ },
  { name: "eval(", pattern: /(?<![\w$.])eval\s*\(|\bglobalThis\s*\.\s*eval\s*\(|,\s*eval\s*\)\s*\(/ },
  { name: "alias of Function", pattern: /=\s*Function\s*[;,)]/ },
];
// What we know about the libraries that carry such call sites, for the report.
const KNOWN = {
  zod: "guarded: zod's JIT runs only when allowsEval() is true, and it is false on Workers",
  "@asteasolutions/zod-to-openapi": "document generation only",
  ajv: "ajv compile() generates code and throws on Workers: runtime-defined schemas use @cfworker/json-schema",
  re2js: "not code generation: the definition of its prefilter's method named eval (user patterns, src/pkg/regex.ts)",
};

function kib(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

const REGEX_AFTER = new Set([..."(,=:[!&|?{};+-*%<>~^"]);
const REGEX_AFTER_WORDS = /(?:^|[^\w$])(?:return|typeof|case|do|else|in|of|new|delete|void|throw|instanceof|yield|await)$/;

/**
 * Blanks out the contents of comments, strings, template literals and regex literals (newlines are
 * kept, so line numbers still match), leaving only code: source text that merely mentions `eval(`,
 * such as the QuickJS bootstrap program held in a template literal, is not a call site. Also returns,
 * per line, whether that line starts in code (where esbuild's `// path` markers are).
 */
function codeOnly(text) {
  const out = [];
  const lineStartsInCode = [true];
  const templateDepths = []; // for each open `${`: the brace depth at which it closes
  let depth = 0;
  let state = "code";
  let lastSignificant = "";
  const blank = (ch) => (ch === "\n" ? "\n" : " ");
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const next = text[i + 1];
    if (ch === "\n") lineStartsInCode.push(state === "code");
    switch (state) {
      case "code":
        if (ch === "/" && next === "/") state = "line-comment";
        else if (ch === "/" && next === "*") state = "block-comment";
        else if (ch === '"' || ch === "'") state = ch;
        else if (ch === "`") state = "template";
        else if (
          ch === "/" &&
          (lastSignificant === "" || REGEX_AFTER.has(lastSignificant) || REGEX_AFTER_WORDS.test(out.slice(-12).join("")))
        )
          state = "regex";
        else if (ch === "{") depth++;
        else if (ch === "}") {
          if (templateDepths.length > 0 && templateDepths[templateDepths.length - 1] === depth) {
            templateDepths.pop();
            state = "template";
            out.push(ch);
            continue;
          }
          depth--;
        }
        if (state === "code") {
          out.push(ch);
          if (!/\s/.test(ch)) lastSignificant = ch;
        } else {
          out.push(state === "line-comment" || state === "block-comment" ? " " : ch);
        }
        continue;
      case "line-comment":
        if (ch === "\n") state = "code";
        out.push(blank(ch));
        continue;
      case "block-comment":
        if (ch === "*" && next === "/") {
          out.push("  ");
          i++;
          state = "code";
        } else out.push(blank(ch));
        continue;
      case '"':
      case "'":
      case "regex":
        if (ch === "\\") {
          out.push(" ", blank(next ?? ""));
          i++;
          continue;
        }
        if (state === "regex" && ch === "[") state = "regex-class";
        else if ((state === "regex" && ch === "/") || ch === state || ch === "\n") {
          state = "code";
          lastSignificant = ch === "/" ? ")" : ch; // after a literal, a `/` is a division
          out.push(ch);
          continue;
        }
        out.push(blank(ch));
        continue;
      case "regex-class":
        if (ch === "\\") {
          out.push("  ");
          i++;
          continue;
        }
        if (ch === "]") state = "regex";
        out.push(blank(ch));
        continue;
      case "template":
        if (ch === "\\") {
          out.push(" ", blank(next ?? ""));
          i++;
        } else if (ch === "`") {
          state = "code";
          lastSignificant = ")";
          out.push(ch);
        } else if (ch === "$" && next === "{") {
          templateDepths.push(depth);
          state = "code";
          lastSignificant = "{";
          out.push("${");
          i++;
        } else out.push(blank(ch));
        continue;
    }
  }
  return { code: out.join(""), lineStartsInCode };
}

/** The package name for a bundle source path such as node_modules/@scope/pkg/dist/x.js. */
function packageOf(source) {
  const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  return match ? match[1] : source;
}

/** Finds code-generation call sites in an unminified esbuild bundle, attributed to their source file. */
function findCodegen(bundle) {
  const sites = [];
  let source = "(bundle prelude)";
  const lines = bundle.split("\n");
  const { code, lineStartsInCode } = codeOnly(bundle);
  const codeLines = code.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    // esbuild marks the start of each input file with a `// path` comment.
    const marker = lineStartsInCode[i] && /^\/\/ ((?:\.\.\/)*[\w@.\-/]+\.(?:[cm]?[jt]sx?|json))$/.exec(line);
    if (marker) {
      source = marker[1].replace(/^(\.\.\/)+/, "");
      continue;
    }
    for (const { name, pattern } of CODEGEN) {
      if (pattern.test(codeLines[i] ?? "")) sites.push({ source, line: i + 1, kind: name, text: line.trim().slice(0, 160) });
    }
  }
  return sites;
}

function main() {
  copyAssets();
  rmSync(OUT_DIR, { recursive: true, force: true });
  let output;
  try {
    output = runWrangler(["deploy", "--dry-run", "--outdir", OUT_DIR], { quiet: true });
  } catch (error) {
    console.error(`check-bundle: the build failed\n${error.message}`);
    process.exit(1);
  }
  const reported = /Total Upload:.*$/m.exec(`${output.stdout}\n${output.stderr}`)?.[0];

  const files = readdirSync(OUT_DIR).filter((f) => statSync(join(OUT_DIR, f)).isFile() && !f.endsWith(".map") && f !== "README.md");
  if (!files.includes("index.js")) {
    console.error(`check-bundle: no index.js in ${OUT_DIR} (found ${files.join(", ") || "nothing"})`);
    process.exit(1);
  }
  let raw = 0;
  let gzip = 0;
  const problems = [];
  console.log(`Bundle in ${relative(ROOT, OUT_DIR)}:`);
  for (const file of files.sort()) {
    const bytes = readFileSync(join(OUT_DIR, file));
    const zipped = gzipSync(bytes).byteLength;
    raw += bytes.byteLength;
    gzip += zipped;
    console.log(`  ${file.padEnd(48)} ${kib(bytes.byteLength).padStart(12)}  gzip ${kib(zipped).padStart(11)}`);
  }
  console.log(`  ${"total".padEnd(48)} ${kib(raw).padStart(12)}  gzip ${kib(gzip).padStart(11)}  (limit ${kib(LIMIT_GZIP)} gzip)`);
  if (reported) console.log(`  wrangler: ${reported}`);
  if (gzip > LIMIT_GZIP) problems.push(`the bundle is ${kib(gzip)} gzipped, above the ${kib(LIMIT_GZIP)} limit`);

  const bundle = readFileSync(join(OUT_DIR, "index.js"), "utf8");
  const sites = findCodegen(bundle);
  const ours = sites.filter((s) => OWN_CODE.test(s.source));
  const byPackage = new Map();
  for (const site of sites.filter((s) => !OWN_CODE.test(s.source))) {
    const pkg = packageOf(site.source);
    byPackage.set(pkg, [...(byPackage.get(pkg) ?? []), site]);
  }
  if (sites.length === 0) console.log("Code generation (eval / new Function): none in the bundle.");
  for (const [pkg, list] of byPackage) {
    console.log(`Code generation in ${pkg} (${list.length}): ${KNOWN[pkg] ?? "not called by our code paths; see the smoke run"}`);
    for (const s of list) console.log(`  index.js:${s.line} ${s.kind} in ${s.source}: ${s.text}`);
  }
  for (const s of ours) {
    problems.push(`${s.kind} in our code, ${s.source} (index.js:${s.line}): ${s.text} -- this throws on Workers; use the QuickJS sandbox`);
  }

  if (bundle.includes(DEV_ISSUER))
    problems.push(`the bundle contains the local dev issuer '${DEV_ISSUER}'; the local trust belongs only in .dev.vars`);
  const config = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  if (config.includes(DEV_ISSUER) || /^\s*AUTH_JWKS_JSON\s*=/m.test(config)) {
    problems.push("wrangler.toml names the local dev issuer or an inline AUTH_JWKS_JSON; those belong in .dev.vars (locally) or a secret");
  }
  if (/^\s*CONTAINER_HOST_KIND\s*=\s*["']local["']/im.test(config) || /^\s*LOCAL_CONTAINER_HOST_(URL|SECRET)\s*=/m.test(config)) {
    problems.push("wrangler.toml names the local container host; it belongs in .dev.vars (npm start writes it), never in a deployment");
  }
  if (/^\s*WEBHOOK_ALLOWED_TARGETS\s*=\s*["'][^"']+["']/m.test(config)) {
    problems.push(
      "wrangler.toml lets webhooks reach more than public https hosts (WEBHOOK_ALLOWED_TARGETS is not empty); local " +
        "receivers belong in .dev.vars (npm start writes it), never in a deployment",
    );
  }

  if (problems.length > 0) {
    for (const p of problems) console.error(`FAIL ${p}`);
    process.exit(1);
  }
  console.log("Bundle check passed.");
}

main();
