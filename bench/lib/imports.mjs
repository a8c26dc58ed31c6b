// Spreadsheet imports (issue 37): BENCH_IMPORT_ROWS (100,000) deviations from a CSV and from an XLSX,
// each uploaded (POST /Files) and committed (POST /Imports), timed from the POST to the import's end
// (rows per second), with the isolate's JS heap sampled over the inspector while it runs (its peak of
// the samples: V8's used heap plus ArrayBuffer backing stores) and /health's latency meanwhile.
//
// The import runs as it deploys: its own Durable Object (ImportRunner) in the same workerd, one step (a
// chunk of 100 rows) per alarm; the EVENTS queue carries the deviations' created events meanwhile, as it would.
//
// Env: BENCH_IMPORT_ROWS (100000), BENCH_IMPORT_FORMATS (csv,xlsx), BENCH_IMPORT_KIND (deviations; or
// readings: a thickness survey over 10 channels, a channel's readings together, one a minute),
// BENCH_IMPORT_INSPECTOR_PORT (9329; another port when another bench holds it).
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { strToU8, zipSync } from "fflate";
import { appWorkerOptions, benchAppBindings, benchMiniflareBase, LOOPBACK } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { isolateHeap } from "../image-measure.mjs";
import { round } from "./load.mjs";

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const FORMATS = (process.env.BENCH_IMPORT_FORMATS ?? "csv,xlsx").split(",");
const KIND = process.env.BENCH_IMPORT_KIND ?? "deviations";
const INSPECTOR_PORT = Number(process.env.BENCH_IMPORT_INSPECTOR_PORT ?? 9329);
/** Readings: the channels of the survey and the first reading's time. */
const READING_CHANNELS = 10;
const READINGS_FROM = Date.UTC(2020, 0, 1);

const escapeXml = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function rowsOf(format, channelNumbers) {
  if (KIND === "readings") {
    const rows = [["channelNumber", "timestamp", "value"]];
    const per = Math.ceil(ROWS / channelNumbers.length);
    for (let i = 0; i < ROWS; i++) {
      const at = new Date(READINGS_FROM + (i % per) * 60_000).toISOString();
      rows.push([String(channelNumbers[Math.floor(i / per)]), at, (20 - (i % per) / per).toFixed(4)]);
    }
    return rows;
  }
  const rows = [["referenceId", "description", "status", "risk.id"]];
  for (let i = 0; i < ROWS; i++)
    rows.push([`BENCH-${format}-${i}`, `Corrosion found at location ${i} during the turnaround`, "new", `R-${i % 50}`]);
  return rows;
}

function csvOf(rows) {
  return Buffer.from(`${rows.map((r) => r.join(",")).join("\r\n")}\r\n`);
}

/** An XLSX as Excel lays it out: shared strings, after the sheet. */
function xlsxOf(rows) {
  const strings = [];
  const index = new Map();
  const col = (c) => String.fromCharCode(65 + c);
  const sheet = rows
    .map((row, r) => {
      const cells = row.map((cell, c) => {
        if (!index.has(cell)) {
          index.set(cell, strings.length);
          strings.push(cell);
        }
        return `<c r="${col(c)}${r + 1}" t="s"><v>${index.get(cell)}</v></c>`;
      });
      return `<row r="${r + 1}">${cells.join("")}</row>`;
    })
    .join("");
  return Buffer.from(
    zipSync({
      "[Content_Types].xml": strToU8('<?xml version="1.0"?><Types/>'),
      "xl/workbook.xml": strToU8('<?xml version="1.0"?><workbook><sheets><sheet name="Register" sheetId="1"/></sheets></workbook>'),
      "xl/worksheets/sheet1.xml": strToU8(`<?xml version="1.0"?><worksheet><sheetData>${sheet}</sheetData></worksheet>`),
      "xl/sharedStrings.xml": strToU8(`<?xml version="1.0"?><sst>${strings.map((s) => `<si><t>${escapeXml(s)}</t></si>`).join("")}</sst>`),
    }),
  );
}

async function request(url, { method = "GET", token, json, body, headers = {} } = {}) {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json ? { "content-type": "application/json" } : {}), connection: "close", ...headers },
    body: json ? JSON.stringify(json) : body,
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${url}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

