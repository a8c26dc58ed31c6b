// The plan past one database (issue 22, docs/scale.md): what one stored entity costs in D1 and in a
// search index's Durable Object, and how fast D1 takes writes here.
//
// In its own Miniflare with a fresh persistence folder (.bench/scale-state, removed at the end; never
// the developers' .wrangler/state), through the real Worker and its write paths:
// 1. Creates BENCH_SCALE_N (1,000) of each kind over HTTP, 8 at a time: deviations with five property
//    values and an asset reference, activities with ten inputs with values, work items, file rows
//    (POST /Files of a 1 KiB CSV; the bytes are in R2), and measures the D1 file before and after
//    each kind with SQLite's dbstat (bench/lib/scale-dbstat.py, Python's sqlite3 reading the file
//    read-only): whole pages per table with its indexes, so bytes per entity are what the file grows
//    by, B-tree slack included. The outbox rows each write adds are counted apart (they are pruned).
// 2. The deviations' search documents: the deviations index's Durable Object SQLite (docs + FTS5),
//    once the events have indexed all of them.
// 3. Write rate: POST /Deviations (one D1 batch each) for BENCH_SCALE_SECONDS (15) at 1 and at 10
//    connections; deviations per second and the D1 rows written per second.
// Writes .bench/scale-results.json and prints the tables for docs/scale.md.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { round } from "./load.mjs";

const N = Number(process.env.BENCH_SCALE_N ?? 1000);
const SECONDS = Number(process.env.BENCH_SCALE_SECONDS ?? 15);
const CONCURRENCY = 8;
/** The standard indices (migration 0007) this section reads. */
const SEARCH_INDICES = {
  risks: "00000000-0000-4000-8000-000000000001",
  deviations: "00000000-0000-4000-8000-000000000002",
  workItems: "00000000-0000-4000-8000-000000000006",
  activities: "00000000-0000-4000-8000-00000000000a",
  numberInputs: "00000000-0000-4000-8000-00000000000c",
  textInputs: "00000000-0000-4000-8000-00000000000d",
};
const GB = 1e9;
const here = dirname(fileURLToPath(import.meta.url));

export function dbstat(file) {
  const out = spawnSync("python3", [join(here, "scale-dbstat.py"), file], { encoding: "utf8" });
  if (out.status !== 0) throw new Error(`dbstat of ${file} failed (python3 with sqlite3 is needed): ${out.stderr}`);
  return JSON.parse(out.stdout);
}

/** The SQLite files under `dir` (Miniflare keeps each D1 database and Durable Object in one). */
export function sqliteFiles(dir) {
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => f.endsWith(".sqlite") && statSync(f).isFile());
}

function delta(before, after) {
  const tables = {};
  for (const [name, a] of Object.entries(after.tables)) {
    const b = before.tables[name] ?? { bytes: 0, payload: 0, rows: 0 };
    const bytes = a.bytes - b.bytes;
    const rows = (a.rows ?? 0) - (b.rows ?? 0);
    if (bytes !== 0 || rows !== 0) tables[name] = { bytes, payload: a.payload - b.payload, rows };
  }
  return { fileBytes: (after.pageCount - after.freePages - before.pageCount + before.freePages) * after.pageSize, tables };
}

/** D1's write rate with nothing else around it: its own Miniflare and database (removed after). */
async function d1WriteRate(benchDir, seconds) {
  const persist = join(benchDir, "d1-write-state");
  rmSync(persist, { recursive: true, force: true });
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(here, "..", "d1-write-worker.js"),
    compatibilityDate: "2025-01-01",
    d1Databases: ["DB"],
    d1Persist: persist,
  });
  try {
    const result = {};
    for (const [label, batch] of [
      ["single", 1],
      ["batch50", 50],
    ]) {
      const { rows, seconds: took } = await (await mf.dispatchFetch(`http://probe/?seconds=${seconds}&batch=${batch}`)).json();
      result[label] = { rowsPerSecond: round(rows / took, 0), callsPerSecond: round(rows / batch / took, 1) };
    }
    return result;
  } finally {
    await mf.dispose().catch(() => undefined);
    rmSync(persist, { recursive: true, force: true });
  }
}

