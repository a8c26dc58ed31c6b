import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AssetSchema } from "../../src/assets/schema";
import { call } from "../support/http";
import { createAsset, createDeviation, createPlantTree, eventsOf, unique } from "../support/factories/work";

describe("assets: create, read, replace, delete", () => {
  it("creates a tree, derives each asset's plant, and reads it back with its ETag", async () => {
    const organization = await createAsset("organization");
    const plant = await createAsset("plant", organization.id, { metadata: { region: "north" } });
    const mainSystem = await createAsset("mainSystem", plant.id);
    const equipment = await createAsset("equipment", mainSystem.id);
    const direct = await createAsset("equipment", plant.id);
    expect(AssetSchema.safeParse(plant).success).toBe(true);
    expect(plant).toMatchObject({
      kind: "plant",
      parentId: organization.id,
      parent: { id: organization.id, kind: "organization" },
      plant: { id: plant.id },
      metadata: { region: "north" },
    });
    expect(organization).toMatchObject({ parent: null, plant: null });
    expect(equipment).toMatchObject({ parent: { id: mainSystem.id, kind: "mainSystem" }, plant: { id: plant.id, name: plant.name } });
    expect(direct).toMatchObject({ plant: { id: plant.id } });
    const res = await call(`/Assets/${equipment.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe(equipment.etag);
    const { etag: _etag, ...body } = equipment;
    expect(res.body).toEqual(body);
    expect((await call(`/Assets/${equipment.id}`, { headers: { "if-none-match": equipment.etag } })).status).toBe(304);
    expect((await eventsOf(equipment.id)).map((e) => [e.kind, e.action])).toEqual([["asset", "created"]]);
  });

  it("renaming the parent or the plant changes a child's ETag, so a cached read is not served stale", async () => {
    const plant = await createAsset("plant");
    const mainSystem = await createAsset("mainSystem", plant.id);
    const equipment = await createAsset("equipment", mainSystem.id);
    const rename = async (id: string) => {
      const read = await call(`/Assets/${id}`);
      expect((await call("/Assets", { method: "PUT", body: { ...read.body, name: unique("renamed") } })).status).toBe(200);
    };
    await rename(mainSystem.id);
    const afterParent = await call(`/Assets/${equipment.id}`, { headers: { "if-none-match": equipment.etag } });
    expect(afterParent.status).toBe(200);
    expect(afterParent.body.parent.name).not.toBe(mainSystem.name);
    const etag = afterParent.headers.get("etag")!;
    await rename(plant.id);
    const afterPlant = await call(`/Assets/${equipment.id}`, { headers: { "if-none-match": etag } });
    expect(afterPlant.status).toBe(200);
    // If-Match with the ETag read before the plant's rename is stale too.
    const stale = await call("/Assets", {
      method: "PUT",
      body: { ...afterPlant.body, name: unique("late") },
      headers: { "if-match": etag },
    });
    expect(stale.status).toBe(412);
    const fresh = await call("/Assets", {
      method: "PUT",
      body: { ...afterPlant.body, name: unique("ok") },
      headers: { "if-match": afterPlant.headers.get("etag")! },
    });
    expect(fresh.status).toBe(200);
  });

  it("PUT renames and replaces metadata, honours If-Match, and a read can be sent back", async () => {
    const { plant } = await createPlantTree();
    const read = await call(`/Assets/${plant.id}`);
    const name = unique("renamed");
    const res = await call("/Assets", {
      method: "PUT",
      body: { ...read.body, name, metadata: null },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name, metadata: null, plant: { id: plant.id, name } });
    const stale = await call("/Assets", {
      method: "PUT",
      body: { ...read.body, name: unique("late") },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe("PreconditionFailed");
    expect((await eventsOf(plant.id)).map((e) => e.action)).toEqual(["created", "updated"]);
  });

  it("deletes an unused asset (204, then 404) with an event", async () => {
    const asset = await createAsset("organization");
    expect((await call(`/Assets/${asset.id}`, { method: "DELETE", headers: { "if-match": asset.etag } })).status).toBe(204);
    expect((await call(`/Assets/${asset.id}`)).status).toBe(404);
    expect((await eventsOf(asset.id)).map((e) => e.action)).toEqual(["created", "deleted"]);
  });

  it("refuses to delete an asset with children, designated, or named by a file's metadata (409 InUse)", async () => {
    const { plant, mainSystem, equipment } = await createPlantTree();
    const parent = await call(`/Assets/${plant.id}`, { method: "DELETE" });
    expect(parent.status).toBe(409);
    expect(parent.body.code).toBe("InUse");
    expect(parent.body.detail).toMatch(/child/);
    const deviation = await createDeviation({ assetReference: { mainSystem: { id: mainSystem.id }, equipment: { id: equipment.id } } });
    const designated = await call(`/Assets/${equipment.id}`, { method: "DELETE" });
    expect(designated.status).toBe(409);
    expect(designated.body.detail).toMatch(/designation/);
    expect((await call(`/Deviations/${deviation.id}`, { method: "DELETE" })).status).toBe(204);
    const lone = await createAsset("organization");
    const dataType = unique("dt");
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO data_types (id, name, allowed_extensions, etag, created_at, updated_at) VALUES (?1, ?1, '[]', 'e', 'now', 'now')",
      ).bind(dataType),
      env.DB.prepare(
        `INSERT INTO files (id, name, data_type_id, size, content_type, r2_key, state, status, owner_id, object_type,
        object_id, etag, created_at, updated_at)
         VALUES (?1, 'a.txt', ?2, 1, 'text/plain', 'k', 'ready', 'uploaded', 'u', 'organization', ?3, 'e', 'now', 'now')`,
      ).bind(crypto.randomUUID(), dataType, lone.id),
    ]);
    const filed = await call(`/Assets/${lone.id}`, { method: "DELETE" });
    expect(filed.status).toBe(409);
    expect(filed.body.detail).toMatch(/file/);
    // Once the designation is gone, the equipment can go.
    expect((await call(`/Assets/${equipment.id}`, { method: "DELETE" })).status).toBe(204);
  });
});

describe("assets: parent rules and validation", () => {
  it.each<[string, string, string | null, string, string]>([
    ["an organization with a parent", "organization", "plant", "body.parentId", "parentKind"],
    ["a plant under a plant", "plant", "plant", "body.parentId", "parentKind"],
    ["a main system without a parent", "mainSystem", null, "body.parentId", "required"],
    ["a main system under an organization", "mainSystem", "organization", "body.parentId", "parentKind"],
    ["equipment under equipment", "equipment", "equipment", "body.parentId", "parentKind"],
    ["equipment without a parent", "equipment", null, "body.parentId", "required"],
    ["a design object under an organization", "designObject", "organization", "body.parentId", "parentKind"],
  ])("refuses %s", async (_, kind, parentKind, field, rule) => {
    const tree = await createPlantTree();
    const parents: Record<string, string> = {
      plant: tree.plant.id,
      equipment: tree.equipment.id,
      organization: (await createAsset("organization")).id,
    };
    const res = await call("/Assets", {
      method: "POST",
      body: { kind, name: unique(kind), parentId: parentKind ? parents[parentKind] : null },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("ValidationFailed");
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
  });

  it("accepts every allowed parent kind", async () => {
    const { plant, mainSystem } = await createPlantTree();
    await createAsset("plant");
    await createAsset("designObject", plant.id);
    await createAsset("designObject", mainSystem.id);
    await createAsset("equipment", plant.id);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["an unknown kind", { kind: "pump", name: "x" }, "body.kind"],
    ["an empty name", { kind: "organization", name: " " }, "body.name"],
    ["a parent that is not a UUID", { kind: "plant", name: "x", parentId: "p1" }, "body.parentId"],
    ["an unknown field", { kind: "organization", name: "x", colour: "red" }, "body"],
  ])("400 for %s", async (_, body, field) => {
    const res = await call("/Assets", { method: "POST", body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it("400 exists for a parent that does not exist", async () => {
    const res = await call("/Assets", { method: "POST", body: { kind: "mainSystem", name: "x", parentId: crypto.randomUUID() } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.parentId", rule: "exists" }));
  });

  it("keeps plant names unique ignoring case (409 naming body.name), and only plant names", async () => {
    const plant = await createAsset("plant");
    const res = await call("/Assets", { method: "POST", body: { kind: "plant", name: String(plant.name).toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
    await createAsset("organization", null, { name: plant.name });
    const other = await createAsset("plant");
    const rename = await call("/Assets", { method: "PUT", body: { id: other.id, kind: "plant", name: plant.name } });
    expect(rename.status).toBe(409);
  });

  it("refuses to change kind or parent (400 immutable); an absent parentId keeps the parent", async () => {
    const { plant, mainSystem, equipment } = await createPlantTree();
    const kind = await call("/Assets", {
      method: "PUT",
      body: { id: equipment.id, kind: "designObject", name: "x", parentId: mainSystem.id },
    });
    expect(kind.status).toBe(400);
    expect(kind.body.errors).toContainEqual(expect.objectContaining({ field: "body.kind", rule: "immutable" }));
    const parent = await call("/Assets", { method: "PUT", body: { id: equipment.id, kind: "equipment", name: "x", parentId: plant.id } });
    expect(parent.status).toBe(400);
    expect(parent.body.errors).toContainEqual(expect.objectContaining({ field: "body.parentId", rule: "immutable" }));
    const kept = await call("/Assets", { method: "PUT", body: { id: equipment.id, kind: "equipment", name: "kept" } });
    expect(kept.status).toBe(200);
    expect(kept.body.parent.id).toBe(mainSystem.id);
  });

  it("404 for an unknown asset on GET, PUT and DELETE", async () => {
    const id = crypto.randomUUID();
    expect((await call(`/Assets/${id}`)).status).toBe(404);
    expect((await call("/Assets", { method: "PUT", body: { id, kind: "plant", name: "x" } })).status).toBe(404);
    expect((await call(`/Assets/${id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("assets: list", () => {
  it("filters by kinds, parentIds, plantNames, searchText and ids", async () => {
    const a = await createPlantTree();
    const b = await createPlantTree();
    const ids = [a, b].flatMap((t) => [t.plant.id, t.mainSystem.id, t.equipment.id, t.designObject.id]).join(",");
    const list = async (query: string) => ((await call(`/Assets?ids=${ids}&${query}`)).body as { id: string }[]).map((x) => x.id).sort();
    expect(await list("kinds=plant,equipment")).toEqual([a.plant.id, a.equipment.id, b.plant.id, b.equipment.id].sort());
    expect(await list(`parentIds=${a.mainSystem.id}`)).toEqual([a.equipment.id, a.designObject.id].sort());
    expect(await list(`plantNames=${encodeURIComponent(String(b.plant.name).toUpperCase())}`)).toEqual(
      [b.plant.id, b.mainSystem.id, b.equipment.id, b.designObject.id].sort(),
    );
    expect(await list(`searchText=${encodeURIComponent(String(a.equipment.name))}`)).toEqual([a.equipment.id]);
    const ordered = await call(`/Assets?ids=${ids}&order=kind asc, name desc&take=2&includeTotal=true`);
    expect(ordered.headers.get("x-total-count")).toBe("8");
    expect(ordered.body.map((x: { kind: string }) => x.kind)).toEqual(["designObject", "designObject"]);
  });

  it("400 InvalidQuery for an unknown kind or a malformed parent id", async () => {
    const kinds = await call("/Assets?kinds=pump");
    expect(kinds.status).toBe(400);
    expect(kinds.body.errors[0].field).toBe("query.kinds");
    expect((await call("/Assets?parentIds=nope")).body.errors[0].field).toBe("query.parentIds");
  });
});

describe("assets: security", () => {
  it.each<[string, string, Record<string, unknown> | undefined]>([
    ["GET", "/Assets", undefined],
    ["GET", `/Assets/${crypto.randomUUID()}`, undefined],
    ["POST", "/Assets", { kind: "organization", name: "x" }],
    ["PUT", "/Assets", { id: crypto.randomUUID(), kind: "organization", name: "x" }],
    ["DELETE", `/Assets/${crypto.randomUUID()}`, undefined],
  ])("%s %s: 401 without a token, 403 without the permission", async (method, path, body) => {
    expect((await call(path, { method, body, anonymous: true })).status).toBe(401);
    const permission = method === "GET" ? "assets_write" : "assets_read";
    const res = await call(path, { method, body, user: { permissions: [permission] } });
    expect(res.status).toBe(403);
  });
});