export async function runImportSection({ root, benchDir, appModules, credentials, step }) {
  const stateDir = join(benchDir, "import-state");
  const app = appWorkerOptions(root);
  const mf = new Miniflare({
    ...benchMiniflareBase(stateDir),
    inspectorPort: INSPECTOR_PORT,
    workers: [
      {
        ...app,
        name: "app",
        modulesRoot: join(appModules[0].path, ".."),
        modules: appModules,
        bindings: benchAppBindings(app, credentials, { LOG_LEVEL: "error" }),
        unsafeDirectSockets: [{ host: LOOPBACK, port: 0 }],
        unsafeInspectorProxy: true,
      },
    ],
  });
  const results = { kind: KIND, rows: ROWS, formats: {} };
  try {
    await mf.ready;
    await applyMigrations(await mf.getD1Database("DB", "app"), root);
    const url = await mf.unsafeGetDirectURL("app");
    const token = credentials.token;
    await request(new URL("/DataTypes", url), {
      method: "POST",
      token,
      json: { id: "bench-import", name: "Bench import", allowedExtensions: ["csv", "xlsx"] },
    });
    const channelNumbers = [];
    if (KIND === "readings") {
      const asset = (json) => request(new URL("/Assets", url), { method: "POST", token, json });
      const plant = await asset({ kind: "plant", name: "Bench plant" });
      const system = await asset({ kind: "mainSystem", name: "Bench system", parentId: plant.id });
      const equipment = await asset({ kind: "equipment", name: "Bench vessel", parentId: system.id });
      for (let i = 0; i < READING_CHANNELS; i++) {
        const json = { name: `bench ${i}`, assetId: equipment.id, channelTypeId: "00000000-0000-4000-8000-0000000c0101" };
        channelNumbers.push((await request(new URL("/Channels", url), { method: "POST", token, json })).channelNumber);
      }
    }
    for (const format of FORMATS) {
      const rows = rowsOf(format, channelNumbers);
      const bytes = format === "csv" ? csvOf(rows) : xlsxOf(rows);
      step(`import: ${ROWS} ${KIND} from ${format} (${round(bytes.length / 1024 / 1024, 1)} MiB)`);
      const form = new FormData();
      form.append("DataTypeId", "bench-import");
      form.append("File", new Blob([bytes]), `bench.${format}`);
      const file = await request(new URL("/Files", url), { method: "POST", token, body: form });
      const heap = [];
      const health = [];
      const started = Date.now();
      const created = await request(new URL("/Imports", url), { method: "POST", token, json: { kind: KIND, fileId: file.id } });
      const postMs = Date.now() - started;
      let state;
      let lastProcessed = -1;
      let stillSince = Date.now();
      const worker = await mf.getWorker("app");
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        state = await request(new URL(`/Imports/${created.id}`, url), { token });
        const h0 = Date.now();
        await fetch(new URL("/health", url));
        health.push(Date.now() - h0);
        try {
          heap.push(await isolateHeap(INSPECTOR_PORT));
        } catch {
          // the inspector did not answer this time
        }
        if (state.status === "completed" || state.status === "failed") break;
        // The minute cron (which Miniflare does not fire by itself) pokes the runner of an import whose alarm was lost.
        if (state.processed !== lastProcessed) [lastProcessed, stillSince] = [state.processed, Date.now()];
        else if (Date.now() - stillSince > 35_000) {
          await worker.scheduled({ cron: "* * * * *", scheduledTime: new Date() });
          stillSince = Date.now();
          results.cronResumes = (results.cronResumes ?? 0) + 1;
        }
        if (health.length % 30 === 0) step(`  ${state.status}: ${state.processed} of ${state.total ?? "?"} rows`);
      }
      const seconds = (Date.now() - started) / 1000;
      const sorted = [...health].sort((a, b) => a - b);
      results.formats[format] = {
        fileMiB: round(bytes.length / 1024 / 1024, 2),
        status: state.status,
        created: state.created,
        failed: state.failed,
        postMs,
        seconds: round(seconds, 1),
        rowsPerSecond: round(state.created / seconds, 1),
        peakHeapMiB: Math.max(...heap.map((h) => h.heapMiB)),
        peakArrayBuffersMiB: Math.max(...heap.map((h) => h.arrayBuffersMiB)),
        heapSamples: heap.length,
        healthMs: { median: sorted[Math.floor(sorted.length / 2)], max: sorted.at(-1), samples: sorted.length },
      };
      step(`  ${JSON.stringify(results.formats[format])}`);
    }
  } finally {
    await mf.dispose();
  }
  return results;
}

export function importSummary(result, record) {
  const lines = [
    `\`${record.command}\` (${result.rows} rows per file; ${record.machine?.cpus ?? "?"} CPUs):`,
    "",
    "| file | size | POST /Imports | to the end | rows/s | peak isolate heap (sampled) | ArrayBuffers | /health median / max |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const [format, f] of Object.entries(result.formats)) {
    const cells = [format, `${f.fileMiB} MiB`, `${f.postMs} ms`, `${f.seconds} s`, f.rowsPerSecond, `${f.peakHeapMiB} MiB`];
    lines.push(`| ${[...cells, `${f.peakArrayBuffersMiB} MiB`, `${f.healthMs.median} / ${f.healthMs.max} ms`].join(" | ")} |`);
  }
  return lines.join("\n");
}
