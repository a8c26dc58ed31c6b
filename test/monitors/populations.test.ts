/**
 * Populations as a resource of their own (issue 31): a model's and a monitor's populations are listed
 * on the shared list engine, read one by one and renamed by a whole-object PUT, on the resource
 * contract: the ETag is the owner's version (a population is part of its owner), If-Match is checked,
 * the read shape is taken back, and the owner's `updated` event is written.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PopulationSchema } from "../../src/monitors/populations/schema";
import { call } from "../support/http";
import { definition } from "./support";

const unique = (prefix: string) => `${prefix} ${crypto.randomUUID().slice(0, 8)}`;

async function created(path: string, body: unknown): Promise<{ id: string }> {
  const res = await call(path, { method: "POST", body });
  expect(res.status, `${path}: ${res.text}`).toBe(201);
  return res.body;
}

async function model(): Promise<string> {
  const def = await definition("External");
  return (
    await created("/Models", {
      name: unique("model"),
      modelDefinitionName: def.name,
      modelDefinitionVersion: def.version,
      cpuCores: 1,
      memory: 1,
    })
  ).id;
}

/** A model or monitor with three populations (created in the order pumps, plants, lines) and a pump in the first. */
async function ownerWithPopulations(resource: "Models" | "Monitors") {
  const modelId = await model();
  const id = resource === "Models" ? modelId : (await created("/Monitors", { name: unique("monitor"), modelId })).id;
  const pumps = await created(`/${resource}/${id}/Populations`, { name: "Pumps", description: "feed pumps", assetType: "Equipment" });
  const plants = await created(`/${resource}/${id}/Populations`, { name: "plants", assetType: "Plant" });
  const lines = await created(`/${resource}/${id}/Populations`, { name: "Lines", description: "pump lines", assetType: "MainSystem" });
  const plant = await created("/Assets", { name: unique("plant"), kind: "plant" });
  const pump = await created("/Assets", { name: unique("pump"), kind: "equipment", parentId: plant.id });
  await created(`/${resource}/${id}/Populations/${pumps.id}/Items`, { assetReference: { id: pump.id } });
  return { id, pumps: pumps.id, plants: plants.id, lines: lines.id, pump: pump.id };
}

async function eventsOf(entityId: string): Promise<{ action: string; payload: Record<string, unknown> }[]> {
  const { results } = await env.DB.prepare("SELECT action, payload FROM outbox WHERE entity_id = ?1 ORDER BY seq")
    .bind(entityId)
    .all<{ action: string; payload: string }>();
  return results.map((r) => ({ action: r.action, payload: JSON.parse(r.payload) as Record<string, unknown> }));
}

const ids = (body: { id: string }[]) => body.map((p) => p.id);

