// Checks the API reference page (/docs) in a real browser, as a newcomer uses it: how soon it draws,
// that it asks for nothing it cannot get (no console error, no failed request: the favicon too),
// that "Try it out" on GET /Deviations starts with empty filters (examples shown, not filled in),
// and that "Try it out" on POST /Deviations, executed twice with the example body, creates two
// deviations (201, 201: no example Idempotency-Key that makes the second try a 422).
//
//   node scripts/check-docs-page.mjs                 starts its own server (temporary state), like the smoke run
//   node scripts/check-docs-page.mjs --base URL      uses a running server (npm start), e.g. http://127.0.0.1:8787
//   --runs N                                         loads the page N times (fresh profile each) and reports the median
//
// It needs Chromium (Debian: `apt-get install -y chromium`; or CHROMIUM=/path/to/chrome) and drives it
// with playwright-core. Prints one line per check and ends with `N passed, N failed`.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { freePort, prepareLocal, ROOT, startDevServer, stopProcessGroup, waitForHealth } from "./dev-env.mjs";

const { values } = parseArgs({ options: { base: { type: "string" }, runs: { type: "string", default: "3" } } });
const runs = Math.max(1, Number(values.runs) || 1);
const CHROMIUM = process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find(existsSync);
const counts = { passed: 0, failed: 0 };
const cleanups = [];

async function check(name, body) {
  const t0 = Date.now();
  try {
    const note = await body();
    counts.passed++;
    console.log(`ok   ${name}${note ? ` (${note})` : ""} [${Date.now() - t0} ms]`);
  } catch (error) {
    counts.failed++;
    console.log(`FAIL ${name}: ${error.message.split("\n")[0]}`);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

function mintToken() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts", "token.mjs")], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("exit", (code) => (code === 0 ? resolve(out.trim().split("\n").pop()) : reject(new Error(`token.mjs exited ${code}`))));
  });
}

