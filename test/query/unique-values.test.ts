import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../src/pkg/errors";
import { compileUniqueValues, defineList, inList, runUniqueValues, type PropertyInfo, type UniqueValuesInput } from "../../src/pkg/query";

const db = env.DB;
const KIND = "uniqueThing";
const CLASSIFICATION = crypto.randomUUID();

const things = defineList({
  table: "unique_things",
  alias: "e",
  entityKind: KIND,
  idColumn: "id",
  fields: {
    referenceId: { column: "e.reference_id" },
    objectOwner: { column: "e.owner_id", displayColumn: "e.owner_name" },
    score: { column: "e.score", type: "number" },
    active: { column: "e.active", type: "boolean" },
    hidden: { column: "e.owner_name", uniqueValues: false },
  },
  searchColumns: [],
});

const defs: PropertyInfo[] = [
  { name: "Count", format: "integer", isMultiselect: false },
  { name: "Depth", format: "decimal", isMultiselect: false },
  { name: "Done", format: "boolean", isMultiselect: false },
  { name: "Seen", format: "date", isMultiselect: false },
  { name: "Risk", format: "classification", classificationId: CLASSIFICATION, isMultiselect: false },
  { name: "Tags", format: "classification", classificationId: CLASSIFICATION, isMultiselect: true },
  { name: "Name", format: "text", isMultiselect: false },
  { name: "Owners", format: "entity", isMultiselect: true },
];
const catalog = async (names: string[]) => new Map(defs.filter((d) => names.includes(d.name)).map((d) => [d.name, d]));

const A = crypto.randomUUID();
const B = crypto.randomUUID();
const C = crypto.randomUUID();
const ORPHAN = crypto.randomUUID();

beforeAll(async () => {
  await db.exec(
    "CREATE TABLE unique_things (id TEXT PRIMARY KEY, reference_id TEXT, owner_id TEXT, owner_name TEXT, score REAL, active INTEGER)",
  );
  const now = new Date().toISOString();
  const row = (id: string, name: string, position: number, text: string | null, num: number | null, json: unknown) =>
    db
      .prepare(
        "INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_text, value_num, " +
          "value_json) VALUES (?, ?, ?, ?, 'd', ?, ?, ?)",
      )
      .bind(KIND, id, name, position, text, num, JSON.stringify(json));
  await db.batch([
    db
      .prepare("INSERT INTO classifications (id, name, format, etag, created_at, updated_at) VALUES (?, 'U', 'valueHierarchy', 'e', ?, ?)")
      .bind(CLASSIFICATION, now, now),
    db
      .prepare(
        "INSERT INTO classification_elements (id, classification_id, position, name, display_name) VALUES (?, ?, 0, " +
          "'High', 'Hoch'), (?, ?, 1, 'Medium', NULL)",
      )
      .bind(crypto.randomUUID(), CLASSIFICATION, crypto.randomUUID(), CLASSIFICATION),
    db
      .prepare(
        "INSERT INTO unique_things VALUES (?, 'A-1', 'u1', 'Zoe', 5, 1), (?, 'B-2', 'u2', 'adam', 2.5, 0), (?, 'C-3', " +
          "'u1', 'Zoe', NULL, 1)",
      )
      .bind(A, B, C),
    row(A, "Count", 0, null, 2, 2),
    row(B, "Count", 0, null, 10, 10),
    row(C, "Count", 0, null, 2, 2),
    row(A, "Depth", 0, null, 0.25, 0.25),
    row(A, "Done", 0, null, 1, true),
    row(B, "Done", 0, null, 0, false),
    row(A, "Seen", 0, null, Date.UTC(2024, 2, 15, 14, 30), "03/15/2024 14:30"),
    row(A, "Risk", 0, "High", null, "High"),
    row(B, "Risk", 0, "Medium", null, "Medium"),
    row(C, "Risk", 0, "O'Neil", null, "O'Neil"),
    row(B, "Risk", 1, null, null, null),
    row(A, "Tags", 0, "x", null, "x"),
    row(A, "Tags", 1, "High", null, "High"),
    row(B, "Tags", 0, "x", null, "x"),
    row(A, "Name", 0, "b", null, "b"),
    row(B, "Name", 0, "B", null, "B"),
    row(A, "Owners", 0, "u1", null, { id: "u1", name: "Zoe" }),
    row(A, "Owners", 1, "u2", null, { id: "u2", name: "adam" }),
    row(C, "Owners", 0, "u9", null, "u9"),
    // A value of an entity that no longer exists never shows up.
    row(ORPHAN, "Count", 0, null, 99, 99),
  ]);
});

