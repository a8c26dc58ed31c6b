import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/pkg/errors";
import { compileListQuery, defineList, parseOrder, type PropertyInfo } from "../../src/pkg/query";

const list = defineList({
  table: "test_things",
  alias: "e",
  entityKind: "testThing",
  idColumn: "id",
  fields: {
    referenceId: { column: "e.reference_id" },
    "objectOwner.name": { column: "e.owner_name" },
    secret: { column: "e.secret", orderable: false },
  },
  searchColumns: ["e.reference_id"],
  defaultOrder: "referenceId desc",
});

const defs: PropertyInfo[] = [
  { name: "Depth", format: "decimal", isMultiselect: false },
  { name: "Risk", format: "classification", classificationId: "c1", isMultiselect: false },
  { name: "Risk.code", format: "text", isMultiselect: false },
  { name: "Tags", format: "classification", classificationId: "c1", isMultiselect: true },
  { name: "Owners", format: "entity", isMultiselect: true },
  { name: "Inspector", format: "entity", isMultiselect: false },
];
const catalog = async (names: string[]) => new Map(defs.filter((d) => names.includes(d.name)).map((d) => [d.name, d]));

async function errorOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

// The lists plan: the order as ORDER BY over LEFT JOINs (the walk plan reads an index instead, see plans.test.ts).
const orderBy = async (order: string) => {
  const { sql } = await compileListQuery(list, { order }, catalog, [], { plan: "lists" });
  return sql.slice(sql.indexOf("ORDER BY ") + 9, sql.indexOf(" LIMIT"));
};

describe("parseOrder", () => {
  it.each([
    ["referenceId", [{ field: "referenceId", direction: "asc", index: 1 }]],
    ["referenceId DESC", [{ field: "referenceId", direction: "desc", index: 1 }]],
    [
      " a asc ,b  desc,  c ",
      [
        { field: "a", direction: "asc", index: 1 },
        { field: "b", direction: "desc", index: 2 },
        { field: "c", direction: "asc", index: 3 },
      ],
    ],
    [
      "a,,b,",
      [
        { field: "a", direction: "asc", index: 1 },
        { field: "b", direction: "asc", index: 3 },
      ],
    ],
    ["", []],
  ])("%j", (text, expected) => {
    expect(parseOrder(text)).toEqual(expected);
  });

  it("takes any number of terms", () => {
    expect(parseOrder(Array.from({ length: 5000 }, (_, i) => `f${i} desc`).join(","))).toHaveLength(5000);
  });
});

describe("order compilation", () => {
  it.each([
    ["", "e.reference_id DESC NULLS LAST, e.id ASC"],
    ["REFERENCEID", "e.reference_id ASC NULLS LAST, e.id ASC"],
    ["objectOwner.name desc, referenceId", "e.owner_name DESC NULLS LAST, e.reference_id ASC NULLS LAST, e.id ASC"],
    ["referenceId desc, referenceId asc", "e.reference_id DESC NULLS LAST, e.id ASC"],
    ["properties.Depth desc", "po0.value_num DESC NULLS LAST, e.id ASC"],
    ["properties.Risk", "po0.value_text ASC NULLS LAST, e.id ASC"],
    [
      "properties.Risk.grade desc, properties.Risk.displayName",
      "pc0.grade DESC NULLS LAST, coalesce(pc0.display_name, po0.value_text) ASC NULLS LAST, e.id ASC",
    ],
    ["properties.Risk.ORDER", "pc0.sort_order ASC NULLS LAST, e.id ASC"],
    // The property named `Risk.code` wins over the element field `code` of `Risk`.
    ["properties.Risk.code", "po0.value_text ASC NULLS LAST, e.id ASC"],
    ["properties.Risk.applierCode", "pc0.applier_code ASC NULLS LAST, e.id ASC"],
  ])("%j", async (order, expected) => {
    expect(await orderBy(order)).toBe(expected);
  });

  it("joins each property once however often it is ordered by", async () => {
    const { sql } = await compileListQuery(list, { order: "properties.Risk.grade, properties.Risk.color, properties.Risk.name" }, catalog);
    expect(sql.match(/LEFT JOIN property_values/g)).toHaveLength(1);
    expect(sql.match(/LEFT JOIN classification_elements/g)).toHaveLength(1);
  });

  it.each([
    ["nope", "unknownField", ["Order term 1", "'nope'"]],
    ["referenceId, secret desc", "notOrderable", ["Order term 2", "'secret'"]],
    ["referenceId up", "syntax", ["'referenceId up'", "asc", "desc"]],
    ["referenceId asc desc", "syntax", ["'referenceId asc desc'"]],
    ["properties.Nope", "unknownProperty", ["'Nope'"]],
    ["properties.depth", "unknownProperty", ["'depth'", "case-sensitive"]],
    ["properties.Depth.grade", "unknownField", ["'Depth'", "decimal", "classification properties only"]],
    ["properties.Tags", "notOrderable", ["'Tags'", "multiselect"]],
    ["properties.Tags.code", "notOrderable", ["'Tags'", "multiselect"]],
    ["referenceId, properties.Owners desc", "notOrderable", ["Order term 2", "'Owners'", "multiselect"]],
  ])("rejects %j", async (order, rule, fragments) => {
    const error = await errorOf(compileListQuery(list, { order }, catalog));
    expect(error.code).toBe("InvalidQuery");
    expect(error.errors).toEqual([{ field: "query.order", rule, message: error.message }]);
    for (const fragment of fragments) expect(error.message).toContain(fragment);
  });

  it("refuses a list whose default order names an unknown field", () => {
    expect(() => defineList({ ...list, fields: { a: { column: "e.a" } }, defaultOrder: "b desc" })).toThrow(/default order/);
  });
});

describe("paging and id parameters", () => {
  it.each([
    [{}, 0, 100],
    [{ skip: "5", take: "0" }, 5, 0],
    [{ skip: 10, take: 1000 }, 10, 1000],
  ])("%j", async (input, skip, take) => {
    const query = await compileListQuery(list, input, catalog);
    expect(query.params.slice(1)).toEqual([take, skip]);
    expect(query).toMatchObject({ skip, take });
  });

  it.each([
    [{ take: 1001 }, "query.take", "limit"],
    [{ take: "-1" }, "query.take", "format"],
    [{ skip: "1.5" }, "query.skip", "format"],
    [{ skip: "x" }, "query.skip", "format"],
    [{ ids: "0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10,nope" }, "query.ids", "format"],
    [{ excludeIds: "12345" }, "query.excludeIds", "format"],
  ])("rejects %j", async (input, field, rule) => {
    const error = await errorOf(compileListQuery(list, input, catalog));
    expect(error.errors?.[0]).toMatchObject({ field, rule });
  });

  it("asks the catalog once, for every name the filter and order mention", async () => {
    const asked: string[][] = [];
    await compileListQuery(
      list,
      { properties: "Depth gt 1 and (Depth lt 5 or Inspector eq 'x')", order: "properties.Risk.code" },
      async (names) => {
        asked.push(names);
        return catalog(names);
      },
    );
    expect(asked).toEqual([["Depth", "Inspector", "Risk.code", "Risk"]]);
  });

  it("does not call the catalog without properties", async () => {
    let called = false;
    await compileListQuery(list, { order: "referenceId" }, async () => {
      called = true;
      return new Map();
    });
    expect(called).toBe(false);
  });
});
