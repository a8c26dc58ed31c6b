/**
 * The query engine against real D1: hand-made fixtures with known answers, the plan SQLite picks,
 * and filters far larger than D1's 100 bound parameters.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../src/pkg/errors";
import {
  compileListQuery,
  csvInList,
  defineList,
  inList,
  runListQuery,
  type ListQueryInput,
  type PropertyInfo,
  type SqlScalar,
} from "../../src/pkg/query";

const db = env.DB;
const KIND = "testThing";
const CLASSIFICATION = crypto.randomUUID();

const things = defineList({
  table: "test_things",
  alias: "e",
  entityKind: KIND,
  idColumn: "id",
  fields: {
    referenceId: { column: "e.reference_id" },
    objectOwner: { column: "e.owner_id", displayColumn: "e.owner_name" },
    "objectOwner.name": { column: "e.owner_name" },
    score: { column: "e.score", type: "number" },
  },
  searchColumns: ["e.reference_id", "e.owner_name"],
  defaultOrder: "referenceId asc",
});

const defs: PropertyInfo[] = [
  { name: "Depth", format: "decimal", isMultiselect: false },
  { name: "Count", format: "integer", isMultiselect: false },
  { name: "Done", format: "boolean", isMultiselect: false },
  { name: "Seen", format: "date", isMultiselect: false },
  { name: "Risk", format: "classification", classificationId: CLASSIFICATION, isMultiselect: false },
  { name: "Tags", format: "classification", classificationId: CLASSIFICATION, isMultiselect: true },
  { name: "Name", format: "text", isMultiselect: false },
  { name: "Owners", format: "entity", isMultiselect: true },
  { name: "Inspector", format: "entity", isMultiselect: false },
];
const catalog = async (names: string[]) => new Map(defs.filter((d) => names.includes(d.name)).map((d) => [d.name, d]));

type Value = string | number | boolean | null | { id: string; name: string };
interface Thing {
  ref: string | null;
  owner?: [string, string];
  score?: number;
  props: Record<string, Value | Value[]>;
}

const fixtures: Thing[] = [
  {
    ref: "A-1",
    owner: ["u1", "Zoe"],
    score: 5,
    props: {
      Depth: 2.5,
      Count: 1,
      Done: true,
      Seen: "2024-03-15T14:30:00Z",
      Risk: "High",
      Tags: ["x", "y"],
      Name: "O'Brien",
      Owners: [
        { id: "u1", name: "Zoe" },
        { id: "u2", name: "adam" },
      ],
      Inspector: { id: "u3", name: "Bob" },
    },
  },
  {
    ref: "B-2",
    owner: ["u2", "adam"],
    props: {
      Depth: 10,
      Count: 2,
      Done: false,
      Seen: "2024-03-16",
      Risk: "Low",
      Tags: ["y"],
      Name: "pipe%_",
      Owners: [{ id: "u2", name: "adam" }],
      Inspector: { id: "u4", name: "alice" },
    },
  },
  { ref: "c-3", score: 1.5, props: { Count: 3, Seen: "2023-01-01", Risk: "O'Neil", Name: "Pipe", Done: true } },
  { ref: "D-4", owner: ["u1", "Zoe"], score: 7, props: { Depth: null, Risk: "Medium", Tags: [] } },
  { ref: null, props: {} },
];

const ids = new Map<string | null, string>();

/** Inserts rows in chunks that stay under D1's 100 bound parameters, all in one batch. */
async function insertRows(table: string, columns: string[], rows: unknown[][]) {
  const perStatement = Math.floor(100 / columns.length);
  const statements = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const placeholders = chunk.map(() => `(${columns.map(() => "?").join(", ")})`).join(", ");
    statements.push(db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${placeholders}`).bind(...chunk.flat()));
  }
  if (statements.length > 0) await db.batch(statements);
}

function propertyRows(entityId: string, props: Thing["props"]): unknown[][] {
  return Object.entries(props).flatMap(([name, raw]) => {
    const info = defs.find((d) => d.name === name)!;
    return (Array.isArray(raw) ? raw : [raw]).map((value, position) => {
      let num: number | null = null;
      let text: string | null = null;
      if (value !== null && typeof value === "object") text = value.id;
      else if (info.format === "date" && typeof value === "string") num = Date.parse(value);
      else if (typeof value === "boolean") num = value ? 1 : 0;
      else if (typeof value === "number") num = value;
      else text = value;
      return [KIND, entityId, name, position, `def-${name}`, text, num, JSON.stringify(value)];
    });
  });
}

beforeAll(async () => {
  await db.exec("CREATE TABLE test_things (id TEXT PRIMARY KEY, reference_id TEXT, owner_id TEXT, owner_name TEXT, score REAL)");
  const now = new Date().toISOString();
  await db
    .prepare("INSERT INTO classifications (id, name, format, etag, created_at, updated_at) VALUES (?, ?, 'valueHierarchy', 'e', ?, ?)")
    .bind(CLASSIFICATION, `Risk ${CLASSIFICATION}`, now, now)
    .run();
  const elements = [
    ["High", "Hoch", "H", "AH", "red", 3, 0.9],
    ["Medium", null, "M", null, "amber", 2, null],
    ["Low", "Niedrig", "L", "AL", "green", 1, 0.1],
    ["x", null, null, null, null, null, null],
  ];
  await insertRows(
    "classification_elements",
    ["id", "classification_id", "parent_id", "position", "name", "display_name", "code", "applier_code", "color", "sort_order", "grade"],
    elements.map((e, i) => [crypto.randomUUID(), CLASSIFICATION, null, i, ...e]),
  );
  const thingRows: unknown[][] = [];
  const valueRows: unknown[][] = [];
  for (const thing of fixtures) {
    const id = crypto.randomUUID();
    ids.set(thing.ref, id);
    thingRows.push([id, thing.ref, thing.owner?.[0] ?? null, thing.owner?.[1] ?? null, thing.score ?? null]);
    valueRows.push(...propertyRows(id, thing.props));
  }
  await insertRows("test_things", ["id", "reference_id", "owner_id", "owner_name", "score"], thingRows);
  await insertRows(
    "property_values",
    ["entity_kind", "entity_id", "name", "position", "definition_id", "value_text", "value_num", "value_json"],
    valueRows,
  );
});

async function refs(input: ListQueryInput, extra: Parameters<typeof compileListQuery>[3] = []) {
  const query = await compileListQuery(things, { includeTotal: true, ...input }, catalog, extra);
  const { items, total } = await runListQuery<{ reference_id: string | null }>(db, query);
  return { refs: items.map((row) => row.reference_id), total };
}
const filtered = async (properties: string) => (await refs({ properties, order: "referenceId" })).refs;

describe("property filters on D1", () => {
  it.each([
    ["Depth gt 2.5", ["B-2"]],
    ["Depth ge 2.5", ["A-1", "B-2"]],
    ["Depth lt 10", ["A-1"]],
    ["Depth le 10 and Depth ne 2.5", ["B-2"]],
    ["Depth eq null", ["D-4", "c-3", null]],
    ["Depth ne null", ["A-1", "B-2"]],
    ["Count in (1, 3)", ["A-1", "c-3"]],
    ["Count ne 2", ["A-1", "D-4", "c-3", null]],
    ["Done eq true", ["A-1", "c-3"]],
    ["Done eq false or Done eq null", ["B-2", "D-4", null]],
    ["Seen ge '2024-03-15T14:30:00Z'", ["A-1", "B-2"]],
    ["Seen gt '03/15/2024 14:30'", ["B-2"]],
    ["Seen lt '2024/03/15 14:30:01'", ["A-1", "c-3"]],
    ["Seen eq '2024-03-16'", ["B-2"]],
    ["Seen in ('2023-01-01', '2024-03-16T00:00:00+00:00')", ["B-2", "c-3"]],
    ["Risk eq 'O''Neil'", ["c-3"]],
    ["Risk in ('High', 'Low')", ["A-1", "B-2"]],
    ["Risk ne 'High'", ["B-2", "D-4", "c-3", null]],
    // Multi-valued: eq/in match when ANY value matches; ne when NO value equals.
    ["Tags eq 'y'", ["A-1", "B-2"]],
    ["Tags ne 'x'", ["B-2", "D-4", "c-3", null]],
    ["Tags eq null", ["D-4", "c-3", null]],
    ["Owners eq 'u2'", ["A-1", "B-2"]],
    ["Owners ne 'u1'", ["B-2", "D-4", "c-3", null]],
    ["Inspector in ('u4', 'u9')", ["B-2"]],
    ["Name eq 'O''Brien'", ["A-1"]],
    // Text compares case-sensitively (binary collation) and wildcards are plain characters.
    ["Name eq 'pipe'", []],
    ["Name eq 'pipe%_'", ["B-2"]],
    ["Name gt 'P'", ["B-2", "c-3"]],
    ["Name lt 'a'", ["A-1", "c-3"]],
    ["Count eq 1 or Count eq 2 and Done eq true", ["A-1"]],
    ["(Count eq 1 or Count eq 2) and Done eq false", ["B-2"]],
    ["Risk eq 'Medium' or (Tags eq 'x' and not_there_is_fine eq 1)", "unknownProperty"],
  ])("%s", async (filter, expected) => {
    if (typeof expected === "string") {
      await expect(filtered(filter)).rejects.toMatchObject({ code: "InvalidQuery", errors: [{ rule: expected }] });
      return;
    }
    expect(await filtered(filter)).toEqual(expected);
  });
});

describe("order on D1", () => {
  it.each([
    ["", ["A-1", "B-2", "D-4", "c-3", null]],
    ["referenceId desc", ["c-3", "D-4", "B-2", "A-1", null]],
    ["score desc", ["D-4", "A-1", "c-3", "B-2", null]],
    // Binary collation: upper case sorts before lower case.
    ["objectOwner.name, referenceId desc", ["D-4", "A-1", "B-2", "c-3", null]],
    ["properties.Depth desc", ["B-2", "A-1", "D-4", "c-3", null]],
    ["properties.Risk", ["A-1", "B-2", "D-4", "c-3", null]],
    ["properties.Risk.order desc, referenceId", ["A-1", "D-4", "B-2", "c-3", null]],
    ["properties.Risk.grade", ["B-2", "A-1", "D-4", "c-3", null]],
    ["properties.Risk.displayName", ["A-1", "D-4", "B-2", "c-3", null]],
    ["properties.Risk.color desc", ["A-1", "B-2", "D-4", "c-3", null]],
    ["properties.Risk.code desc", ["D-4", "B-2", "A-1", "c-3", null]],
    ["properties.Seen desc", ["B-2", "A-1", "c-3", "D-4", null]],
    // Entity references order by the owner's name.
    ["properties.Inspector", ["A-1", "B-2", "D-4", "c-3", null]],
    ["properties.Done desc, properties.Count desc", ["c-3", "A-1", "B-2", "D-4", null]],
  ])("%j", async (order, expected) => {
    const result = await refs({ order });
    // Rows that tie on every term come in id order, which the fixture cannot predict: compare those as sets.
    expect(result.refs.slice(0, expected.length).map(String).sort()).toEqual(expected.map(String).sort());
    expect(await orderOf(order)).toEqual(expected);
  });

  async function orderOf(order: string) {
    const { refs: page } = await refs({ order: order ? `${order}, referenceId` : "" });
    return page;
  }

  it("keeps nulls last in both directions and breaks ties by id", async () => {
    const asc = (await refs({ order: "properties.Depth asc" })).refs;
    const desc = (await refs({ order: "properties.Depth desc" })).refs;
    expect(asc.slice(0, 2)).toEqual(["A-1", "B-2"]);
    expect(desc.slice(0, 2)).toEqual(["B-2", "A-1"]);
    const tail = [...ids.entries()].filter(([ref]) => !["A-1", "B-2"].includes(ref ?? "")).map(([ref, id]) => [id, ref] as const);
    const byId = tail.sort(([a], [b]) => (a < b ? -1 : 1)).map(([, ref]) => ref);
    expect(asc.slice(2)).toEqual(byId);
    expect(desc.slice(2)).toEqual(byId);
  });

  it("orders by more properties than SQLite can join", async () => {
    const many: PropertyInfo[] = Array.from({ length: 70 }, (_, i) => ({ name: `Many${i}`, format: "integer", isMultiselect: false }));
    const wide = async (names: string[]) => {
      const found = await catalog(names);
      for (const d of many) if (names.includes(d.name)) found.set(d.name, d);
      return found;
    };
    const order = [...many.map((d) => `properties.${d.name}`), "properties.Risk.grade desc", "properties.Count desc"].join(", ");
    const query = await compileListQuery(things, { order }, wide, [], { plan: "lists" });
    expect(query.sql.match(/LEFT JOIN property_values po\d+ /g)).toHaveLength(32);
    const { items } = await runListQuery<{ reference_id: string }>(db, query);
    expect(items.map((r) => r.reference_id).slice(0, 3)).toEqual(["A-1", "B-2", "c-3"]);
  });
});

describe("ids, excludeIds, searchText, paging and extra conditions", () => {
  it("keeps ids and drops excludeIds, in lists of any length", async () => {
    const noise = Array.from({ length: 2000 }, () => crypto.randomUUID());
    const keep = [ids.get("A-1")!, ids.get("c-3")!.toUpperCase(), ids.get("D-4")!];
    const result = await refs({ ids: [...noise, ...keep].join(","), excludeIds: [...noise.slice(0, 500), ids.get("D-4")!].join(",") });
    expect(result).toEqual({ refs: ["A-1", "c-3"], total: 2 });
  });

  it.each([
    ["zoe", ["A-1", "D-4"]],
    ["ADAM", ["B-2"]],
    ["-", ["A-1", "B-2", "D-4", "c-3"]],
    ["%", []],
    ["_", []],
    ["  c-3  ", ["c-3"]],
    ["x".repeat(60), []],
    ["", ["A-1", "B-2", "D-4", "c-3", null]],
  ])("searchText %j", async (searchText, expected) => {
    expect((await refs({ searchText })).refs).toEqual(expected);
  });

  it("pages with skip and take and counts the whole match", async () => {
    expect(await refs({ skip: 1, take: 2 })).toEqual({ refs: ["B-2", "D-4"], total: 5 });
    expect(await refs({ take: 0, properties: "Count ne null" })).toEqual({ refs: [], total: 3 });
  });

  it("counts only when asked (includeTotal), and reads no page for take=0", async () => {
    const run = async (input: ListQueryInput) => runListQuery(db, await compileListQuery(things, input, catalog));
    expect((await run({ take: 2 })).total).toBeUndefined();
    expect((await run({ take: 2, includeTotal: "false" })).total).toBeUndefined();
    expect((await run({ take: 2, includeTotal: "TRUE" })).total).toBe(5);
    expect(await run({ take: 0 })).toEqual({ items: [], total: undefined, plan: "lists" });
    await expect(compileListQuery(things, { includeTotal: "yes" }, catalog)).rejects.toMatchObject({
      code: "InvalidQuery",
      errors: [{ field: "query.includeTotal", rule: "format" }],
    });
  });

  it("applies list-specific conditions", async () => {
    const result = await refs({ properties: "Risk ne null" }, [inList("e.owner_id", ["u1", "u9"])]);
    expect(result).toEqual({ refs: ["A-1", "D-4"], total: 2 });
    expect((await refs({}, [inList("e.owner_id", [])])).total).toBe(0);
    expect((await refs({}, csvInList("e.owner_id", " u2 , u3,"))).refs).toEqual(["B-2"]);
    expect((await refs({}, csvInList("e.owner_id", " , "))).total).toBe(5);
  });
});

describe("large filters stay within D1's limits", () => {
  it("runs an 'in' with 900 values and 80 OR'ed terms as one statement", async () => {
    const inValues = Array.from({ length: 899 }, (_, i) => `'v${i}'`)
      .concat("'High'")
      .join(", ");
    const ors = Array.from({ length: 79 }, (_, i) => `Count eq ${100 + i}`)
      .concat("Count eq 3")
      .join(" or ");
    const properties = `Risk in (${inValues}) or ${ors}`;
    const query = await compileListQuery(things, { properties }, catalog);
    expect(query.params).toHaveLength(3);
    expect(query.sql.match(/\?\d+/g)?.every((p) => ["?1", "?2", "?3"].includes(p))).toBe(true);
    expect((await runListQuery<{ reference_id: string }>(db, query)).items.map((r) => r.reference_id)).toEqual(["A-1", "c-3"]);
  });

  it("runs 100 terms with 1000 values in all (a flat OR chain deeper than D1's expression depth limit of 100)", async () => {
    const terms = Array.from({ length: 99 }, (_, i) => (i % 2 ? `Name eq 'n${i}'` : `(Depth ge ${i + 20})`)).join(" or ");
    const list = Array.from({ length: 900 }, (_, i) => i + 10)
      .concat(2)
      .join(",");
    const query = await compileListQuery(things, { properties: `${terms} or Count in (${list})` }, catalog);
    expect(new TextEncoder().encode(query.sql).length).toBeLessThan(100_000);
    expect((await runListQuery<{ reference_id: string }>(db, query)).items.map((r) => r.reference_id)).toEqual(["B-2"]);
  });

  it("answers InvalidQuery, not a database error, beyond the limits", async () => {
    const terms = Array.from({ length: 101 }, (_, i) => `Count eq ${i}`).join(" or ");
    const error = await compileListQuery(things, { properties: terms }, catalog).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "InvalidQuery", errors: [{ field: "query.properties", rule: "limit" }] });
  });
});

describe("keyset reads (an export's pages)", () => {
  // Doubles that SQLite's JSON reader gives back as their neighbour: a key sent in the JSON of ?1
  // would not compare equal to its own row, and the read would repeat or skip the rows of a tie.
  const DOUBLES = [8.41861663494558e299, 4.973595630544389e-301, 8.5285753280549e-301, 8.922946962893175e299, 1.5];
  const scored = defineList({
    table: "test_keyset_things",
    alias: "e",
    entityKind: "keysetThing",
    idColumn: "id",
    fields: { score: { column: "e.score", type: "number" }, name: { column: "e.name" } },
    searchColumns: ["e.name"],
    defaultOrder: "score asc",
  });
  const rows = [...DOUBLES, ...DOUBLES, null, null, null].map((score, i) => ({ id: crypto.randomUUID(), score, name: `n${i % 3}` }));
  const readWhole = async (order: string, take: number, lookup = catalog) => {
    const read: string[] = [];
    for (let after: SqlScalar[] | undefined, pages = 0; pages <= rows.length; pages++) {
      const page = await runListQuery<{ id: string }>(db, await compileListQuery(scored, { order, take, keyset: { after } }, lookup));
      read.push(...page.items.map((row) => row.id));
      if (!page.next) break;
      after = page.next;
    }
    return read;
  };
  /** The rows' ids in the order of the terms (nulls last either way), then by id. */
  const sorted = (...terms: [key: "score" | "name", direction: 1 | -1][]) =>
    [...rows]
      .sort((a, b) => {
        for (const [key, direction] of terms) {
          const [x, y] = [a[key], b[key]];
          if (x !== y) return x === null ? 1 : y === null ? -1 : direction * (x < y ? -1 : 1);
        }
        return a.id < b.id ? -1 : 1;
      })
      .map((row) => row.id);

  beforeAll(async () => {
    await db.exec("CREATE TABLE test_keyset_things (id TEXT PRIMARY KEY, score REAL, name TEXT)");
    await db.batch(rows.map((r) => db.prepare("INSERT INTO test_keyset_things VALUES (?, ?, ?)").bind(r.id, r.score, r.name)));
  });

  it.each([1, 2, 5])("reads every row once in pages of %i, ties of such doubles and nulls last included", async (take) => {
    expect(await readWhole("score asc", take)).toEqual(sorted(["score", 1]));
    expect(await readWhole("score desc", take)).toEqual(sorted(["score", -1]));
    expect(await readWhole("name desc, score desc", take)).toEqual(sorted(["name", -1], ["score", -1]));
  });

  it("refuses an order of more terms than a statement can bind keys for, naming order", async () => {
    const many: PropertyInfo[] = Array.from({ length: 33 }, (_, i) => ({ name: `Key${i}`, format: "integer", isMultiselect: false }));
    const wide = async (names: string[]) => new Map(many.filter((d) => names.includes(d.name)).map((d) => [d.name, d]));
    const order = many.map((d) => `properties.${d.name}`).join(", ");
    await expect(compileListQuery(scored, { order, keyset: {} }, wide)).rejects.toMatchObject({
      code: "InvalidQuery",
      errors: [{ field: "query.order", rule: "limit" }],
    });
    // 32 terms of values on every row (ties among them): 33 keys, each nesting the rest deeper.
    const value = (row: number, key: number) => (row * 7 + key) % 3;
    await insertRows(
      "property_values",
      ["entity_kind", "entity_id", "name", "position", "definition_id", "value_text", "value_num", "value_json"],
      rows.flatMap((row, r) => many.slice(1).map((d, k) => ["keysetThing", row.id, d.name, 0, `def-${d.name}`, null, value(r, k), "0"])),
    );
    const expected = rows
      .map((row, r) => ({ id: row.id, values: many.slice(1).map((_, k) => value(r, k)) }))
      .sort((a, b) => {
        const k = a.values.findIndex((v, i) => v !== b.values[i]);
        return k === -1 ? (a.id < b.id ? -1 : 1) : b.values[k]! - a.values[k]!;
      })
      .map((row) => row.id);
    const fits = many.slice(1).map((d) => `properties.${d.name} desc`);
    expect(await readWhole(fits.join(", "), 2, wide)).toEqual(expected);
  });
});

describe("query plans", () => {
  // The lists plan; plans.test.ts covers the driven and walk plans.
  it("searches the property_values indexes for every filter term and order join", async () => {
    const query = await compileListQuery(
      things,
      {
        properties:
          "Depth gt 1 and Depth ne 3 or Count in (1, 2) or Name le 'x' or Name eq null or Risk ne null or Seen ge " +
          "'2024-01-01' and Owners in ('u1')",
        order: "properties.Risk.grade desc, properties.Depth, properties.Inspector",
        ids: Array.from({ length: 5 }, () => crypto.randomUUID()).join(","),
      },
      catalog,
      [],
      { plan: "lists" },
    );
    const plan = await db
      .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...query.params)
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail);
    const propertySteps = details.filter((d) => /\b(pv|po\d+|pc\d+)\b/.test(d));
    // Eight terms use pv, three order joins use po0..po2 and one element join pc0.
    expect(propertySteps.filter((d) => /\bpv\b/.test(d))).toHaveLength(8);
    for (const step of propertySteps) expect(step).toMatch(/^SEARCH /);
    for (const step of details.filter((d) => /\bpv\b/.test(d))) {
      expect(step).toMatch(/USING COVERING INDEX property_values_(num|text)_idx \(entity_kind=\? AND name=\?/);
    }
    expect(details.filter((d) => /\bpo\d\b/.test(d))).toHaveLength(3);
    for (const step of details.filter((d) => /\bpo\d\b/.test(d)))
      expect(step).toMatch(
        /USING INDEX sqlite_autoindex_property_values_1 \(entity_kind=\? AND entity_id=\? AND name=\? AND position=\?\)/,
      );
    expect(details.find((d) => /\bpc0\b/.test(d))).toMatch(/USING INDEX classification_elements_name_uq/);
    expect(details.some((d) => /SCAN (pv|po|pc)/.test(d))).toBe(false);
  });
});
