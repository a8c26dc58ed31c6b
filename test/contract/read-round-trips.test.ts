/**
 * A single read costs a fixed, small number of D1 round trips (issue 22, reads): a deviation with
 * everything it can show (type properties, designations, relationships, work item links) is ONE
 * round trip, its row and all its parts in one batch keyed by the id. The representation and the
 * ETag stay what they were: the same body as the list shows, and an ETag that changes when something
 * shown changes elsewhere (a renamed type or asset, a newly linked definition).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { countingDb } from "../support/counting-db";
import { createPropertyDefinition } from "../support/factories/properties";
import { createDeviation, createDeviationType, createPlantTree, insertWorkItem } from "../support/factories/work";
import { call, tokenFor } from "../support/http";

const app = createApp();
const counted = countingDb(env.DB);
const countedEnv = { ...env, DB: counted.db } as typeof env;

/** One GET through the app on the counting D1: its answer and its round trips (work after the response included). */
async function countedGet(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; etag: string | null; body: unknown; trips: number }> {
  const authorization = `Bearer ${await tokenFor()}`;
  // A first request records the caller in the users directory (once per isolate), which is not the read's cost.
  const warm = createExecutionContext();
  await app.fetch(new Request("https://api.test/Deviations?take=1", { headers: { authorization } }), countedEnv, warm);
  await waitOnExecutionContext(warm);
  counted.reset();
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`https://api.test${path}`, { headers: { authorization, ...headers } }), countedEnv, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, etag: res.headers.get("etag"), body: text ? JSON.parse(text) : null, trips: counted.count() };
}

let full: { id: string; typeId: string; plantId: string; equipmentId: string };

beforeAll(async () => {
  const severity = await createPropertyDefinition({ applicationRule: "Deviation", format: "integer" });
  const area = await createPropertyDefinition({ applicationRule: "Deviation", defaultValue: "yard" });
  const team = await createPropertyDefinition({ applicationRule: "Deviation", format: "entity", isMultiselect: true });
  const type = await createDeviationType({ propertyDefinitions: [{ id: severity.id }, { id: area.id }, { id: team.id }] });
  const tree = await createPlantTree();
  const other = await createDeviation({ description: "related" });
  const created = await createDeviation({
    typeId: type.id,
    assetReference: { mainSystem: { id: tree.mainSystem.id }, equipment: { id: tree.equipment.id } },
    properties: [
      { name: severity.name, value: 3 },
      {
        name: team.name,
        value: [
          { id: "u2", name: "Zoe" },
          { id: "u1", name: "Ann" },
        ],
      },
    ],
    relationships: [{ id: other.id }],
  });
  const workItem = await insertWorkItem();
  expect((await call(`/Deviations/${created.id}/WorkItems/${workItem.id}`, { method: "POST" })).status).toBeLessThan(300);
  full = { id: created.id, typeId: type.id, plantId: tree.plant.id, equipmentId: tree.equipment.id };
});

describe("GET /Deviations/{id} is one D1 round trip", () => {
  it("with type properties, designations, relationships and a work item link", async () => {
    const read = await countedGet(`/Deviations/${full.id}`);
    expect(read.status).toBe(200);
    const body = read.body as {
      properties: unknown[];
      relationships: unknown[];
      workItemIds: unknown[];
      assetReference: Record<string, unknown>;
    };
    expect(body.properties).toHaveLength(3);
    // A multiselect comes back whole, in the order it was stored.
    expect(body.properties[2]).toMatchObject({
      value: [
        { id: "u2", name: "Zoe" },
        { id: "u1", name: "Ann" },
      ],
    });
    expect(body.relationships).toHaveLength(1);
    expect(body.workItemIds).toHaveLength(1);
    expect(body.assetReference["equipment"]).toMatchObject({ id: full.equipmentId });
    expect(read.trips).toBe(1);
  });

  it("a 304 and a 404 are one round trip too", async () => {
    const first = await countedGet(`/Deviations/${full.id}`);
    const again = await countedGet(`/Deviations/${full.id}`, { "if-none-match": first.etag! });
    expect([again.status, again.trips]).toEqual([304, 1]);
    const missing = await countedGet(`/Deviations/${crypto.randomUUID()}`);
    expect([missing.status, missing.trips]).toEqual([404, 1]);
  });

  it("shows what the list shows for the same deviation, with the same ETag each time", async () => {
    const one = await call(`/Deviations/${full.id}`);
    const listed = await call(`/Deviations?ids=${full.id}`);
    expect(listed.body).toEqual([one.body]);
    expect((await call(`/Deviations/${full.id}`)).headers.get("etag")).toBe(one.headers.get("etag"));
  });
});

describe("the ETag still follows what the deviation shows from elsewhere", () => {
  const etagNow = async () => (await call(`/Deviations/${full.id}`)).headers.get("etag");

  it("changes when its type is renamed", async () => {
    const before = await etagNow();
    await env.DB.prepare("UPDATE entity_types SET name = name || ' (renamed)' WHERE id = ?1").bind(full.typeId).run();
    const after = await call(`/Deviations/${full.id}`);
    expect((after.body as { type: { name: string } }).type.name).toMatch(/\(renamed\)$/);
    expect(after.headers.get("etag")).not.toBe(before);
  });

  it("changes when a designated asset or its plant is renamed", async () => {
    const before = await etagNow();
    await env.DB.prepare("UPDATE assets SET name = name || ' (renamed)' WHERE id = ?1").bind(full.plantId).run();
    const after = await call(`/Deviations/${full.id}`);
    expect((after.body as { assetReference: { plant: { name: string } } }).assetReference.plant.name).toMatch(/\(renamed\)$/);
    expect(after.headers.get("etag")).not.toBe(before);
  });

  it("changes when its type links one more definition", async () => {
    const before = await etagNow();
    const extra = await createPropertyDefinition({ applicationRule: "Deviation", format: "text" });
    await env.DB.prepare("INSERT INTO entity_type_properties (entity_type_id, property_definition_id, position) VALUES (?1, ?2, 99)")
      .bind(full.typeId, extra.id)
      .run();
    const after = await call(`/Deviations/${full.id}`);
    expect((after.body as { properties: { name: string; value: unknown }[] }).properties.at(-1)).toEqual({ name: extra.name, value: null });
    expect(after.headers.get("etag")).not.toBe(before);
  });
});
