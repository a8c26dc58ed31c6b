/**
 * The plans of the list engine (src/pkg/query/plan.ts) on a generated list of 6,000 entities:
 * which plan a request gets, that every plan returns the lists plan's rows, and the index each
 * step of each plan uses (EXPLAIN QUERY PLAN). Run twice: without statistics, as D1 leaves a
 * database (plans.test.ts), and after ANALYZE (plans-analyzed.test.ts), because statistics change
 * SQLite's choices and the plans must not depend on having them.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  compileListQuery,
  defineList,
  planListQuery,
  runListQuery,
  type ListQueryInput,
  type PlanOptions,
  type PropertyInfo,
} from "../../src/pkg/query";

const db = env.DB;
const KIND = "planThing";
const ENTITIES = 6000;

const list = defineList({
  table: "plan_things",
  alias: "e",
  entityKind: KIND,
  idColumn: "id",
  fields: { referenceId: { column: "e.reference_id" } },
  searchColumns: ["e.reference_id"],
  defaultOrder: "referenceId asc",
});

const defs: PropertyInfo[] = [
  { name: "severity", format: "integer", isMultiselect: false },
  { name: "area", format: "text", isMultiselect: false },
  { name: "inspectedAt", format: "date", isMultiselect: false },
  { name: "tag", format: "text", isMultiselect: false },
  { name: "crew", format: "entity", isMultiselect: true },
];
const catalog = async (names: string[]) => new Map(defs.filter((d) => names.includes(d.name)).map((d) => [d.name, d]));

/**
 * Deterministic data, generated inside SQLite: severity 1..5 (80% >= 2), area one of 8 codes (12.5% each),
 * inspectedAt missing on 5% and otherwise shared by two entities (ties), tag unique, crew 0 to 2
 * owners (a multiselect).
 */
async function seed() {
  await db.exec("CREATE TABLE plan_things (id TEXT PRIMARY KEY, reference_id TEXT NOT NULL)");
  const numbers = `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${ENTITIES})`;
  const insert = "INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_text, value_num, value_json)";
  const id = "printf('00000000-0000-4000-8000-%012d', n)";
  await db.batch(
    [
      `INSERT INTO plan_things (id, reference_id) ${numbers} SELECT ${id}, printf('R-%05d', (n * 7919) % ${ENTITIES}) FROM seq`,
      `${insert} ${numbers} SELECT '${KIND}', ${id}, 'severity', 0, 'd1', NULL, 1 + n % 5, '0' FROM seq`,
      `${insert} ${numbers} SELECT '${KIND}', ${id}, 'area', 0, 'd2', CASE (n * 3) % 8 WHEN 0 THEN 'north' WHEN 1 ` +
        `THEN 'south' WHEN 2 THEN 'east'` +
        ` WHEN 3 THEN 'west' WHEN 4 THEN 'central' WHEN 5 THEN 'offshore' WHEN 6 THEN 'yard' ELSE 'tankfarm' END, NULL, '0' FROM seq`,
      `${insert} ${numbers} SELECT '${KIND}', ${id}, 'inspectedAt', 0, 'd3', NULL, 1.6e12 + ((n * 7919) % ` +
        `${ENTITIES / 2}) * 1000, '0' FROM seq WHERE n % 20 <> 0`,
      `${insert} ${numbers} SELECT '${KIND}', ${id}, 'tag', 0, 'd4', printf('T-%05d', n), NULL, '0' FROM seq`,
      `${insert} ${numbers} SELECT '${KIND}', ${id}, 'crew', 0, 'd5', 'u' || (n % 7), NULL, '0' FROM seq WHERE n % 4 <> 0`,
      `${insert} ${numbers} SELECT '${KIND}', ${id}, 'crew', 1, 'd5', 'u' || (n % 11), NULL, '0' FROM seq WHERE n % 4 = 1`,
    ].map((sql) => db.prepare(sql)),
  );
}

async function explain(statement: { sql: string; params: unknown[] }): Promise<string[]> {
  const { results } = await db
    .prepare(`EXPLAIN QUERY PLAN ${statement.sql}`)
    .bind(...statement.params)
    .all<{ detail: string }>();
  return results.map((r) => r.detail);
}

async function ids(input: ListQueryInput, options: PlanOptions = {}) {
  const result = await runListQuery<{ id: string }>(db, await compileListQuery(list, input, catalog, [], options));
  return { plan: result.plan, ids: result.items.map((row) => row.id) };
}

const WALK_FILTER = "severity ge 2 and area in ('north', 'south', 'east')";
const PROBES =
  "severity ge 2 and area eq 'north' and crew eq null or tag ne 'T-00001' and crew in ('u1', 'u2', 'u3', 'u4', " +
  "'u5', 'u6') and crew ne null";