async function unique(input: UniqueValuesInput, extra: Parameters<typeof compileUniqueValues>[3] = []) {
  return runUniqueValues(db, await compileUniqueValues(things, input, catalog, extra));
}

describe("unique values", () => {
  it("answers one entry per requested field, in request order", async () => {
    const result = await unique({ fieldNames: "objectOwner, referenceId,score,active,properties.Count" });
    expect(result).toEqual([
      {
        fieldName: "objectOwner",
        values: [
          { displayName: "Zoe", value: "u1" },
          { displayName: "adam", value: "u2" },
        ],
      },
      { fieldName: "referenceId", values: ["A-1", "B-2", "C-3"].map((v) => ({ displayName: v, value: v })) },
      {
        fieldName: "score",
        values: [
          { displayName: "2.5", value: 2.5 },
          { displayName: "5", value: 5 },
        ],
      },
      {
        fieldName: "active",
        values: [
          { displayName: "false", value: false },
          { displayName: "true", value: true },
        ],
      },
      {
        fieldName: "properties.Count",
        values: [
          { displayName: "2", value: 2 },
          { displayName: "10", value: 10 },
        ],
      },
    ]);
  });

  it.each([
    ["properties.Depth", [{ displayName: "0.25", value: 0.25 }]],
    [
      "properties.Done",
      [
        { displayName: "false", value: false },
        { displayName: "true", value: true },
      ],
    ],
    ["properties.Seen", [{ displayName: "2024-03-15T14:30:00.000Z", value: "2024-03-15T14:30:00.000Z" }]],
    // displayName from the element, falling back to the name; ordered by displayName.
    [
      "properties.Risk",
      [
        { displayName: "Hoch", value: "High" },
        { displayName: "Medium", value: "Medium" },
        { displayName: "O'Neil", value: "O'Neil" },
      ],
    ],
    [
      "properties.Tags",
      [
        { displayName: "Hoch", value: "High" },
        { displayName: "x", value: "x" },
      ],
    ],
    [
      "properties.Name",
      [
        { displayName: "B", value: "B" },
        { displayName: "b", value: "b" },
      ],
    ],
    [
      "properties.Owners",
      [
        { displayName: "Zoe", value: "u1" },
        { displayName: "adam", value: "u2" },
        { displayName: "u9", value: "u9" },
      ],
    ],
    [
      "OBJECTOWNER",
      [
        { displayName: "Zoe", value: "u1" },
        { displayName: "adam", value: "u2" },
      ],
    ],
  ])("%s", async (fieldName, values) => {
    expect(await unique({ fieldNames: fieldName })).toEqual([{ fieldName, values }]);
  });

  it("restricts to ids, minus excludeIds, and to list conditions", async () => {
    expect(await unique({ fieldNames: "properties.Count,objectOwner", ids: `${A},${B}`, excludeIds: B })).toEqual([
      { fieldName: "properties.Count", values: [{ displayName: "2", value: 2 }] },
      { fieldName: "objectOwner", values: [{ displayName: "Zoe", value: "u1" }] },
    ]);
    expect(await unique({ fieldNames: ["referenceId"] }, [inList("e.owner_id", ["u2"])])).toEqual([
      { fieldName: "referenceId", values: [{ displayName: "B-2", value: "B-2" }] },
    ]);
  });

  it("caps the number of values per field", async () => {
    const statements = await compileUniqueValues(things, { fieldNames: "referenceId" }, catalog, [], { maxValues: 2 });
    expect((await runUniqueValues(db, statements))[0]?.values).toHaveLength(2);
  });

  it("answers a repeated field once", async () => {
    expect((await unique({ fieldNames: "score,score" })).map((r) => r.fieldName)).toEqual(["score"]);
  });

  it.each([
    [{}, "required"],
    [{ fieldNames: "" }, "required"],
    [{ fieldNames: " , " }, "required"],
    [{ fieldNames: "nope" }, "unknownField"],
    [{ fieldNames: "hidden" }, "unknownField"],
    [{ fieldNames: "properties." }, "unknownField"],
    [{ fieldNames: "score,properties.count" }, "unknownProperty"],
    [{ fieldNames: Array.from({ length: 51 }, (_, i) => `f${i}`).join(",") }, "limit"],
  ])("rejects %j", async (input, rule) => {
    const error = await compileUniqueValues(things, input, catalog).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "InvalidQuery", errors: [{ field: "query.fieldNames", rule }] });
  });

  it("rejects malformed ids", async () => {
    const error = await compileUniqueValues(things, { fieldNames: "score", ids: "1,2" }, catalog).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "InvalidQuery", errors: [{ field: "query.ids", rule: "format" }] });
  });
});
