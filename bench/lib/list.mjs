// Bench B: the list query engine over 10,000 and 100,000 entities (bench/engine-worker.ts).
//
// 1. Query shapes, one at a time without load: for each shape and size, D1's own execution time
//    (meta.duration) of every statement, in the plan the engine chooses and in the lists plan (the
//    engine's only shape before the adaptive plans), and a check that both return the same page.
// 2. The bench B query under load (autocannon, alternating rounds): the page as a list route runs
//    it (capped counts, reused by the isolate for a minute, then the page), the same with the counts
//    run on every request, the page plus the total (includeTotal=true), and the page forced to the
//    lists plan; each 100k/10k ratio of mean latency.
import { measureRounds, median, round, roundRatio } from "./load.mjs";

export const BENCH_B = { properties: "severity ge 4 and area eq 'north'", order: "properties.inspectedAt desc", take: "50" };

/** The shapes of part 1: the bench B query first, then its neighbours and the plans' weak cases. */
export const SHAPES = [
  { name: "bench B: two unselective terms (20%, 15%), date desc", query: BENCH_B },
  { name: "the same, date asc", query: { ...BENCH_B, order: "properties.inspectedAt asc" } },
  { name: "the same, skip 1000", query: { ...BENCH_B, skip: "1000" } },
  { name: "one unique term and an unselective one", query: { ...BENCH_B, properties: "tag eq 'PV-000123' and severity ge 2" } },
  { name: "no filter, date desc", query: { order: "properties.inspectedAt desc", take: "50" } },
  {
    name: "two terms (40%, 45%), text desc, take 100",
    query: { properties: "severity ge 3 and wallThickness lt 13", order: "properties.tag desc", take: "100" },
  },
  { name: "anti-correlated: 15% and 20%, none match both", query: { ...BENCH_B, properties: "area eq 'north' and area eq 'south'" } },
  {
    name: "ordered by a 5-value property (severity desc)",
    query: { properties: "area ne 'north' and wallThickness ge 5", order: "properties.severity desc", take: "50" },
  },
  { name: "ordered by a canonical field (no walk)", query: { ...BENCH_B, order: "referenceId" } },
];

const RUNS = 9;

async function getJson(url) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
  return body;
}

/** RUNS sequential /plan calls; the median (and least) D1 time of each statement. */
async function timeShape(engine, kind, query, plan) {
  const url = new URL(`/${kind}/plan?${new URLSearchParams({ ...query, ...(plan ? { plan } : {}) })}`, engine);
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await getJson(url));
  const last = runs.at(-1);
  const pick = (f) => round(median(runs.map((r) => f(r.sqlMs))), 2);
  return {
    plan: last.plan,
    counts: last.counts,
    returned: last.returned,
    total: last.total,
    ids: last.ids,
    sql: last.sql,
    explain: last.explain,
    ms: { catalog: pick((t) => t.catalog), estimates: pick((t) => t.estimates), page: pick((t) => t.page), count: pick((t) => t.count) },
    pageMinMs: round(Math.min(...runs.map((r) => r.sqlMs.page)), 2),
  };
}

export async function benchList(urls, sizes, step) {
  step("bench B, part 1: query shapes one at a time (D1 time per statement, chosen plan vs lists plan)");
  const shapes = [];
  for (const shape of SHAPES) {
    const row = { name: shape.name, query: shape.query, sizes: {} };
    for (const { kind } of sizes) {
      const chosen = await timeShape(urls.engine, kind, shape.query);
      const lists = await timeShape(urls.engine, kind, shape.query, "lists");
      if (JSON.stringify(chosen.ids) !== JSON.stringify(lists.ids))
        throw new Error(`bench B: ${shape.name} (${kind}): the ${chosen.plan} plan and the lists plan returned different pages`);
      row.sizes[kind] = { chosen, lists };
    }
    const [small, large] = sizes.map(({ kind }) => row.sizes[kind]);
    row.ratio = round(large.chosen.ms.page / Math.max(small.chosen.ms.page, 0.5), 2);
    console.log(
      `  ${shape.name}: ${sizes
        .map(
          ({ kind }) =>
            `${kind} ${row.sizes[kind].chosen.plan} ${row.sizes[kind].chosen.ms.page} ms (lists ${row.sizes[kind].lists.ms.page} ms)`,
        )
        .join(", ")}`,
    );
    shapes.push(row);
  }

  step("bench B, part 2: the bench B query under load");
  const query = new URLSearchParams(BENCH_B).toString();
  const target = (kind, label, extra = "") => ({
    label: `${kind} ${label}`,
    url: new URL(`/${kind}/entities?${query}${extra}`, urls.engine),
  });
  const [small, large] = sizes;
  const variants = [
    ["page", "page", ""],
    ["uncached", "page, counted every time", "&cache=off"],
    ["total", "page + total", "&includeTotal=true"],
    ["lists", "lists plan (before)", "&plan=lists"],
  ];
  const figures = await measureRounds(
    variants.flatMap(([, label, extra]) => [target(small.kind, label, extra), target(large.kind, label, extra)]),
  );
  const latency = (x) => x.latencyMs.mean;
  const load = Object.fromEntries(
    variants.map(([key], i) => [
      key,
      { small: figures[2 * i], large: figures[2 * i + 1], ratio: roundRatio(figures[2 * i + 1], figures[2 * i], latency) },
    ]),
  );
  console.log(`  ratio 100k/10k mean latency: ${variants.map(([key, label]) => `${label} ${load[key].ratio}`).join(", ")} (target <= 2)`);
  return { query: BENCH_B, shapes, load, target: 2, sizes };
}

