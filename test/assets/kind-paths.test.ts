/**
 * The asset catalogue under one path per kind (/Plants, /MainSystems, /Equipment, /Organizations and
 * the singular spellings): every method narrowed to the path's kind, with the catalogue's own rules
 * (parents, unique plant names, If-Match, events, permissions) unchanged.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createAsset, createPlantTree, eventsOf, unique } from "../support/factories/work";

describe("asset kind paths: writes", () => {
  it("POST creates an asset of the path's kind, with or without kind in the body, and answers its Location", async () => {
    const without = await call("/Organizations", { method: "POST", body: { name: unique("org") } });
    expect(without.status, without.text).toBe(201);
    expect(without.body).toMatchObject({ kind: "organization", parentId: null });
    expect(without.headers.get("location")).toBe(`/Organizations/${without.body.id}`);
    expect(without.headers.get("etag")).toBeTruthy();
    const withKind = await call("/Plants", { method: "POST", body: { name: unique("plant"), kind: "plant", parentId: without.body.id } });
    expect(withKind.status, withKind.text).toBe(201);
    expect(withKind.body).toMatchObject({ kind: "plant", parent: { id: without.body.id, kind: "organization" } });
    expect((await call(`/Assets/${withKind.body.id}`)).body).toEqual(withKind.body);
    expect((await eventsOf(withKind.body.id)).map((e) => [e.kind, e.action])).toEqual([["asset", "created"]]);
  });

  it("keeps the catalogue's rules: parent kinds, unique plant names, unknown fields", async () => {
    const orphan = await call("/MainSystems", { method: "POST", body: { name: unique("ms") } });
    expect(orphan.status).toBe(400);
    expect(orphan.body.errors).toContainEqual(expect.objectContaining({ field: "body.parentId", rule: "required" }));
    const plant = await createAsset("plant");
    const twin = await call("/Plants", { method: "POST", body: { name: String(plant.name).toUpperCase() } });
    expect(twin.status).toBe(409);
    const unknown = await call("/Equipment", { method: "POST", body: { name: "x", parentId: plant.id, colour: "red" } });
    expect(unknown.status).toBe(400);
    const otherKind = await call("/Equipment", { method: "POST", body: { name: "x", parentId: plant.id, kind: "designObject" } });
    expect(otherKind.status).toBe(400);
    expect(otherKind.body.errors).toEqual([expect.objectContaining({ field: "body.kind", rule: "assetKind" })]);
  });

  it("PUT replaces an asset of the path's kind, honours If-Match, and is a 404 for another kind", async () => {
    const { plant, mainSystem } = await createPlantTree();
    const read = await call(`/MainSystems/${mainSystem.id}`);
    const etag = read.headers.get("etag")!;
    const name = unique("renamed ms");
    const { kind: _kind, ...withoutKind } = read.body;
    const put = await call("/MainSystems", { method: "PUT", body: { ...withoutKind, name }, headers: { "if-match": etag } });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ id: mainSystem.id, kind: "mainSystem", name, parentId: plant.id });
    const stale = await call("/MainSystems", {
      method: "PUT",
      body: { ...read.body, name: unique("late") },
      headers: { "if-match": etag },
    });
    expect(stale.status).toBe(412);
    const wrongPath = await call("/Plants", { method: "PUT", body: { ...put.body, name: unique("through plants") } });
    expect(wrongPath.status).toBe(404);
    expect((await call(`/Assets/${mainSystem.id}`)).body.name).toBe(name);
    expect((await call("/Plants", { method: "PUT", body: { id: crypto.randomUUID(), name: "x" } })).status).toBe(404);
    expect((await eventsOf(mainSystem.id)).map((e) => e.action)).toEqual(["created", "updated"]);
  });

  it("DELETE removes an unused asset of the path's kind (If-Match, 409 InUse) and is a 404 for another kind", async () => {
    const { plant, mainSystem, equipment } = await createPlantTree();
    expect((await call(`/Equipment/${mainSystem.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await call(`/MainSystems/${mainSystem.id}`, { method: "DELETE" })).status).toBe(409);
    expect((await call(`/Equipment/${equipment.id}`, { method: "DELETE", headers: { "if-match": '"stale"' } })).status).toBe(412);
    expect((await call(`/Equipment/${equipment.id}`, { method: "DELETE", headers: { "if-match": equipment.etag } })).status).toBe(204);
    expect((await call(`/Assets/${equipment.id}`)).status).toBe(404);
    expect((await call(`/Plants/${plant.id}`)).status).toBe(200);
    expect((await eventsOf(equipment.id)).map((e) => e.action)).toEqual(["created", "deleted"]);
  });
});

describe("asset kind paths: reads", () => {
  it("lists one kind with the catalogue's filters and paging", async () => {
    const a = await createPlantTree();
    const b = await createPlantTree();
    const extra = await createAsset("mainSystem", a.plant.id);
    const ids = [a, b]
      .flatMap((t) => [t.plant.id, t.mainSystem.id, t.equipment.id])
      .concat(extra.id)
      .join(",");
    const list = async (path: string) => ((await call(path)).body as { id: string }[]).map((x) => x.id).sort();
    expect(await list(`/MainSystems?ids=${ids}`)).toEqual([a.mainSystem.id, b.mainSystem.id, extra.id].sort());
    expect(await list(`/MainSystems?ids=${ids}&parentIds=${a.plant.id}`)).toEqual([a.mainSystem.id, extra.id].sort());
    expect(await list(`/Equipment?ids=${ids}&plantNames=${encodeURIComponent(String(b.plant.name))}`)).toEqual([b.equipment.id]);
    const page = await call(`/MainSystems?ids=${ids}&order=name asc&take=1&skip=1&includeTotal=true`);
    expect(page.headers.get("x-total-count")).toBe("3");
    expect(page.body).toHaveLength(1);
    expect((await call("/MainSystems?kinds=plant")).status).toBe(400); // the path is the kind
  });

  it("GET /MainSystems/{id}/DesignObjects pages a main system's design objects; 404 for another kind or an unknown id", async () => {
    const { plant, mainSystem, designObject } = await createPlantTree();
    const second = await createAsset("designObject", mainSystem.id);
    await createAsset("designObject", plant.id);
    await createAsset("equipment", mainSystem.id);
    const all = await call(`/MainSystems/${mainSystem.id}/DesignObjects?includeTotal=true`);
    expect(all.status, all.text).toBe(200);
    expect(all.headers.get("x-total-count")).toBe("2");
    expect((all.body as { id: string }[]).map((x) => x.id).sort()).toEqual([designObject.id, second.id].sort());
    const page = await call(`/MainSystem/${mainSystem.id}/DesignObjects?order=name desc&take=1`);
    expect(page.body).toHaveLength(1);
    expect((await call(`/MainSystems/${plant.id}/DesignObjects`)).status).toBe(404);
    expect((await call(`/MainSystems/${crypto.randomUUID()}/DesignObjects`)).status).toBe(404);
  });

  it("documents each kind's shape under the client's object name", async () => {
    const doc = (await call("/openapi.json", { anonymous: true })).body as {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, Record<string, unknown>>;
    };
    for (const name of ["Plant", "MainSystem", "Equipment", "Organization", "DesignObject"])
      expect(Object.keys(doc.components.schemas)).toContain(name);
    for (const path of ["/Plants", "/MainSystems", "/Equipment", "/Organizations"])
      expect(Object.keys(doc.paths[path]!).sort()).toEqual(["get", "post", "put"]);
    expect(Object.keys(doc.paths["/MainSystems/{id}"]!).sort()).toEqual(["delete", "get"]);
  });
});

describe("asset kind paths: security", () => {
  it.each<[string, string, Record<string, unknown> | undefined]>([
    ["GET", "/Plants", undefined],
    ["GET", `/MainSystems/${crypto.randomUUID()}`, undefined],
    ["GET", `/MainSystems/${crypto.randomUUID()}/DesignObjects`, undefined],
    ["POST", "/Organizations", { name: "x" }],
    ["PUT", "/Equipment", { id: crypto.randomUUID(), name: "x" }],
    ["DELETE", `/Plants/${crypto.randomUUID()}`, undefined],
  ])("%s %s: 401 without a token, 403 without the permission", async (method, path, body) => {
    expect((await call(path, { method, body, anonymous: true })).status).toBe(401);
    const permission = method === "GET" ? "assets_write" : "assets_read";
    expect((await call(path, { method, body, user: { permissions: [permission] } })).status).toBe(403);
  });
});
