// The audit trail's price (issue 34, docs/benchmarks.md "The audit trail"): one write route with and
// without the trail, in one run, and the bytes one record takes in D1.
//
// Two bundles of the same build: the real one, and a copy whose audit statement builders
// (src/audit/store.ts) return a statement that writes nothing (`SELECT 1 WHERE 0`, so the batch keeps
// its length): the difference is the records' writing alone. Each round starts the bundle in its own
// Miniflare with a fresh persistence folder, creates BENCH_AUDIT_N (300) deviations, then sends each
// one back changed (GET, then PUT /Deviations: the original client's way), one request at a time, and
// times the PUTs (their records read the state before from the create's record). Rounds alternate
// (with, without, with, ...) so drift on a shared machine falls on both. Then SQLite's dbstat on the
// D1 file of a "with" round: the pages audit_records and its indexes take, per record.
import { cpSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { dbstat, sqliteFiles } from "./scale.mjs";
import { median, round } from "./load.mjs";

const N = Number(process.env.BENCH_AUDIT_N ?? 300);
const ROUNDS = Number(process.env.BENCH_AUDIT_ROUNDS ?? 3);
const BUILDERS = ["auditRecordStatement", "auditForRowsStatement", "auditManyStatement"];

/** The bundle with the audit builders writing nothing (a copy beside the real one). */
function withoutTrail(appModules, benchDir) {
  const source = join(appModules[0].path, "..");
  const target = join(benchDir, "build-without-audit");
  rmSync(target, { recursive: true, force: true });
  cpSync(source, target, { recursive: true });
  const entry = join(target, "index.js");
  let text = readFileSync(entry, "utf8");
  for (const name of BUILDERS) {
    const at = new RegExp(`function ${name}\\((db)[^)]*\\)\\s*\\{`);
    if (!at.test(text)) throw new Error(`the bundle has no function ${name}: bench/lib/audit.mjs must follow src/audit/store.ts`);
    text = text.replace(at, (m) => `${m}\n  return db.prepare("SELECT 1 WHERE 0");`);
  }
  writeFileSync(entry, text);
  return appModules.map((m) => ({ ...m, path: join(target, m.path.slice(source.length + 1)) }));
}

async function oneRound({ root, benchDir, appModules, credentials, label, measureBytes }) {
  const stateDir = join(benchDir, `audit-state-${label}`);
  rmSync(stateDir, { recursive: true, force: true });
  const { mf, url, db } = await startAppMiniflare({ root, stateDir, appModules, credentials });
  await applyMigrations(db, root);
  const headers = { authorization: `Bearer ${credentials.token}`, "content-type": "application/json", connection: "close" };
  const call = async (method, path, body) => {
    const response = await fetch(new URL(path, url), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (response.status > 299) throw new Error(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  try {
    const ids = [];
    for (let i = 0; i < N; i++) ids.push((await call("POST", "/Deviations", { description: `corrosion ${i}` })).id);
    const times = [];
    for (const [i, id] of ids.entries()) {
      const read = await call("GET", `/Deviations/${id}`);
      const started = performance.now();
      await call("PUT", "/Deviations", { ...read, description: `corrosion ${i}, re-measured` });
      times.push(performance.now() - started);
    }
    const result = { label, medianMs: round(median(times), 3), meanMs: round(times.reduce((a, b) => a + b, 0) / times.length, 3) };
    if (measureBytes) {
      await mf.dispose();
      const file = sqliteFiles(stateDir).sort((a, b) => statSync(b).size - statSync(a).size)[0];
      const stats = dbstat(file);
      const audit = stats.tables.audit_records;
      const outbox = stats.tables.outbox;
      result.bytes = {
        records: audit.rows,
        bytesPerRecord: round(audit.bytes / audit.rows, 0),
        payloadPerRecord: round(audit.payload / audit.rows, 0),
        outboxBytesPerEvent: outbox ? round(outbox.bytes / outbox.rows, 0) : null,
        deviationBytesPerRow: stats.tables.deviations ? round(stats.tables.deviations.bytes / stats.tables.deviations.rows, 0) : null,
      };
    }
    return result;
  } finally {
    await mf.dispose().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function runAuditSection({ root, benchDir, appModules, credentials, step }) {
  const variants = { with: appModules, without: withoutTrail(appModules, benchDir) };
  const rounds = { with: [], without: [] };
  let bytes;
  for (let r = 0; r < ROUNDS; r++) {
    for (const label of r % 2 === 0 ? ["with", "without"] : ["without", "with"]) {
      step(`audit round ${r + 1}/${ROUNDS}: PUT /Deviations ${label} the trail (${N} deviations)`);
      const measureBytes = label === "with" && !bytes;
      const result = await oneRound({ root, benchDir, appModules: variants[label], credentials, label, measureBytes });
      rounds[label].push(result.medianMs);
      bytes ??= result.bytes;
    }
  }
  const withMs = median(rounds.with);
  const withoutMs = median(rounds.without);
  const summary = {
    n: N,
    rounds: ROUNDS,
    route: "PUT /Deviations (after its GET), one at a time",
    medianMs: { with: round(withMs, 3), without: round(withoutMs, 3) },
    perRound: rounds,
    ratio: round(withMs / withoutMs, 3),
    target: 1.1,
    bytes,
  };
  return summary;
}

export function auditSummary(r, record) {
  return [
    `| route | without the trail (median ms) | with (median ms) | ratio (target ≤ ${r.target}) |`,
    "|---|---|---|---|",
    `| ${r.route} | ${r.medianMs.without} | ${r.medianMs.with} | ${r.ratio} |`,
    "",
    `Bytes per audit record in D1 (audit_records and its indexes, whole pages): ${r.bytes?.bytesPerRecord} ` +
      `(content ${r.bytes?.payloadPerRecord}); outbox row ${r.bytes?.outboxBytesPerEvent}; deviation row ${r.bytes?.deviationBytesPerRow}.`,
    `(${record.command}, ${r.n} deviations × ${r.rounds} rounds each way)`,
  ].join("\n");
}