const verdict = (ok) => (ok ? "met" : "**NOT met**");

function loadRow(figures) {
  const l = figures.latencyMs;
  return `| ${figures.label} | ${figures.reqPerSec} | ${l.p50} | ${l.p99} | ${l.mean} | ${figures.requests} |`;
}

/** The bench B part of the markdown summary. */
export function listSummary(b, statistics) {
  const [small, large] = b.sizes.map(({ kind }) => kind);
  const bench = b.shapes[0];
  const queryText = Object.entries(b.query)
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  return [
    "### B. Two-term property filter + order, 10,000 vs 100,000 entities",
    "",
    `\`GET /{kind}/entities?${queryText}\` (matching: ` +
      `${b.sizes.map(({ kind, entities }) => `${bench.sizes[kind].chosen.total} of ${entities}`).join(", ")}; SQLite ` +
      `statistics: ${statistics}).`,
    "",
    "| target | req/s | p50 ms | p99 ms | mean ms | requests |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...["page", "uncached", "total", "lists"].flatMap((k) => [loadRow(b.load[k].small), loadRow(b.load[k].large)]),
    "",
    `Ratio 100k/10k of mean latency, page (what a list returns by default): **${b.load.page.ratio}** (target <= ` +
      `${b.target}: ${verdict(b.load.page.ratio <= b.target)});`,
    `with the filter terms counted on every request (no reuse of the isolate's counts): ` +
      `**${b.load.uncached.ratio}** (${verdict(b.load.uncached.ratio <= b.target)}).`,
    `With the total (includeTotal=true): **${b.load.total.ratio}** (${verdict(b.load.total.ratio <= b.target)}). ` +
      `The lists plan (the engine before): **${b.load.lists.ratio}**.`,
    "",
    `Query shapes one at a time (no load): D1 execution time (meta.duration, median of ${RUNS}) of the page ` +
      `statement in the plan the engine chose, and of the`,
    "lists plan for the same page; the capped counts before the page (one batch; their own time in the last " +
      "columns); both plans returned the same page.",
    "",
    `| shape | plan ${small} / ${large} | page ms ${small} | page ms ${large} | ratio | lists ms ${small} | lists ` +
      `ms ${large} | counts ${small} / ${large} | counts ms |`,
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ...b.shapes.map((row) => {
      const s = row.sizes[small];
      const l = row.sizes[large];
      const counts = (x) => (x.chosen.counts.length ? x.chosen.counts.join("+") : "-");
      return (
        `| ${row.name} | ${s.chosen.plan} / ${l.chosen.plan} | ${s.chosen.ms.page} | ${l.chosen.ms.page} | ${row.ratio} ` +
        `| ${s.lists.ms.page} | ${l.lists.ms.page} | ${counts(s)} / ${counts(l)} | ${s.chosen.ms.estimates} / ` +
        `${l.chosen.ms.estimates} |`
      );
    }),
    "",
    `Total (count) of the bench B query: ${small} ${bench.sizes[small].chosen.ms.count} ms, ${large} ` +
      `${bench.sizes[large].chosen.ms.count} ms.`,
    "",
    `Plan of the bench B page at ${large} (${bench.sizes[large].chosen.plan}):`,
    "",
    "```",
    ...bench.sizes[large].chosen.explain,
    "```",
  ].join("\n");
}