export async function runScaleSection({ root, benchDir, appModules, credentials, step }) {
  const started = Date.now();
  const loadBefore = loadavg()
    .map((x) => round(x))
    .join(" ");
  const stateDir = join(benchDir, "scale-state");
  const { mf, url, db, worker } = await startAppMiniflare({ root, stateDir, appModules, credentials });
  const headers = { authorization: `Bearer ${credentials.token}`, "content-type": "application/json" };
  const call = async (path, { method = "GET", body, raw, type } = {}) => {
    const response = await fetch(new URL(path, url), {
      method,
      // A fresh connection each time (bench/lib/upload.mjs: undici reusing one workerd closed as idle fails).
      headers: {
        connection: "close",
        ...(raw ? { authorization: headers.authorization, ...(type ? { "content-type": type } : {}) } : headers),
      },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    }).catch((error) => {
      throw new Error(`${method} ${path}: ${error.message}: ${error.cause?.message ?? error.cause ?? "no cause"}`, { cause: error });
    });
    const text = await response.text();
    if (response.status < 200 || response.status > 299)
      throw new Error(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 400)}`);
    return text ? JSON.parse(text) : undefined;
  };
  /** Runs `make(i)` for i < count, CONCURRENCY at a time. */
  const many = async (count, make) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) await make(next++);
      }),
    );
  };
  try {
    await applyMigrations(db, root);
    const [d1File] = sqliteFiles(join(stateDir, "d1"));
    if (!d1File) throw new Error("no D1 SQLite file under the state folder");

    step(`scale: setting up (asset tree, 5 deviation properties, an activity template with 10 inputs, a data type)`);
    const plant = await call("/Assets", { method: "POST", body: { kind: "plant", name: "North plant", parentId: null } });
    const system = await call("/Assets", { method: "POST", body: { kind: "mainSystem", name: "Feed water", parentId: plant.id } });
    const pumps = [];
    for (let i = 0; i < 20; i++)
      pumps.push(await call("/Assets", { method: "POST", body: { kind: "equipment", name: `P-${100 + i}`, parentId: system.id } }));
    const definitions = [
      { name: "zone", format: "text", value: (i) => `zone-${i % 12}` },
      { name: "severity", format: "integer", unit: "metre", value: (i) => (i % 5) + 1 },
      { name: "wallLoss", format: "decimal", unit: "metre", value: (i) => round(0.5 + (i % 40) / 10, 1) },
      { name: "foundAt", format: "date", value: (i) => new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString() },
      { name: "insulated", format: "boolean", value: (i) => i % 2 === 0 },
    ];
    const definitionIds = [];
    for (const d of definitions)
      definitionIds.push(
        (
          await call("/PropertyDefinitions", {
            method: "POST",
            body: { name: d.name, format: d.format, ...(d.unit ? { unit: d.unit } : {}), applicationRule: "Deviation" },
          })
        ).id,
      );
    const deviationType = await call("/DeviationTypes", {
      method: "POST",
      body: { name: "Corrosion", icon: { name: "corrosion", color: "#E53935" }, propertyDefinitions: definitionIds.map((id) => ({ id })) },
    });
    const inputNames = [
      "thickness1",
      "thickness2",
      "thickness3",
      "thickness4",
      "coatingIntact",
      "temperature",
      "pressure",
      "remark",
      "photoTaken",
      "inspector",
    ];
    const formats = ["decimal", "decimal", "decimal", "decimal", "boolean", "decimal", "decimal", "text", "boolean", "text"];
    const template = await call("/ActivityTemplates", {
      method: "POST",
      body: {
        displayName: "Measure wall thickness",
        description: "Ultrasonic thickness at the four marked points.",
        inputTemplates: inputNames.map((name, i) => ({ name, displayName: name, format: formats[i], required: false, order: i + 1 })),
      },
    });
    const inputValue = (format, i, k) =>
      format === "decimal"
        ? round(7 + ((i * 7 + k) % 30) / 10, 1)
        : format === "boolean"
          ? (i + k) % 2 === 0
          : `reading ${i}-${k} by inspector ${i % 17}`;
    await call("/DataTypes", { method: "POST", body: { id: "scale-readings", name: "Readings", allowedExtensions: ["csv"] } });
    const csv = Buffer.from(
      Array.from({ length: 32 }, (_, r) => `P-${r},${(7 + r / 10).toFixed(2)},2026-11-2${r % 10}T08:00:00Z\n`)
        .join("")
        .padEnd(1024, "#"),
    );

    const kinds = [
      {
        name: "deviation (5 properties, asset reference)",
        key: "deviation",
        make: (i) =>
          call("/Deviations", {
            method: "POST",
            body: {
              description:
                `Corrosion under insulation on the discharge flange of pump P-${100 + (i % 20)}; wall loss estimated at ` +
                `${(i % 30) / 10} mm (round ${i}).`,
              status: "new",
              typeId: deviationType.id,
              assetReference: { mainSystem: { id: system.id }, equipment: { id: pumps[i % 20].id } },
              properties: definitions.map((d) => ({ name: d.name, value: d.value(i) })),
            },
          }),
      },
      {
        name: "activity (10 inputs with values)",
        key: "activity",
        make: (i) =>
          call("/Activities", {
            method: "POST",
            body: {
              basedOn: { id: template.id },
              displayName: `Measure P-${100 + (i % 20)}`,
              inputs: template.inputTemplates.map((t, k) => ({ id: t.id, value: inputValue(formats[k], i, k) })),
            },
          }),
      },
      {
        name: "work item (2 tags, 1 designation)",
        key: "workItem",
        make: (i) =>
          call("/WorkItems", {
            method: "POST",
            body: {
              displayName: `Follow up CUI on P-${100 + (i % 20)} #${i}`,
              referenceId: `WI-${i}`,
              dueDate: "2026-12-01T08:00:00Z",
              tags: ["pump", "corrosion"],
              designations: [{ id: pumps[i % 20].id }],
            },
          }),
      },
      {
        name: "file row (POST /Files, 1 KiB CSV in R2)",
        key: "file",
        make: (i) => {
          const form = new FormData();
          form.append("DataTypeId", "scale-readings");
          form.append("File", new Blob([csv]), `readings-${i}.csv`);
          return call("/Files", { method: "POST", raw: form });
        },
      },
    ];

    const perKind = [];
    for (const kind of kinds) {
      step(`scale: ${N} × ${kind.name}`);
      await kind.make(9_999_999); // one first, so the delta has no first-page effects of a new table
      const before = dbstat(d1File);
      const t = Date.now();
      await many(N, kind.make);
      const seconds = (Date.now() - t) / 1000;
      const after = dbstat(d1File);
      const d = delta(before, after);
      const outbox = d.tables.outbox ?? { bytes: 0, rows: 0, payload: 0 };
      const entityBytes = Object.entries(d.tables)
        .filter(([name]) => name !== "outbox" && name !== "processed_events")
        .reduce((sum, [, x]) => sum + x.bytes, 0);
      const row = {
        key: kind.key,
        name: kind.name,
        count: N,
        seconds: round(seconds, 1),
        perSecond: round(N / seconds, 1),
        bytesPerEntity: Math.round(entityBytes / N),
        outboxBytesPerEntity: Math.round(outbox.bytes / N),
        outboxRowsPerEntity: round(outbox.rows / N, 2),
        rowsPerEntity: round(
          Object.entries(d.tables)
            .filter(([name]) => name !== "outbox" && name !== "processed_events")
            .reduce((sum, [, x]) => sum + x.rows, 0) / N,
          2,
        ),
        tables: Object.fromEntries(
          Object.entries(d.tables).map(([name, x]) => [
            name,
            { bytesPerEntity: Math.round(x.bytes / N), rowsPerEntity: round(x.rows / N, 2), payloadPerEntity: Math.round(x.payload / N) },
          ]),
        ),
      };
      perKind.push(row);
      console.log(
        `  ${row.bytesPerEntity} B per entity (+ ${row.outboxBytesPerEntity} B of outbox), ${row.rowsPerEntity} rows; ` +
          `${row.perSecond} per second at ${CONCURRENCY} connections`,
      );
    }

    step("scale: search documents (events -> queue -> one SearchIndex Durable Object per index)");
    // Each standard index lives in its own object's SQLite file, named by the object's id.
    const namespace = await mf.getDurableObjectNamespace("SEARCH", "app");
    const indexFile = (indexId) => join(stateDir, "do", "app-SearchIndex", `${namespace.idFromName(indexId).toString()}.sqlite`);
    const sumTables = (stat, prefix) =>
      Object.entries(stat.tables)
        .filter(([name]) => name.startsWith(prefix))
        .reduce((sum, [, x]) => sum + x.bytes, 0);
    const docRows = (stat) =>
      Object.entries(stat.tables)
        .filter(([name]) => name.startsWith("docs"))
        .reduce((sum, [, x]) => sum + (x.rows ?? 0), 0);
    // An index no entity feeds (risks): what an index's tables cost empty, taken off every figure.
    await call(`/Indices/${SEARCH_INDICES.risks}/Search`, { method: "POST", body: { text: "pump" } });
    const empty = dbstat(indexFile(SEARCH_INDICES.risks));
    const measureIndex = (indexId) => {
      const stat = dbstat(indexFile(indexId));
      const documents = docRows(stat);
      const docs = sumTables(stat, "docs") - sumTables(empty, "docs");
      const fts = sumTables(stat, "fts") - sumTables(empty, "fts");
      return {
        documents,
        docsBytesPerDocument: Math.round(docs / documents),
        ftsBytesPerDocument: Math.round(fts / documents),
        bytesPerDocument: Math.round((docs + fts) / documents),
        fileBytes: stat.pageCount * stat.pageSize,
      };
    };
    // An activity's 10 inputs: 6 decimals in the number-inputs index, 2 texts and 2 booleans in the text-inputs one.
    const expected = { deviations: N + 1, workItems: N + 1, activities: N + 1, numberInputs: (N + 1) * 6, textInputs: (N + 1) * 4 };
    const deadline = Date.now() + 300_000;
    let search;
    for (;;) {
      const got = Object.fromEntries(
        Object.keys(expected).map((name) => [
          name,
          existsSync(indexFile(SEARCH_INDICES[name])) ? docRows(dbstat(indexFile(SEARCH_INDICES[name]))) : 0,
        ]),
      );
      if (Object.keys(expected).every((name) => got[name] >= expected[name])) {
        search = Object.fromEntries(Object.keys(expected).map((name) => [name, measureIndex(SEARCH_INDICES[name])]));
        break;
      }
      if (Date.now() > deadline)
        throw new Error(
          `the indices did not receive every document within 5 minutes: ${JSON.stringify(got)} of ${JSON.stringify(expected)}`,
        );
      // The cron relays what the waitUntil relay left.
      await worker.scheduled({ scheduledTime: new Date(), cron: "* * * * *" }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
    // What one entity costs in search: a deviation or a work item one document; an activity one
    // document in the activities index and one per input in the input indices.
    const perActivity = (name) => (search[name].documents / (N + 1)) * search[name].bytesPerDocument;
    search.perEntity = {
      deviation: search.deviations.bytesPerDocument,
      workItem: search.workItems.bytesPerDocument,
      activity: Math.round(search.activities.bytesPerDocument + perActivity("numberInputs") + perActivity("textInputs")),
    };
    for (const [name, x] of Object.entries(search).filter(([name]) => name !== "perEntity")) {
      console.log(
        `  ${name}: ${x.documents} documents, ${x.bytesPerDocument} B each (docs ${x.docsBytesPerDocument} + FTS5 ` +
          `${x.ftsBytesPerDocument})`,
      );
    }

    step(`scale: write rate, POST /Deviations for ${SECONDS} s at 1 and at 10 connections`);
    const deviationKind = kinds[0];
    const rate = [];
    for (const connections of [1, 10]) {
      let made = 0;
      let next = 100_000 * connections;
      const until = Date.now() + SECONDS * 1000;
      const t = Date.now();
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (Date.now() < until) {
            await deviationKind.make(next++);
            made++;
          }
        }),
      );
      const seconds = (Date.now() - t) / 1000;
      const rowsPerDeviation = perKind[0].rowsPerEntity + perKind[0].outboxRowsPerEntity;
      rate.push({
        connections,
        deviations: made,
        seconds: round(seconds, 1),
        perSecond: round(made / seconds, 1),
        rowsPerSecond: round((made * rowsPerDeviation) / seconds, 0),
      });
      console.log(
        `  ${connections} connection(s): ${round(made / seconds, 1)} deviations/s ` +
          `(${round((made * rowsPerDeviation) / seconds, 0)} rows/s)`,
      );
    }

    step(
      `scale: D1 alone, ${SECONDS} s each: single-row INSERTs one per call, then batches of 50 (bench/d1-write-worker.js, inside workerd)`,
    );
    const d1Alone = await d1WriteRate(benchDir, SECONDS);
    for (const [label, x] of Object.entries(d1Alone)) console.log(`  ${label}: ${x.rowsPerSecond} rows/s (${x.callsPerSecond} calls/s)`);

    const final = dbstat(d1File);
    const results = {
      finishedAt: new Date().toISOString(),
      command: "npm run bench -- --only scale",
      seconds: round((Date.now() - started) / 1000, 1),
      count: N,
      concurrency: CONCURRENCY,
      pageSize: final.pageSize,
      d1FileBytes: final.pageCount * final.pageSize,
      kinds: perKind,
      search,
      rate,
      d1Alone,
      // What the outbox and the consumer's dedup table hold at the end (every write above, nothing pruned).
      totals: Object.fromEntries(["outbox", "processed_events"].map((name) => [name, final.tables[name] ?? null])),
      loadAverage: {
        before: loadBefore,
        after: loadavg()
          .map((x) => round(x))
          .join(" "),
      },
    };
    writeFileSync(join(benchDir, "scale-results.json"), `${JSON.stringify(results, null, 2)}\n`);
    step("scale done; .bench/scale-results.json written. Tables for docs/scale.md:\n");
    console.log(scaleMarkdown(results));
    return results;
  } finally {
    await mf.dispose().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const millions = (n) => (n >= 1e9 ? `${round(n / 1e9, 1)} billion` : `${round(n / 1e6, 1)} million`);

export function scaleMarkdown(r) {
  const searchOf = {
    deviation: r.search.perEntity.deviation,
    workItem: r.search.perEntity.workItem,
    activity: r.search.perEntity.activity,
  };
  return [
    `Run ${r.finishedAt} (\`${r.command}\`), ${r.count} of each kind, ${r.concurrency} at a time; page size ${r.pageSize} B.`,
    "",
    "| entity | D1 bytes each | rows | in 10 GB of D1 | outbox bytes (events) | search bytes (index DOs) |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...r.kinds.map(
      (k) =>
        `| ${k.name} | ${k.bytesPerEntity} | ${k.rowsPerEntity} | ${millions((10 * GB) / k.bytesPerEntity)} | ` +
        `${k.outboxBytesPerEntity} (${k.outboxRowsPerEntity}) | ${searchOf[k.key] ?? "-"} |`,
    ),
    "",
    "| search index (one Durable Object each) | documents | bytes per document | docs + FTS5 | in 10 GB |",
    "| --- | ---: | ---: | --- | ---: |",
    ...Object.entries(r.search)
      .filter(([name]) => name !== "perEntity")
      .map(
        ([name, x]) =>
          `| ${name} | ${x.documents} | ${x.bytesPerDocument} | ${x.docsBytesPerDocument} + ${x.ftsBytesPerDocument} | ` +
          `${millions((10 * GB) / x.bytesPerDocument)} |`,
      ),
    "",
    "| write rate (POST /Deviations, one D1 batch each) | deviations/s | D1 rows/s |",
    "| --- | ---: | ---: |",
    ...r.rate.map((x) => `| ${x.connections} connection(s), ${x.seconds} s | ${x.perSecond} | ${x.rowsPerSecond} |`),
    "",
    `Outbox at the end: ${r.totals.outbox?.rows} events in ${r.totals.outbox?.bytes} B ` +
      `(${Math.round(r.totals.outbox?.bytes / r.totals.outbox?.rows)} B each); processed_events: ` +
      `${r.totals.processed_events?.rows} rows in ${r.totals.processed_events?.bytes} B.`,
    "",
    `D1 alone (bench/d1-write-worker.js: 400-byte rows, one index, inside workerd): ` +
      `${r.d1Alone.single.rowsPerSecond} single-row INSERTs/s one per call; ${r.d1Alone.batch50.rowsPerSecond} rows/s ` +
      `in batches of 50 (${r.d1Alone.batch50.callsPerSecond} batches/s). Load average before/after: ` +
      `${r.loadAverage.before} / ${r.loadAverage.after}.`,
  ].join("\n");
}