export function planSuite({ analyze }: { analyze: boolean }) {
  beforeAll(async () => {
    await seed();
    if (analyze) await db.exec("ANALYZE");
    const stats = await db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'sqlite_stat1'").first<{ n: number }>();
    expect(stats?.n).toBe(analyze ? 1 : 0);
  });

  describe("the plan a request gets", () => {
    it.each<[string, ListQueryInput, string]>([
      [
        "two unselective terms, ordered by a property: walk",
        { properties: WALK_FILTER, order: "properties.inspectedAt desc", take: 50 },
        "walk",
      ],
      ["the same, ascending", { properties: WALK_FILTER, order: "properties.inspectedAt asc", take: 50 }, "walk"],
      [
        "ordered by a text property, then a canonical field",
        { properties: WALK_FILTER, order: "properties.tag desc, referenceId", take: 20 },
        "walk",
      ],
      ["no filter, ordered by a property: walk without counts", { order: "properties.inspectedAt desc", take: 50 }, "walk"],
      [
        "a term matching one row drives",
        { properties: "tag eq 'T-00042' and severity ge 2", order: "properties.inspectedAt desc" },
        "driven",
      ],
      ["one term of few rows: lists", { properties: "area eq 'yard'", order: "properties.inspectedAt desc" }, "lists"],
      [
        "a page too deep for the walk's window",
        { properties: WALK_FILTER, order: "properties.inspectedAt desc", skip: 400, take: 1000 },
        "lists",
      ],
      ["ordered by a canonical field: lists", { properties: WALK_FILTER, order: "referenceId", take: 50 }, "lists"],
      [
        "ids with a filter: the ids drive",
        {
          ids: ["03", "07", "08", "16"].map((n) => `00000000-0000-4000-8000-0000000000${n}`).join(","),
          properties: WALK_FILTER,
          order: "properties.inspectedAt",
        },
        "driven",
      ],
    ])("%s", async (_, input, plan) => {
      const chosen = await ids(input);
      expect(chosen.plan).toBe(plan);
      expect(chosen.ids.length).toBeGreaterThan(0);
      expect(chosen.ids).toEqual((await ids(input, { plan: "lists" })).ids);
    });

    it("falls back to the lists plan when the walk's window holds too few matches (anti-correlated terms)", async () => {
      const input = {
        properties: "severity ge 2 and severity le 1 or tag eq 'T-00020' and area ne 'north'",
        order: "properties.inspectedAt desc",
        take: 5,
      };
      const walked = await ids(input, { plan: "walk", walkWindow: 100 });
      expect(walked).toEqual({ plan: "walk", ids: (await ids(input, { plan: "lists" })).ids });
      expect(walked.ids).toEqual(["00000000-0000-4000-8000-000000000020"]);
    });

    it("reports the capped counts it chose by", async () => {
      const query = await compileListQuery(
        list,
        { properties: "tag eq 'T-00042' and severity ge 2", order: "properties.inspectedAt desc" },
        catalog,
      );
      expect(query.estimates).toHaveLength(2);
      const planned = await planListQuery(db, query);
      expect(planned.counts).toEqual([1, 4800]);
      expect(planned.plan).toBe("driven");
    });
  });

  it("reuses this isolate's counts for a minute, unless told not to", async () => {
    const input = { properties: "tag eq 'T-99999' and severity ge 2", order: "properties.inspectedAt desc" };
    const counts = async (options: PlanOptions = {}) =>
      (await planListQuery(db, await compileListQuery(list, input, catalog, [], options))).counts;
    expect(await counts()).toEqual([0, 4800]);
    await db
      .prepare(
        "INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_text, value_json) " +
          "VALUES (?1, 'not-listed', 'tag', 0, 'd4', 'T-99999', '0')",
      )
      .bind(KIND)
      .run();
    expect(await counts()).toEqual([0, 4800]);
    expect(await counts({ cacheEstimates: false })).toEqual([1, 4800]);
  });

  describe("EXPLAIN QUERY PLAN", () => {
    it("walks the order index, probes by key, reads the entity by id, and keeps the rest as lists", async () => {
      const query = await compileListQuery(
        list,
        { properties: PROBES, order: "properties.inspectedAt desc, referenceId", take: 10 },
        catalog,
        [],
        { plan: "walk" },
      );
      expect(query.plan).toBe("walk");
      const plan = await explain(query);
      const window = plan.slice(
        0,
        plan.findIndex((d) => d === "UNION ALL"),
      );
      // property_values pw is the outer loop (CROSS JOIN), read in order from its value index.
      const pw = window.findIndex((d) => /\bpw\b/.test(d));
      const e = window.findIndex((d) => /^SEARCH e /.test(d));
      expect(window[pw]).toMatch(/^SEARCH pw USING COVERING INDEX property_values_num_idx \(entity_kind=\? AND name=\? AND value_num>\?\)/);
      expect(window[e]).toMatch(/USING (COVERING )?INDEX sqlite_autoindex_plan_things_1 \(id=\?\)/);
      expect(pw).toBeLessThan(e);
      expect(window.some((d) => /USE TEMP B-TREE FOR ORDER BY/.test(d))).toBe(false);
      const probes = window.filter((d) => /\bpv\b/.test(d));
      // severity ge 2: key; area eq, tag ne: equality; crew eq null, crew in (6 values), crew ne null: multi-valued key range.
      expect(
        probes.filter((d) => /sqlite_autoindex_property_values_1 \(entity_kind=\? AND entity_id=\? AND name=\? AND position=\?\)/.test(d)),
      ).toHaveLength(1);
      expect(
        probes.filter((d) =>
          /COVERING INDEX property_values_text_idx \(entity_kind=\? AND name=\? AND value_text=\? AND entity_id=\?\)/.test(d),
        ),
      ).toHaveLength(2);
      expect(
        probes.filter((d) => /sqlite_autoindex_property_values_1 \(entity_kind=\? AND entity_id=\? AND name=\? AND position>\?\)/.test(d)),
      ).toHaveLength(3);
      expect(plan.some((d) => /^SCAN (pv|pw|pb|po\d*)\b/.test(d))).toBe(false);
      expect(plan.filter((d) => /^SEARCH pb USING COVERING INDEX property_values_num_idx/.test(d)).length).toBeGreaterThan(0);
    });

    it("walks an ascending text order forwards", async () => {
      const query = await compileListQuery(list, { properties: WALK_FILTER, order: "properties.tag asc" }, catalog, [], { plan: "walk" });
      const plan = await explain(query);
      expect(plan.find((d) => /\bpw\b/.test(d))).toMatch(
        /^SEARCH pw USING COVERING INDEX property_values_text_idx \(entity_kind=\? AND name=\? AND value_text<\?\)/,
      );
    });

    it("drives from one term's list and probes the others", async () => {
      const query = await compileListQuery(
        list,
        { properties: "tag eq 'T-00042' and severity ge 2 and crew in ('u1')", order: "properties.inspectedAt desc" },
        catalog,
        [],
        { plan: "driven", driver: 0 },
      );
      const plan = await explain(query);
      expect(plan.find((d) => /^SEARCH e /.test(d))).toMatch(/INDEX sqlite_autoindex_plan_things_1 \(id=\?\)/);
      expect(
        plan.filter((d) =>
          /^SEARCH pv USING COVERING INDEX property_values_text_idx \(entity_kind=\? AND name=\? AND value_text=\?\)$/.test(d),
        ),
      ).toHaveLength(1);
      expect(
        plan.filter((d) => /sqlite_autoindex_property_values_1 \(entity_kind=\? AND entity_id=\? AND name=\? AND position=\?\)/.test(d)),
      ).toHaveLength(2);
      expect(
        plan.filter((d) => /property_values_text_idx \(entity_kind=\? AND name=\? AND value_text=\? AND entity_id=\?\)/.test(d)),
      ).toHaveLength(1);
      expect(plan.some((d) => /^SCAN (pv|po\d*|e)\b/.test(d))).toBe(false);
    });

    it("counts each term in its value index only", async () => {
      const query = await compileListQuery(
        list,
        { properties: "tag eq 'T-00042' and severity ge 2 and crew ne null", order: "properties.inspectedAt desc" },
        catalog,
      );
      expect(query.estimates).toHaveLength(3);
      for (const statement of query.estimates) {
        const plan = await explain(statement);
        expect(plan.filter((d) => /\bpv\b/.test(d))).toEqual([
          expect.stringMatching(
            /^SEARCH pv USING COVERING INDEX property_values_(num|text)_idx \(entity_kind=\? AND name=\? AND value_(num|text)[=><]\?\)$/,
          ),
        ]);
      }
    });
  });

  describe("what the walk relies on", () => {
    it("runs the second part of a UNION ALL only when the first gives fewer rows than the limit", async () => {
      // The second part would fail (malformed JSON) if SQLite ran it.
      const sql = (limit: number) =>
        `SELECT * FROM (SELECT id FROM plan_things ORDER BY id LIMIT 3) UNION ALL` +
        ` SELECT * FROM (SELECT id FROM plan_things WHERE json_extract('not json', '$') = 1 ORDER BY id LIMIT 3) LIMIT ${limit}`;
      expect((await db.prepare(sql(3)).all()).results).toHaveLength(3);
      await expect(db.prepare(sql(4)).all()).rejects.toThrow(/malformed JSON/);
    });
  });
}
