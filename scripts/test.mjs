// npm test: every check CI runs (type check, lint, the host checks, the bundle check, the vitest suite,
// the smoke run), one console line per stage with its time and a summary at the end. What each stage
// prints (the test runner's banners, workerd's socket notices, the error lines of tests that fail on
// purpose) goes to its log file in .dev/test/; a stage that fails shows its last meaningful lines and
// points to its log. The stages run in three steps: the four quick ones side by side (each is one
// process on one core; on this 2-core machine, 82 to 87 s instead of about 115 s in a row), then the
// vitest suite, then the smoke run (both use every core on their own). It stops after the first step
// with a failure.
//
//   npm test                          every stage
//   npm test -- --only lint,smoke     some of them (by the names below), for a quicker local look
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "./dev-env.mjs";

/** The stages; those of one `step` run at once, the steps one after another. */
const STAGES = [
  { name: "typecheck", title: "type check (tsc)", script: "typecheck", step: 1 },
  { name: "lint", title: "lint (eslint, prettier)", script: "lint", step: 1 },
  { name: "host", title: "host checks (node --test)", script: "test:host", step: 1 },
  { name: "bundle", title: "bundle check", script: "test:bundle", step: 1 },
  { name: "vitest", title: "vitest suite (workerd)", script: "test:vitest", step: 2 },
  { name: "smoke", title: "smoke run (README walkthroughs too)", script: "test:smoke", step: 3 },
];

/** Lines that say nothing about a failure: kept in the log, left out of what the console shows. */
const NOISE = [
  /Using (secrets|vars) defined in \.dev\.vars/,
  /WebSocket peer disconnected/,
  /^\s*$/,
  /Sourcemap for .* points to missing source files/,
  /^\s*(stdout|stderr) \|/,
  /"level":"(error|warn|info|debug)"/,
  /Called \.text\(\) on an HTTP body which does not appear to be text/,
];

const { values } = parseArgs({ options: { only: { type: "string" } } });
const chosen = values.only ? values.only.split(",").map((s) => s.trim()) : STAGES.map((s) => s.name);
const unknown = chosen.filter((name) => !STAGES.some((s) => s.name === name));
if (unknown.length > 0) {
  console.error(`test: no stage ${unknown.join(", ")}; the stages are ${STAGES.map((s) => s.name).join(", ")}.`);
  process.exit(2);
}

const LOG_DIR = join(ROOT, ".dev", "test");
mkdirSync(LOG_DIR, { recursive: true });
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const plain = (text) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");

/** Counts of tests a stage's output reports (vitest, node --test, the smoke run), when it reports any. */
function countsOf(output) {
  const text = plain(output);
  if (/Test Files/.test(text) && /Tests\s+\d+/.test(text)) {
    const failed = /Tests\s+(\d+) failed/.exec(text)?.[1];
    const passed = /Tests\s+(?:\d+ failed \| )?(\d+) passed/.exec(text)?.[1];
    return { passed: Number(passed ?? 0), failed: Number(failed ?? 0) };
  }
  const node = /^# pass (\d+)$[\s\S]*?^# fail (\d+)$/m.exec(text);
  if (node) return { passed: Number(node[1]), failed: Number(node[2]) };
  const plainLine = [...text.matchAll(/^(\d+) passed, (\d+) failed/gm)].pop();
  if (plainLine) return { passed: Number(plainLine[1]), failed: Number(plainLine[2]) };
  return null;
}

function runStage(stage) {
  const logFile = join(LOG_DIR, `${stage.name}.log`);
  const log = createWriteStream(logFile);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "-s", stage.script], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, FORCE_COLOR: "0" },
    });
    let output = "";
    const keep = (chunk) => {
      log.write(chunk);
      output += chunk;
      if (output.length > 4_000_000) output = output.slice(-2_000_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("close", (code, signal) => {
      log.end();
      resolve({ ok: code === 0, code: code ?? signal, ms: Date.now() - started, output, logFile });
    });
  });
}

/** What the console shows of a failed stage: its failure lines (vitest's, the smoke run's), else its last lines, noise left out. */
function failureLines(output) {
  const lines = plain(output)
    .split("\n")
    .filter((line) => !NOISE.some((pattern) => pattern.test(line)));
  const marked = lines.filter((line) => /^\s*(FAIL|×|✗|not ok|AssertionError|Error:|error TS|\s+\d+:\d+\s+error)/.test(line));
  return (marked.length > 0 ? marked : lines).slice(-40);
}

const total = { passed: 0, failed: 0 };
const started = Date.now();
const planned = STAGES.filter((s) => chosen.includes(s.name));
const failed = [];
console.log(`npm test: ${chosen.length} stage(s); each stage's output goes to ${relative(ROOT, LOG_DIR)}/<stage>.log`);
for (const step of [...new Set(planned.map((s) => s.step))]) {
  const stages = planned.filter((s) => s.step === step);
  // On a terminal, what runs now; the result lines replace it (CI's log gets the result lines only).
  if (process.stdout.isTTY) process.stdout.write(`.... ${stages.map((s) => s.title).join(", ")}`);
  const results = await Promise.all(stages.map(runStage));
  if (process.stdout.isTTY) process.stdout.write("\r\x1b[K");
  for (const [i, stage] of stages.entries()) {
    const result = results[i];
    const counts = countsOf(result.output);
    if (counts) {
      total.passed += counts.passed;
      total.failed += counts.failed;
    } else if (result.ok) total.passed++;
    else total.failed++;
    const detail = counts ? `${counts.passed} passed, ${counts.failed} failed` : result.ok ? "ok" : `exit ${result.code}`;
    console.log(`${result.ok ? "ok  " : "FAIL"} ${stage.title.padEnd(38)} ${seconds(result.ms).padStart(8)}  ${detail}`);
    if (!result.ok) {
      failed.push(stage);
      console.log(
        failureLines(result.output)
          .map((line) => `     | ${line}`)
          .join("\n"),
      );
      console.log(`     the whole output: ${relative(ROOT, result.logFile)}`);
      if (counts && counts.failed === 0) total.failed++;
    }
  }
  if (failed.length > 0) break;
}
const skipped = failed.length > 0 ? planned.filter((s) => s.step > failed[0].step) : [];
if (skipped.length > 0) console.log(`not run after the failure: ${skipped.map((s) => s.name).join(", ")}`);
console.log(
  `npm test took ${seconds(Date.now() - started)}${failed.length > 0 ? `; failed at ${failed.map((s) => s.name).join(", ")}` : ""}`,
);
console.log(`${total.passed} passed, ${total.failed} failed`);
process.exit(failed.length > 0 ? 1 : 0);
