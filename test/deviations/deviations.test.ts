import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DeviationSchema } from "../../src/deviations/schema";
import { call } from "../support/http";
import { createPropertyDefinition } from "../support/factories/properties";
import { createAsset, createDeviation, createDeviationType, createPlantTree, eventsOf, unique } from "../support/factories/work";

const GENERAL = "00000000-0000-4000-8000-000000000001";
const CALLER = { id: "inspector-7", name: "Ivy Inspector" };

async function typeWithProperties() {
  const severity = await createPropertyDefinition({ applicationRule: "Deviation", format: "integer" });
  const area = await createPropertyDefinition({ applicationRule: "Deviation", defaultValue: "yard" });
  const own = await createPropertyDefinition({ applicationRule: "deviationType" });
  const type = await createDeviationType({ propertyDefinitions: [{ id: severity.id }, { id: own.id }, { id: area.id }] });
  return { type, severity, area, own };
}

describe("deviations: create and read", () => {
  it("creates with defaults: General, status new, the caller as owner, a generated referenceId", async () => {
    const res = await call("/Deviations", { method: "POST", body: {}, user: CALLER });
    expect(res.status).toBe(201);
    expect(DeviationSchema.safeParse(res.body).success).toBe(true);
    const id: string = res.body.id;
    expect(res.body).toMatchObject({
      referenceId: `DEV-${id.replace(/-/g, "").slice(0, 8).toUpperCase()}`,
      status: "new",
      type: { id: GENERAL, name: "General" },
      objectOwner: CALLER,
      risk: null,
      assetReference: { mainSystem: null, designObject: null, equipment: null, plant: null },
      properties: [],
      relationships: [],
      workItemIds: [],
      description: null,
      metadata: null,
    });
    expect(res.headers.get("location")).toBe(`/Deviations/${id}`);
    const read = await call(`/Deviations/${id}`);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
    expect((await call(`/Deviations/${id}`, { headers: { "if-none-match": res.headers.get("etag")! } })).status).toBe(304);
    const events = await eventsOf(id);
    expect(events.map((e) => [e.kind, e.action])).toEqual([["deviation", "created"]]);
    expect(events[0]!.payload).toEqual(res.body);
  });

  it("stores every field: type properties (Deviation rule only), risk, owner, asset reference with the derived plant", async () => {
    const { type, severity, area } = await typeWithProperties();
    const tree = await createPlantTree();
    const body = {
      referenceId: unique("REF"),
      description: "Pitting",
      status: "active",
      typeId: type.id,
      objectOwner: { id: "owner-9", name: "Otto" },
      risk: { id: "risk-1", name: "Leak" },
      assetReference: {
        mainSystem: { id: tree.mainSystem.id },
        equipment: { id: tree.equipment.id },
        designObject: { id: tree.designObject.id },
      },
      properties: [{ name: severity.name, value: 4 }],
      metadata: { source: "drone" },
    };
    const res = await call("/Deviations", { method: "POST", body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      referenceId: body.referenceId,
      status: "active",
      type: { id: type.id, name: type.name },
      objectOwner: { id: "owner-9", name: "Otto" },
      risk: { id: "risk-1", name: "Leak" },
      assetReference: {
        mainSystem: { id: tree.mainSystem.id, kind: "mainSystem", plant: { id: tree.plant.id } },
        equipment: { id: tree.equipment.id, kind: "equipment" },
        designObject: { id: tree.designObject.id, kind: "designObject" },
        plant: { id: tree.plant.id, name: tree.plant.name },
      },
      // Link order; the deviationType definition is not a deviation property; a missing one takes its default.
      properties: [
        { name: severity.name, value: 4 },
        { name: area.name, value: "yard" },
      ],
      metadata: { source: "drone" },
    });
    expect((await call(`/Deviations/${res.body.id}`)).body).toEqual(res.body);
    const rows = await env.DB.prepare(
      "SELECT asset_kind, derived FROM designations WHERE entity_kind = 'deviation' AND entity_id = ?1 ORDER BY asset_kind",
    )
      .bind(res.body.id)
      .all<{ asset_kind: string; derived: number }>();
    expect(rows.results).toEqual([
      { asset_kind: "designObject", derived: 0 },
      { asset_kind: "equipment", derived: 0 },
      { asset_kind: "mainSystem", derived: 0 },
      { asset_kind: "plant", derived: 1 },
    ]);
  });

  it("409 for a referenceId that exists (ignoring case), naming body.referenceId", async () => {
    const first = await createDeviation({ referenceId: unique("dup") });
    const res = await call("/Deviations", { method: "POST", body: { referenceId: String(first.referenceId).toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.referenceId", rule: "unique" }));
  });
});

describe("deviations: validation", () => {
  it("lists every problem in one 400", async () => {
    const res = await call("/Deviations", {
      method: "POST",
      body: {
        status: "nonsense",
        typeId: crypto.randomUUID(),
        relationships: [{ id: crypto.randomUUID() }],
        assetReference: { equipment: { id: crypto.randomUUID() } },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      ["body.assetReference.equipment.id", "body.relationships.0.id", "body.status", "body.typeId"].sort(),
    );
  });

  it.each<[string, () => Promise<Record<string, unknown>>, string, string]>([
    [
      "a type that is not a deviation type",
      async () => ({
        typeId: (await call("/EntityTypes", { method: "POST", body: { name: unique("w"), appliesTo: "WorkItem" } })).body.id,
      }),
      "body.typeId",
      "exists",
    ],
    ["an unknown property", async () => ({ properties: [{ name: "nope", value: 1 }] }), "body.properties.0.name", "unknownProperty"],
    [
      "a deviationType-rule property",
      async () => {
        const { type, own } = await typeWithProperties();
        return { typeId: type.id, properties: [{ name: own.name, value: "x" }] };
      },
      "body.properties.0.name",
      "unknownProperty",
    ],
    [
      "a value of the wrong format",
      async () => {
        const { type, severity } = await typeWithProperties();
        return { typeId: type.id, properties: [{ name: severity.name, value: "high" }] };
      },
      "body.properties.0.value",
      "type",
    ],
    [
      "a plant as main system",
      async () => ({ assetReference: { mainSystem: { id: (await createAsset("plant")).id } } }),
      "body.assetReference.mainSystem.id",
      "assetKind",
    ],
    [
      "equipment outside the main system",
      async () => {
        const a = await createPlantTree();
        const other = await createAsset("mainSystem", a.plant.id);
        return { assetReference: { mainSystem: { id: other.id }, equipment: { id: a.equipment.id } } };
      },
      "body.assetReference.equipment.id",
      "belongsTo",
    ],
    [
      "a design object outside the main system",
      async () => {
        const a = await createPlantTree();
        const other = await createAsset("mainSystem", a.plant.id);
        return { assetReference: { mainSystem: { id: other.id }, designObject: { id: a.designObject.id } } };
      },
      "body.assetReference.designObject.id",
      "belongsTo",
    ],
    [
      "equipment and a design object of two plants",
      async () => {
        const [a, b] = [await createPlantTree(), await createPlantTree()];
        return { assetReference: { equipment: { id: a.equipment.id }, designObject: { id: b.designObject.id } } };
      },
      "body.assetReference.equipment.id",
      "samePlant",
    ],
    [
      "a duplicate relationship",
      async () => {
        const other = await createDeviation();
        return { relationships: [{ id: other.id }, { id: other.id }] };
      },
      "body.relationships.1.id",
      "unique",
    ],
    ["a bad risk", async () => ({ risk: { name: "no id" } }), "body.risk.id", "invalid_type"],
    ["an unknown field", async () => ({ colour: "red" }), "body", "unrecognized_keys"],
  ])("400 for %s", async (_, body, field, rule) => {
    const res = await call("/Deviations", { method: "POST", body: await body() });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
  });

  it("accepts equipment directly under the plant without a main system", async () => {
    const plant = await createAsset("plant");
    const equipment = await createAsset("equipment", plant.id);
    const designObject = await createAsset("designObject", plant.id);
    const res = await createDeviation({ assetReference: { equipment: { id: equipment.id }, designObject: { id: designObject.id } } });
    expect(res.assetReference).toMatchObject({ plant: { id: plant.id }, mainSystem: null });
  });
});

describe("deviations: relationships", () => {
  it("are symmetric: both sides list each other; PUT replaces the list and the reverse rows", async () => {
    const a = await createDeviation({ referenceId: unique("A") });
    const b = await createDeviation({ referenceId: unique("B") });
    const c = await createDeviation({ referenceId: unique("C"), relationships: [{ id: a.id }, { id: b.id }] });
    expect(c.relationships).toEqual([
      { id: a.id, referenceId: a.referenceId },
      { id: b.id, referenceId: b.referenceId },
    ]);
    const aRead = await call(`/Deviations/${a.id}`);
    expect(aRead.body.relationships).toEqual([{ id: c.id, referenceId: c.referenceId }]);
    // a's representation changed, so its old ETag no longer matches.
    expect(aRead.headers.get("etag")).not.toBe(a.etag);
    expect(
      (await call("/Deviations", { method: "PUT", body: { id: a.id, relationships: [] }, headers: { "if-match": a.etag } })).status,
    ).toBe(412);

    const read = await call(`/Deviations/${c.id}`);
    const put = await call("/Deviations", {
      method: "PUT",
      body: { ...read.body, relationships: [{ id: b.id }] },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(put.status).toBe(200);
    expect(put.body.relationships).toEqual([{ id: b.id, referenceId: b.referenceId }]);
    expect((await call(`/Deviations/${a.id}`)).body.relationships).toEqual([]);
    expect((await call(`/Deviations/${b.id}`)).body.relationships).toEqual([{ id: c.id, referenceId: c.referenceId }]);
  });

  it("refuses a self-link on PUT (400 self)", async () => {
    const a = await createDeviation();
    const res = await call("/Deviations", { method: "PUT", body: { id: a.id, relationships: [{ id: a.id }] } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.relationships.0.id", rule: "self" }));
  });

  it("delete removes the relationships on both sides, designations and property values in one go", async () => {
    const { type, severity } = await typeWithProperties();
    const tree = await createPlantTree();
    const other = await createDeviation();
    const doomed = await createDeviation({
      typeId: type.id,
      properties: [{ name: severity.name, value: 2 }],
      relationships: [{ id: other.id }],
      assetReference: { equipment: { id: tree.equipment.id } },
    });
    const res = await call(`/Deviations/${doomed.id}`, { method: "DELETE", headers: { "if-match": doomed.etag } });
    expect(res.status).toBe(204);
    expect((await call(`/Deviations/${doomed.id}`)).status).toBe(404);
    expect((await call(`/Deviations/${other.id}`)).body.relationships).toEqual([]);
    const left = await env.DB.prepare(
      `SELECT (SELECT count(*) FROM designations WHERE entity_id = ?1) + (SELECT count(*) FROM property_values WHERE entity_id = ?1)
            + (SELECT count(*) FROM deviation_relationships WHERE deviation_id = ?1 OR related_id = ?1) AS n`,
    )
      .bind(doomed.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    expect((await eventsOf(doomed.id)).map((e) => e.action)).toEqual(["created", "deleted"]);
  });
});

describe("deviations: replace", () => {
  it("PUT keeps referenceId, type and owner when absent, replaces the rest, and writes an event", async () => {
    const { type, severity } = await typeWithProperties();
    const tree = await createPlantTree();
    const created = await createDeviation({ typeId: type.id, status: "active", properties: [{ name: severity.name, value: 1 }] });
    const res = await call("/Deviations", {
      method: "PUT",
      body: {
        id: created.id,
        description: "Now cracked",
        properties: [{ name: severity.name, value: 5 }],
        assetReference: { mainSystem: { id: tree.mainSystem.id } },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      referenceId: created.referenceId,
      type: { id: type.id },
      objectOwner: created.objectOwner,
      status: "new",
      description: "Now cracked",
      assetReference: { mainSystem: { id: tree.mainSystem.id }, plant: { id: tree.plant.id } },
    });
    expect(res.body.properties[0]).toEqual({ name: severity.name, value: 5 });
    expect((await call(`/Deviations/${created.id}`)).body).toEqual(res.body);
    const events = await eventsOf(created.id);
    expect(events.map((e) => e.action)).toEqual(["created", "updated"]);
    expect(events[1]!.payload).toEqual(res.body);
  });

  it("a read sent back unchanged is accepted", async () => {
    const tree = await createPlantTree();
    const created = await createDeviation({
      risk: { id: "r", name: null },
      assetReference: { equipment: { id: tree.equipment.id } },
      relationships: [{ id: (await createDeviation()).id }],
    });
    const read = await call(`/Deviations/${created.id}`);
    const res = await call("/Deviations", { method: "PUT", body: read.body, headers: { "if-match": read.headers.get("etag")! } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect({ ...res.body, updatedAt: null }).toEqual({ ...read.body, updatedAt: null });
  });

  it("412 with a stale If-Match on PUT and DELETE; 404 for an unknown id", async () => {
    const created = await createDeviation();
    await call("/Deviations", { method: "PUT", body: { id: created.id, description: "changed" } });
    expect((await call("/Deviations", { method: "PUT", body: { id: created.id }, headers: { "if-match": created.etag } })).status).toBe(
      412,
    );
    const del = await call(`/Deviations/${created.id}`, { method: "DELETE", headers: { "if-match": created.etag } });
    expect(del.status).toBe(412);
    expect(del.body.code).toBe("PreconditionFailed");
    const id = crypto.randomUUID();
    expect((await call(`/Deviations/${id}`)).status).toBe(404);
    expect((await call("/Deviations", { method: "PUT", body: { id } })).status).toBe(404);
    expect((await call(`/Deviations/${id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("409 when PUT takes another deviation's referenceId", async () => {
    const a = await createDeviation({ referenceId: unique("taken") });
    const b = await createDeviation();
    const res = await call("/Deviations", { method: "PUT", body: { id: b.id, referenceId: String(a.referenceId).toLowerCase() } });
    expect(res.status).toBe(409);
    expect(res.body.errors[0].field).toBe("body.referenceId");
  });
});

describe("deviations: security", () => {
  it.each<[string, string, Record<string, unknown> | undefined]>([
    ["GET", "/Deviations", undefined],
    ["GET", "/Deviations/UniqueValues?fieldNames=status", undefined],
    ["GET", `/Deviations/${crypto.randomUUID()}`, undefined],
    ["POST", "/Deviations", {}],
    ["PUT", "/Deviations", { id: crypto.randomUUID() }],
    ["DELETE", `/Deviations/${crypto.randomUUID()}`, undefined],
  ])("%s %s: 401 without a token, 403 without the permission", async (method, path, body) => {
    expect((await call(path, { method, body, anonymous: true })).status).toBe(401);
    expect((await call(path, { method, body, user: { permissions: [method === "GET" ? "work_write" : "work_read"] } })).status).toBe(403);
  });
});