describe.each(["Models", "Monitors"] as const)("the populations of %s", (resource) => {
  it("are listed in the order their owner shows them, with their items, on the list engine's filters and paging", async () => {
    const owner = await ownerWithPopulations(resource);
    const all = await call(`/${resource}/${owner.id}/Populations`);
    expect(all.status, all.text).toBe(200);
    expect(ids(all.body)).toEqual([owner.pumps, owner.plants, owner.lines]);
    for (const population of all.body) PopulationSchema.parse(population);
    expect(all.body[0]).toMatchObject({ name: "Pumps", description: "feed pumps", assetType: "Equipment" });
    expect(all.body[0].items.map((i: { assetReference: { id: string } }) => i.assetReference.id)).toEqual([owner.pump]);
    expect(all.body[1].items).toEqual([]);
    // What the owner shows, the list shows.
    expect(all.body).toEqual((await call(`/${resource}/${owner.id}`)).body.populations);

    const page = await call(`/${resource}/${owner.id}/Populations?skip=1&take=1&includeTotal=true`);
    expect(ids(page.body)).toEqual([owner.plants]);
    expect(page.headers.get("x-total-count")).toBe("3");
    expect(ids((await call(`/${resource}/${owner.id}/Populations?order=name asc`)).body)).toEqual([owner.lines, owner.plants, owner.pumps]);
    expect(ids((await call(`/${resource}/${owner.id}/Populations?searchText=pump`)).body)).toEqual([owner.pumps, owner.lines]);
    expect(ids((await call(`/${resource}/${owner.id}/Populations?assetTypes=Plant,MainSystem`)).body)).toEqual([owner.plants, owner.lines]);
    expect(ids((await call(`/${resource}/${owner.id}/Populations?ids=${owner.lines},${owner.pumps}`)).body)).toEqual([
      owner.pumps,
      owner.lines,
    ]);
    const wrongType = await call(`/${resource}/${owner.id}/Populations?assetTypes=Pump`);
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors[0]).toMatchObject({ field: "query.assetTypes" });
    // Another owner's populations are not among them.
    const other = await ownerWithPopulations(resource);
    expect(ids((await call(`/${resource}/${owner.id}/Populations?ids=${other.pumps}`)).body)).toEqual([]);
  });

  it("reads one population with its owner's version, and answers 304 to that version", async () => {
    const owner = await ownerWithPopulations(resource);
    const read = await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`);
    expect(read.status, read.text).toBe(200);
    expect(PopulationSchema.parse(read.body)).toMatchObject({ id: owner.pumps, name: "Pumps", assetType: "Equipment" });
    expect(read.body.items).toHaveLength(1);
    const etag = read.headers.get("etag");
    expect(etag).toBe((await call(`/${resource}/${owner.id}`)).headers.get("etag"));
    expect((await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`, { headers: { "if-none-match": etag! } })).status).toBe(304);
    // A change of another population is a new version of the owner, so of this one too.
    await created(`/${resource}/${owner.id}/Populations`, { name: "more", assetType: "Plant" });
    const after = await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`, { headers: { "if-none-match": etag! } });
    expect(after.status).toBe(200);
  });

  it("renames a population by a whole-object PUT of what it read: a new version of its owner, with the owner's event", async () => {
    const owner = await ownerWithPopulations(resource);
    const read = await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`);
    const put = await call(`/${resource}/${owner.id}/Populations`, {
      method: "PUT",
      body: { ...read.body, name: "Feed pumps", description: null },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(put.status, put.text).toBe(200);
    expect(PopulationSchema.parse(put.body)).toEqual({ ...read.body, name: "Feed pumps", description: null });
    const after = await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`);
    expect(after.body).toEqual(put.body);
    expect(after.headers.get("etag")).toBe(put.headers.get("etag"));
    expect(after.headers.get("etag")).not.toBe(read.headers.get("etag"));
    expect((await call(`/${resource}/${owner.id}`)).headers.get("etag")).toBe(put.headers.get("etag"));
    const kind = resource === "Models" ? "model" : "monitor";
    expect((await eventsOf(owner.id)).at(-1)).toEqual({
      action: "updated",
      payload: { id: owner.id, change: "populationUpdated", populationId: owner.pumps },
    });
    const { results } = await env.DB.prepare("SELECT entity_kind FROM outbox WHERE entity_id = ?1 ORDER BY seq DESC LIMIT 1")
      .bind(owner.id)
      .all<{ entity_kind: string }>();
    expect(results[0]!.entity_kind).toBe(kind);

    // The asset type and items are read-only: sent changed, they are ignored.
    const readOnly = await call(`/${resource}/${owner.id}/Populations`, {
      method: "PUT",
      body: { ...after.body, assetType: "Plant", items: [] },
    });
    expect(readOnly.status, readOnly.text).toBe(200);
    expect(readOnly.body).toMatchObject({ assetType: "Equipment", items: after.body.items });
  });

  it("refuses a stale If-Match (412) and writes no event", async () => {
    const owner = await ownerWithPopulations(resource);
    const read = await call(`/${resource}/${owner.id}/Populations/${owner.plants}`);
    const etag = read.headers.get("etag")!;
    await call(`/${resource}/${owner.id}/Populations`, {
      method: "PUT",
      body: { ...read.body, name: "first" },
      headers: { "if-match": etag },
    });
    const events = await eventsOf(owner.id);
    const stale = await call(`/${resource}/${owner.id}/Populations`, {
      method: "PUT",
      body: { ...read.body, name: "second" },
      headers: { "if-match": etag },
    });
    expect(stale.status, stale.text).toBe(412);
    expect((await call(`/${resource}/${owner.id}/Populations/${owner.plants}`)).body.name).toBe("first");
    expect(await eventsOf(owner.id)).toEqual(events);
  });

  it("answers 400 naming the field and the rule", async () => {
    const owner = await ownerWithPopulations(resource);
    const read = (await call(`/${resource}/${owner.id}/Populations/${owner.plants}`)).body;
    const put = (body: unknown) => call(`/${resource}/${owner.id}/Populations`, { method: "PUT", body });
    const blank = await put({ ...read, name: "  " });
    expect(blank.status, blank.text).toBe(400);
    expect(blank.headers.get("content-type")).toContain("application/problem+json");
    expect(blank.body).toMatchObject({ type: "urn:integrity-edge:problem:ValidationFailed", status: 400 });
    expect(blank.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "too_small" }));
    const long = await put({ ...read, description: "x".repeat(4001) });
    expect(long.status).toBe(400);
    expect(long.body.errors).toContainEqual(expect.objectContaining({ field: "body.description", rule: "too_big" }));
    const unknownKey = await put({ ...read, criticality: 3 });
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.errors[0]).toMatchObject({ rule: "unrecognized_keys" });
    expect(unknownKey.body.detail).toContain("criticality");
    const noId = await put({ name: "x", description: null });
    expect(noId.status).toBe(400);
    expect(noId.body.errors[0]).toMatchObject({ field: "body.id", rule: "invalid_type" });
    const badQuery = await call(`/${resource}/${owner.id}/Populations?order=criticality desc`);
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.errors[0]).toMatchObject({ field: "query.order", rule: "unknownField" });
  });

  it("answers 404 for an unknown owner, an unknown population and another owner's population", async () => {
    const owner = await ownerWithPopulations(resource);
    const other = await ownerWithPopulations(resource);
    const nobody = crypto.randomUUID();
    expect((await call(`/${resource}/${nobody}/Populations`)).status).toBe(404);
    expect((await call(`/${resource}/${nobody}/Populations/${owner.pumps}`)).status).toBe(404);
    expect((await call(`/${resource}/${owner.id}/Populations/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await call(`/${resource}/${owner.id}/Populations/${other.pumps}`)).status).toBe(404);
    const read = (await call(`/${resource}/${other.id}/Populations/${other.pumps}`)).body;
    const elsewhere = await call(`/${resource}/${owner.id}/Populations`, { method: "PUT", body: { ...read, name: "moved" } });
    expect(elsewhere.status, elsewhere.text).toBe(404);
    expect(elsewhere.body).toMatchObject({ type: "urn:integrity-edge:problem:NotFound", status: 404 });
    expect((await call(`/${resource}/${nobody}/Populations`, { method: "PUT", body: { ...read, name: "moved" } })).status).toBe(404);
    expect((await call(`/${resource}/${other.id}/Populations/${other.pumps}`)).body.name).toBe("Pumps");
  });

  it("needs monitors_read to read and monitors_write to rename (403 without)", async () => {
    const owner = await ownerWithPopulations(resource);
    const reader = { id: "population-reader", name: "Reader", permissions: ["monitors_read"] };
    const nobody = { id: "population-nobody", name: "Nobody", permissions: ["work_read"] };
    expect((await call(`/${resource}/${owner.id}/Populations`, { user: nobody })).status).toBe(403);
    expect((await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`, { user: nobody })).status).toBe(403);
    const read = await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`, { user: reader });
    expect(read.status, read.text).toBe(200);
    const refused = await call(`/${resource}/${owner.id}/Populations`, {
      method: "PUT",
      body: { ...read.body, name: "renamed" },
      user: reader,
    });
    expect(refused.status, refused.text).toBe(403);
    expect((await call(`/${resource}/${owner.id}/Populations/${owner.pumps}`)).body.name).toBe("Pumps");
  });
});
