// The README's walkthroughs, run as a reader pastes them: every ```sh block that follows a
// `<!-- walkthrough: NAME -->` line, taken from README.md as it is (never a copy), in the README's order,
// in one bash shell, without `set -e` (a reader's shell has none: the README's own `api` helper stops a
// walkthrough at the first failed step). The smoke run calls runWalkthroughs twice on its server, so a
// README change that breaks a walkthrough, or one that cannot run twice, fails CI.
//
// By hand, against a running server (npm start):  node scripts/readme-walkthroughs.mjs [--only NAME]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { localBase, ROOT } from "./dev-env.mjs";

const MARK = /^<!--\s*walkthrough:\s*(.+?)\s*-->\s*$/;

/** The marked blocks of the markdown, in order: { name, code, line }. A mark not followed by an sh block is an error. */
export function extractWalkthroughs(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const mark = MARK.exec(lines[i]);
    if (!mark) continue;
    if (!/^```(sh|bash)\s*$/.test(lines[i + 1] ?? "")) {
      throw new Error(`README.md:${i + 1}: the walkthrough mark '${mark[1]}' is not followed by an sh block`);
    }
    const end = lines.findIndex((line, j) => j > i + 1 && /^```\s*$/.test(line));
    if (end < 0) throw new Error(`README.md:${i + 2}: the block of walkthrough '${mark[1]}' never ends`);
    blocks.push({ name: mark[1], code: lines.slice(i + 2, end).join("\n"), line: i + 2 });
  }
  return blocks;
}

/**
 * Runs the README's walkthroughs against `base` in one bash process (cwd: the checkout, PORT set to the
 * server's port) and calls `report(name, { ok, ms, output })` after each. A walkthrough fails when a
 * step failed (the README's api or get helpers mark it), when any command fails (an ERR trap, which a
 * reader does not have, so no failure goes unnoticed), or when it takes longer than `timeoutMs` (5 minutes: the
 * thousand-row import's commit, its fix and its repeat take one to three minutes under `wrangler dev` on a loaded machine).
 */
export async function runWalkthroughs({ base, report, only, timeoutMs = 300_000 }) {
  const blocks = extractWalkthroughs(readFileSync(join(ROOT, "README.md"), "utf8")).filter((b, i) => i === 0 || !only || b.name === only);
  const dir = mkdtempSync(join(tmpdir(), "integrity-edge-readme-"));
  const marker = `@@walkthrough-${Math.random().toString(36).slice(2)}`;
  const script = [
    "exec 2>&1",
    // Any failing command marks the walkthrough failed, as the README's helpers do for the steps.
    `trap 'echo "command failed (exit $?): $BASH_COMMAND"; touch "\${FAILED:-${join(dir, "failed")}}"' ERR`,
    ...blocks.flatMap((block, i) => [
      `# ---- README.md:${block.line}: ${block.name}`,
      block.code,
      `if [ -e "\${FAILED:-${join(dir, "failed")}}" ]; then echo "${marker} ${i} failed"; else echo "${marker} ${i} ok"; fi`,
    ]),
  ].join("\n");
  const file = join(dir, "walkthroughs.sh");
  writeFileSync(file, script);
  const port = new URL(base).port;
  const shell = spawn("bash", ["--noprofile", "--norc", file], {
    cwd: ROOT,
    env: { ...process.env, PORT: port, TMPDIR: dir },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let index = 0;
  let output = [];
  let started = Date.now();
  let pending = "";
  let timer;
  const results = [];
  const finishBlock = (ok, extra) => {
    const block = blocks[index];
    if (!block) return;
    if (extra) output.push(extra);
    const result = { name: block.name, ok, ms: Date.now() - started, output: output.join("\n") };
    results.push(result);
    report?.(block.name, result);
    index++;
    output = [];
    started = Date.now();
    armTimer();
  };
  const armTimer = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      finishBlock(false, `timed out after ${timeoutMs / 1000} s`);
      try {
        process.kill(-shell.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
  };
  armTimer();
  const onData = (chunk) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith(marker)) finishBlock(line.endsWith(" ok"));
      else output.push(line);
    }
  };
  shell.stdout.setEncoding("utf8").on("data", onData);
  shell.stderr.setEncoding("utf8").on("data", onData);
  await new Promise((resolve) => shell.on("close", resolve));
  clearTimeout(timer);
  if (pending) output.push(pending);
  while (index < blocks.length) finishBlock(false, "the shell ended before this walkthrough did");
  rmSync(dir, { recursive: true, force: true });
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
  const base = localBase();
  let failed = 0;
  await runWalkthroughs({
    base,
    only,
    report: (name, { ok, ms, output }) => {
      if (!ok) failed++;
      console.log(`${ok ? "ok  " : "FAIL"} README walkthrough: ${name} [${ms} ms]`);
      if (!ok || process.env.VERBOSE) console.log(output.replace(/^/gm, "    "));
    },
  });
  process.exit(failed > 0 ? 1 : 0);
}
