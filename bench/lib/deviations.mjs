// Bench B on the real route: GET /Deviations with a two-term property filter and an order by a
// property, over 10,000 and 100,000 deviations. Each size runs in its own Miniflare (own D1), so
// the two are loaded in alternating rounds like every other ratio here; deviations and their
// property values are generated inside SQLite (INSERT ... SELECT over a recursive CTE).
import { join } from "node:path";
import { buildEngineWorker, buildWorkerBundle } from "./build.mjs";
import { applyMigrations, BENCH_PROPERTIES, seedBenchDefinitions, valueStatements } from "./db.mjs";
import { measureRounds, round, roundRatio } from "./load.mjs";
import { startWorkers } from "./miniflare.mjs";
import { writeProbe } from "./startup.mjs";

export const DEVIATION_QUERY = { properties: "severity ge 4 and area eq 'north'", order: "properties.inspectedAt desc", take: "50" };
const SIZES = [
  { label: "10k", deviations: 10_000 },
  { label: "100k", deviations: 100_000 },
];
const GENERAL = "00000000-0000-4000-8000-000000000001";
const UUID_SQL =
  "lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||" +
  " substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))";

/**
 * `count` deviations of type General (which links the bench definitions, so pages show their
 * values), 50 owners, and ~5 property values each with the distributions of bench B (db.mjs).
 */
async function seedDeviations(db, count) {
  await seedBenchDefinitions(db);
  await db.batch(
    BENCH_PROPERTIES.map((p, i) =>
      db
        .prepare("INSERT INTO entity_type_properties (entity_type_id, property_definition_id, position) VALUES (?1, ?2, ?3)")
        .bind(GENERAL, p.id, i),
    ),
  );
  // valueStatements reads the ids from `{kind}_entities`; the deviations are inserted from the same rows.
  await db.prepare("CREATE TABLE deviation_entities (id TEXT PRIMARY KEY, reference_id TEXT NOT NULL, created_at TEXT NOT NULL)").run();
  await db
    .prepare(
      `INSERT INTO deviation_entities (id, reference_id, created_at)
       WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?1)
       SELECT ${UUID_SQL}, printf('DEV-B%07d', n), strftime('%Y-%m-%dT%H:%M:%S.000Z', 1609459200 + n * 600, 'unixepoch') FROM seq`,
    )
    .bind(count)
    .run();
  await db
    .prepare(
      `INSERT INTO deviations (id, reference_id, description, status, type_id, owner_id, owner_name, etag, created_at, updated_at)
       SELECT id, reference_id, 'Bench deviation', 'new', ?1, 'owner-' || (rowid % 50), 'Owner ' || (rowid % 50), 'bench',
       created_at, created_at FROM deviation_entities`,
    )
    .bind(GENERAL)
    .run();
  for (const statement of valueStatements("deviation")) await db.prepare(statement).run();
  const matching = await db
    .prepare(
      `SELECT count(*) AS n FROM property_values s JOIN property_values a ON a.entity_kind = 'deviation' AND a.entity_id =
      s.entity_id AND a.name = 'area'
        WHERE s.entity_kind = 'deviation' AND s.name = 'severity' AND s.value_num >= 4 AND a.value_text = 'north'`,
    )
    .first();
  return matching.n;
}

/** `npm run bench -- --only deviations`. */
export async function runDeviationSection({ root, benchDir, credentials, step }) {
  step("building the Worker bundle (wrangler deploy --dry-run) and the engine worker (esbuild)");
  const appModules = buildWorkerBundle(root, join(benchDir, "build"));
  const engineScript = await buildEngineWorker(root, join(benchDir, "engine"));
  const probe = writeProbe(benchDir, appModules);
  const started = [];
  try {
    for (const size of SIZES) {
      step(`starting Miniflare for ${size.label} and seeding ${size.deviations} deviations`);
      const workers = await startWorkers({
        root,
        stateDir: join(benchDir, `state-deviations-${size.label}`),
        appModules,
        minimalScript: join(root, "bench", "minimal-worker.js"),
        engineScript,
        jwksJson: credentials.jwksJson,
        probe,
      });
      started.push(workers);
      await applyMigrations(workers.db, root);
      const t = Date.now();
      size.matching = await seedDeviations(workers.db, size.deviations);
      console.log(`  ${size.label}: seeded in ${round((Date.now() - t) / 1000, 1)} s; ${size.matching} match the filter`);
      size.url = new URL(`/Deviations?${new URLSearchParams(DEVIATION_QUERY)}`, workers.urls.app);
      const check = await fetch(size.url, { headers: { authorization: `Bearer ${credentials.token}` } });
      const body = await check.json();
      if (check.status !== 200 || body.length !== 50)
        throw new Error(`GET /Deviations (${size.label}): HTTP ${check.status}, ${JSON.stringify(body).slice(0, 300)}`);
    }
    step("GET /Deviations under load, 10k and 100k in alternating rounds");
    const headers = { authorization: `Bearer ${credentials.token}` };
    const [small, large] = await measureRounds(SIZES.map((s) => ({ label: `${s.label} deviations`, url: s.url, headers })));
    const ratio = roundRatio(large, small, (x) => x.latencyMs.mean);
    console.log(`  ratio 100k/10k mean latency: ${ratio} (target <= 2)`);
    return {
      query: DEVIATION_QUERY,
      sizes: SIZES.map(({ label, deviations, matching }) => ({ label, deviations, matching })),
      small,
      large,
      ratio,
      target: 2,
    };
  } finally {
    for (const { mf } of started) await mf.dispose().catch(() => undefined);
  }
}

export function deviationSummary(result, command) {
  const row = (f) => `| ${f.label} | ${f.reqPerSec} | ${f.latencyMs.p50} | ${f.latencyMs.p99} | ${f.latencyMs.mean} | ${f.requests} |`;
  return [
    "### B on the real route: GET /Deviations, 10,000 vs 100,000 deviations",
    "",
    `\`GET /Deviations?${Object.entries(result.query)
      .map(([k, v]) => `${k}=${v}`)
      .join("&")}\` through the whole app (auth, versioning, hydration of each`,
    `page: type, designations, linked properties, relationships, work item links), matching ` +
      `${result.sizes.map((s) => `${s.matching} of ${s.deviations}`).join(" and ")}. Command: \`${command}\`.`,
    "",
    "| target | req/s | p50 ms | p99 ms | mean ms | requests |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    row(result.small),
    row(result.large),
    "",
    `Ratio 100k/10k of mean latency: **${result.ratio}** (target <= ${result.target}: ` +
      `${result.ratio <= result.target ? "met" : "**NOT met**"}).`,
  ].join("\n");
}