/** A server of our own on a free port with a temporary state folder, as the smoke run starts one. */
async function ownServer() {
  const persistTo = mkdtempSync(join(tmpdir(), "integrity-edge-docs-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  await prepareLocal({ persistTo, quiet: true, vars: { RATE_LIMITS: "off" } });
  const server = startDevServer({
    port,
    persistTo,
    detached: true,
    stdio: ["ignore", "ignore", "ignore"],
    watch: false,
  });
  cleanups.push(async () => {
    await stopProcessGroup(server);
    rmSync(persistTo, { recursive: true, force: true });
  });
  await waitForHealth(base, { timeoutMs: 180_000, child: server });
  return base;
}

/** A fresh headless Chromium with its own empty profile (no cache, no stored authorisation). */
async function freshBrowser() {
  const profile = mkdtempSync(join(tmpdir(), "integrity-edge-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Loads /docs in a fresh browser; returns the page's paint times in ms from navigation start: first
 * paint, first contentful paint, and the first operation drawn (the spinner gone: the page is usable;
 * Swagger UI draws the rest of the operations as they are scrolled to).
 */
async function loadPage(base, { keepOpen = false } = {}) {
  const browser = await freshBrowser();
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const problems = [];
  page.on("console", (message) => message.type() === "error" && problems.push(`console: ${message.text()}`));
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("response", (response) => response.status() >= 400 && problems.push(`${response.status()} ${response.url()}`));
  page.on("requestfailed", (request) => problems.push(`failed ${request.url()}: ${request.failure()?.errorText}`));
  await page.goto(`${base}/docs`, { waitUntil: "commit", timeout: 120_000 });
  await page.locator(".opblock").first().waitFor({ state: "visible", timeout: 120_000 });
  const firstOperation = await page.evaluate(() => Math.round(performance.now()));
  const times = await page.evaluate((firstOperation) => {
    const paint = Object.fromEntries(performance.getEntriesByType("paint").map((e) => [e.name, Math.round(e.startTime)]));
    return { firstPaint: paint["first-paint"], firstContentfulPaint: paint["first-contentful-paint"], firstOperation };
  }, firstOperation);
  // The favicon is asked for after load; give it a moment to answer or fail.
  await page.waitForLoadState("load");
  await page.waitForTimeout(500);
  if (!keepOpen) await browser.close();
  return { times, problems, page, browser };
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];

/** Opens an operation's block (by its operationId anchor) and presses "Try it out". */
async function tryItOut(page, tag, operationId) {
  // The page's filter box keeps the tags whose name holds the text, as a reader finds an area.
  await page.locator("input.operation-filter-input").fill(tag);
  const block = page.locator(`#operations-${tag}-${operationId}`);
  await block.scrollIntoViewIfNeeded();
  await block.locator(".opblock-summary").first().click();
  await block.locator("button.try-out__btn").click();
  return block;
}

/**
 * Executes an open operation; returns the status of the request the page sent, once the page shows
 * that same status in its live response.
 */
async function execute(page, block, method, path) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === method && new URL(r.url()).pathname === path, { timeout: 30_000 }),
    block.locator("button.execute").click(),
  ]);
  const shown = block.locator(".live-responses-table tbody .response-col_status").first();
  await shown.filter({ hasText: String(response.status()) }).waitFor({ timeout: 10_000 });
  return response.status();
}

async function main() {
  if (!CHROMIUM) throw new Error("no Chromium found: apt-get install -y chromium, or set CHROMIUM=/path/to/chrome");
  const base = values.base ?? (await ownServer());
  console.log(`check-docs-page: ${base}/docs in ${CHROMIUM}, ${runs} load(s)`);
  const token = await mintToken();

  const loads = [];
  await check(`the page draws (median of ${runs} loads, each in a fresh profile)`, async () => {
    for (let i = 0; i < runs; i++) loads.push(await loadPage(base));
    const at = (key) => median(loads.map((l) => l.times[key] ?? NaN));
    return (
      `first paint ${at("firstPaint")} ms, first contentful paint ${at("firstContentfulPaint")} ms, first operation drawn ` +
      `${at("firstOperation")} ms; each (fp/fcp/operation): ` +
      loads.map(({ times: t }) => `${t.firstPaint}/${t.firstContentfulPaint}/${t.firstOperation}`).join(", ")
    );
  });

  await check("no console error and no failed request while it loads (favicon included)", async () => {
    const problems = [...new Set(loads.flatMap((l) => l.problems))];
    expect(problems.length === 0, problems.join("; "));
  });

  const { page, browser } = await loadPage(base, { keepOpen: true });
  cleanups.push(() => browser.close());

  await check("Authorize with a token from npm run token", async () => {
    await page.locator("button.authorize").first().click();
    await page.locator(".modal-ux input").first().fill(token);
    await page.locator(".modal-ux button.authorize").first().click();
    await page.locator(".modal-ux button.btn-done, .modal-ux button.close-modal").first().click();
  });

  await check("Try it out on GET /Deviations: no filter or id filled in, the examples shown; executed: 200", async () => {
    const block = await tryItOut(page, "Deviations", "listDeviations");
    const filled = await block
      .locator(".parameters input[type=text], .parameters textarea")
      .evaluateAll((inputs) => inputs.filter((i) => i.value !== "").map((i) => `${i.closest("tr")?.dataset.paramName}=${i.value}`));
    expect(filled.length === 0, `pre-filled: ${filled.join(", ")}`);
    const text = await block.locator(".parameters").innerText();
    expect(/Example/.test(text) && text.includes("new,active"), "the examples are not shown beside the parameters");
    const status = await execute(page, block, "GET", "/Deviations");
    expect(status === 200, `GET answered ${status}`);
  });

  await check("Try it out on POST /Deviations twice with the example body: 201 and 201", async () => {
    const block = await tryItOut(page, "Deviations", "createDeviation");
    const key = await block.locator('tr[data-param-name="Idempotency-Key"] input').inputValue();
    expect(key === "", `Idempotency-Key pre-filled with '${key}'`);
    const first = await execute(page, block, "POST", "/Deviations");
    const second = await execute(page, block, "POST", "/Deviations");
    expect(first === 201 && second === 201, `answered ${first} then ${second}`);
    return `${first}, ${second}`;
  });
}

main()
  .catch((error) => {
    counts.failed++;
    console.log(`FAIL check-docs-page: ${error.message}`);
  })
  .finally(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    console.log(`${counts.passed} passed, ${counts.failed} failed`);
    process.exit(counts.failed > 0 ? 1 : 0);
  });
