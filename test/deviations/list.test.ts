import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createPropertyDefinition } from "../support/factories/properties";
import { createDeviation, createDeviationType, createPlantTree, unique } from "../support/factories/work";

type Listed = { id: string; referenceId: string };

/** A small world: two types, two plants, owners, risks and a severity property. */
let world: Awaited<ReturnType<typeof build>>;

async function build() {
  const severity = await createPropertyDefinition({ applicationRule: "Deviation", format: "integer" });
  const typeA = await createDeviationType({ name: unique("Alpha"), propertyDefinitions: [{ id: severity.id }] });
  const typeB = await createDeviationType({ name: unique("Beta"), propertyDefinitions: [{ id: severity.id }] });
  const north = await createPlantTree();
  const south = await createPlantTree();
  const prefix = unique("L").toUpperCase();
  const make = (n: number, body: Record<string, unknown>) => createDeviation({ referenceId: `${prefix}-${n}`, ...body });
  const d1 = await make(1, {
    typeId: typeA.id,
    status: "active",
    objectOwner: { id: "o1", name: "Zed" },
    risk: { id: "r1", name: "Leak" },
    properties: [{ name: severity.name, value: 5 }],
    assetReference: { equipment: { id: north.equipment.id } },
  });
  const d2 = await make(2, {
    typeId: typeA.id,
    status: "new",
    objectOwner: { id: "o2", name: "Amy" },
    risk: { id: "r2", name: "Fire" },
    properties: [{ name: severity.name, value: 2 }],
    assetReference: { mainSystem: { id: south.mainSystem.id } },
  });
  const d3 = await make(3, {
    typeId: typeB.id,
    status: "active",
    objectOwner: { id: "o1", name: "Zed" },
    properties: [{ name: severity.name, value: 9 }],
    assetReference: { designObject: { id: north.designObject.id } },
  });
  const d4 = await make(4, { status: "closed", objectOwner: { id: "o3", name: "Max" } });
  return { severity, typeA, typeB, north, south, prefix, d1, d2, d3, d4 };
}

beforeAll(async () => {
  world = await build();
});

async function ids(query: string): Promise<string[]> {
  const res = await call(`/Deviations?searchText=${world.prefix}&${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as Listed[]).map((d) => d.referenceId.slice(world.prefix.length + 1));
}

describe("GET /Deviations filters", () => {
  it.each<[string, () => string, string[]]>([
    ["no filter (default order createdAt desc)", () => "", ["4", "3", "2", "1"]],
    ["statuses", () => "statuses=active,closed&order=referenceId", ["1", "3", "4"]],
    ["objectOwnerIds", () => "objectOwnerIds=o1&order=referenceId", ["1", "3"]],
    ["typeIds", () => `typeIds=${world.typeA.id}&order=referenceId`, ["1", "2"]],
    ["riskIds", () => "riskIds=r2,r9", ["2"]],
    ["equipmentIds", () => `equipmentIds=${world.north.equipment.id}`, ["1"]],
    ["mainSystemIds", () => `mainSystemIds=${world.south.mainSystem.id}`, ["2"]],
    ["designObjectIds", () => `designObjectIds=${world.north.designObject.id}`, ["3"]],
    [
      "plantNames (through any designated asset, ignoring case)",
      () => `plantNames=${encodeURIComponent(String(world.north.plant.name).toUpperCase())}&order=referenceId`,
      ["1", "3"],
    ],
    [
      "ids and excludeIds",
      () => `ids=${world.d1.id},${world.d2.id},${world.d3.id}&excludeIds=${world.d2.id}&order=referenceId`,
      ["1", "3"],
    ],
    ["properties", () => `properties=${world.severity.name} ge 5&order=referenceId`, ["1", "3"]],
    [
      "properties and another filter",
      () => `properties=${world.severity.name} gt 1 and ${world.severity.name} lt 9&statuses=active`,
      ["1"],
    ],
    ["order by a property, nulls last", () => `order=properties.${world.severity.name} desc`, ["3", "1", "2", "4"]],
    ["order by objectOwner.name then referenceId", () => "order=objectOwner.name asc, referenceId desc", ["2", "4", "3", "1"]],
    ["order by type.name", () => `ids=${world.d1.id},${world.d3.id},${world.d2.id}&order=type.name desc, referenceId`, ["3", "1", "2"]],
    ["order by risk.name", () => `ids=${world.d1.id},${world.d2.id}&order=risk.name`, ["2", "1"]],
    ["skip and take", () => "order=referenceId&skip=1&take=2", ["2", "3"]],
  ])("%s", async (_, query, expected) => {
    expect(await ids(query())).toEqual(expected);
  });

  it("returns the total only when asked", async () => {
    const res = await call(`/Deviations?searchText=${world.prefix}&take=1&includeTotal=true`);
    expect(res.headers.get("x-total-count")).toBe("4");
    expect((await call(`/Deviations?searchText=${world.prefix}&take=1`)).headers.get("x-total-count")).toBeNull();
  });

  it("returns full deviations", async () => {
    const res = await call(`/Deviations?ids=${world.d1.id}`);
    const { etag: _etag, ...body } = world.d1;
    expect(res.body).toEqual([body]);
  });

  it.each<[string, string]>([
    ["properties=nope eq 1", "query.properties"],
    ["order=color asc", "query.order"],
    ["typeIds=x", "query.typeIds"],
    ["equipmentIds=x", "query.equipmentIds"],
    ["take=5000", "query.take"],
  ])("400 for %s", async (query, field) => {
    const res = await call(`/Deviations?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it("only Deviation-rule definitions are filterable", async () => {
    const own = await createPropertyDefinition({ applicationRule: "deviationType" });
    const res = await call(`/Deviations?properties=${own.name} eq 'x'`);
    expect(res.status).toBe(400);
  });
});

describe("GET /Deviations/UniqueValues", () => {
  it("answers status, objectOwner, type, risk, referenceId and properties", async () => {
    const idList = [world.d1, world.d2, world.d3].map((d) => d.id).join(",");
    const res = await call(
      `/Deviations/UniqueValues?ids=${idList}&fieldNames=status,objectOwner,type,risk,properties.${world.severity.name}`,
    );
    expect(res.status).toBe(200);
    const byField = Object.fromEntries(res.body.map((f: { fieldName: string; values: unknown[] }) => [f.fieldName, f.values]));
    expect(byField.status).toEqual([
      { displayName: "active", value: "active" },
      { displayName: "new", value: "new" },
    ]);
    expect(byField.objectOwner).toEqual([
      { displayName: "Amy", value: "o2" },
      { displayName: "Zed", value: "o1" },
    ]);
    expect(byField.type.map((v: { value: string }) => v.value).sort()).toEqual([world.typeA.id, world.typeB.id].sort());
    expect(byField.risk).toEqual([
      { displayName: "Fire", value: "r2" },
      { displayName: "Leak", value: "r1" },
    ]);
    expect(byField[`properties.${world.severity.name}`].map((v: { value: number }) => v.value)).toEqual([2, 5, 9]);
    const refs = await call(`/Deviations/UniqueValues?ids=${world.d4.id}&fieldNames=referenceId`);
    expect(refs.body[0].values).toEqual([{ displayName: world.d4.referenceId, value: world.d4.referenceId }]);
  });

  it("400 without fieldNames or for an unknown field", async () => {
    expect((await call("/Deviations/UniqueValues")).status).toBe(400);
    const res = await call("/Deviations/UniqueValues?fieldNames=colour");
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe("query.fieldNames");
  });
});
