import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createClassification, createPropertyDefinition, uniqueName } from "../support/factories/properties";

/** A marker in every name of this file's fixtures, so searchText isolates them from other tests' rows. */
const tag = `lst${crypto.randomUUID().slice(0, 6)}`;
let categoryA: { id: string; name: string };
let categoryB: { id: string; name: string };
const ids: Record<string, string> = {};

beforeAll(async () => {
  categoryA = (await call("/Categories", { method: "POST", body: { name: `A ${uniqueName()}` } })).body;
  categoryB = (await call("/Categories", { method: "POST", body: { name: `B ${uniqueName()}` } })).body;
  const classification = await createClassification();
  const fixtures = [
    { key: "alpha", format: "text", applicationRule: "Deviation", category: { id: categoryB.id } },
    { key: "bravo", format: "integer", unit: "metre", applicationRule: "WorkItem", category: { id: categoryA.id } },
    {
      key: "charlie",
      format: "classification",
      classification: { id: classification.id },
      applicationRule: "deviationType",
      category: { id: categoryA.id },
    },
    { key: "delta", format: "boolean", applicationRule: "Deviation", category: { id: categoryB.id } },
  ];
  for (const { key, ...body } of fixtures) ids[key] = (await createPropertyDefinition({ ...body, name: `${key}_${tag}` })).id;
});

const names = (body: { name: string }[]) => body.map((d) => d.name.split("_")[0]);

describe("GET /PropertyDefinitions", () => {
  it("searches the name (case-insensitive) and orders by name by default", async () => {
    const res = await call(`/PropertyDefinitions?searchText=${tag.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(["alpha", "bravo", "charlie", "delta"]);
    // The total is opt-in (it costs time in proportion to the matches).
    expect(res.headers.get("x-total-count")).toBeNull();
    const counted = await call(`/PropertyDefinitions?searchText=${tag.toUpperCase()}&take=1&includeTotal=true`, {
      headers: { origin: "https://app.example" },
    });
    expect(names(counted.body)).toEqual(["alpha"]);
    expect(counted.headers.get("x-total-count")).toBe("4");
    expect(counted.headers.get("access-control-expose-headers")).toMatch(/X-Total-Count/i);
    expect((await call(`/PropertyDefinitions?includeTotal=yes`)).status).toBe(400);
  });

  it.each([
    ["applicationRules=Deviation", ["alpha", "delta"]],
    ["applicationRules=deviatioType,WorkItem", ["bravo", "charlie"]],
    ["formats=integer,boolean", ["bravo", "delta"]],
    ["order=format asc", ["delta", "charlie", "bravo", "alpha"]],
    ["order=applicationRule asc,name desc", ["delta", "alpha", "bravo", "charlie"]],
    ["skip=1&take=2", ["bravo", "charlie"]],
  ])("filters and orders: %s", async (query, expected) => {
    const res = await call(`/PropertyDefinitions?searchText=${tag}&${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(names(res.body)).toEqual(expected);
  });

  it.each([
    ["createdAt", "desc"],
    ["updatedAt", "asc"],
  ])("orders by %s %s (ties broken by id)", async (field, direction) => {
    const res = await call(`/PropertyDefinitions?searchText=${tag}&order=${field} ${direction}`);
    expect(res.status).toBe(200);
    const times = (res.body as Record<string, string>[]).map((d) => d[field] as string);
    const sorted = [...times].sort();
    expect(times).toEqual(direction === "asc" ? sorted : sorted.reverse());
  });

  it("filters by category ids and orders by category name", async () => {
    const res = await call(`/PropertyDefinitions?categoryIds=${categoryA.id},${categoryB.id}&order=category.name desc,name asc`);
    expect(names(res.body)).toEqual(["alpha", "delta", "bravo", "charlie"]);
  });

  it("filters by ids and excludeIds", async () => {
    const res = await call(`/PropertyDefinitions?ids=${ids.alpha},${ids.bravo},${ids.charlie}&excludeIds=${ids.bravo}`);
    expect(names(res.body)).toEqual(["alpha", "charlie"]);
  });

  it.each([
    ["applicationRules=Pipeline", "query.applicationRules", "enum"],
    ["formats=money", "query.formats", "enum"],
    ["categoryIds=nope", "query.categoryIds", "format"],
    ["ids=nope", "query.ids", "format"],
    ["order=colour asc", "query.order", "unknownField"],
    ["order=name sideways", "query.order", "syntax"],
    ["order=properties.x asc", "query.order", "unknownProperty"],
    ["take=5000", "query.take", "too_big"],
    ["skip=-1", "query.skip", "too_small"],
  ])("answers 400 to %s naming the parameter", async (query, field, rule) => {
    const res = await call(`/PropertyDefinitions?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field, rule });
  });
});

describe("GET /PropertyDefinitions/UniqueValues", () => {
  it("returns the distinct formats and categories (id with the name as displayName)", async () => {
    const res = await call(`/PropertyDefinitions/UniqueValues?fieldNames=format,category&ids=${ids.alpha},${ids.bravo},${ids.delta}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual([
      {
        fieldName: "format",
        values: [
          { displayName: "boolean", value: "boolean" },
          { displayName: "integer", value: "integer" },
          { displayName: "text", value: "text" },
        ],
      },
      {
        fieldName: "category",
        values: [
          { displayName: categoryA.name, value: categoryA.id },
          { displayName: categoryB.name, value: categoryB.id },
        ],
      },
    ]);
  });

  it("answers 400 to an unknown field", async () => {
    const res = await call("/PropertyDefinitions/UniqueValues?fieldNames=colour");
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: "query.fieldNames", rule: "unknownField" });
  });
});
