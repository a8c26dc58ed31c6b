import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EntityTypeSchema } from "../../src/properties/entity-types/schema";
import { call, type CallResult } from "../support/http";
import { createEntityType, entityTypeBody, outboxActions, seedPropertyDefinition, uniqueName } from "../support/factories/types";

type Typed = { id: string; name: string; isDefault: boolean; appliesTo: string | null };

async function general() {
  const res = await call("/EntityTypes/Default");
  expect(res.status).toBe(200);
  return { body: res.body as Typed & Record<string, unknown>, etag: res.headers.get("etag")! };
}

type PutResult = CallResult<Typed & { propertyDefinitions: { name: string }[]; errors: { field: string; rule: string }[] }>;

/** Sends the default type back with changes, then restores it, so other tests still see General. */
async function withGeneral(changes: Record<string, unknown>, check: (res: PutResult) => Promise<void> | void) {
  const before = await general();
  const res: PutResult = await call("/EntityTypes", { method: "PUT", body: { ...before.body, ...changes } });
  try {
    await check(res);
  } finally {
    const { propertyDefinitions: _links, ...rest } = before.body;
    await call("/EntityTypes", { method: "PUT", body: { ...rest, propertyDefinitions: [] } });
  }
}

describe("entity types: the default type General", () => {
  it("is listed first, is the default, and is served at /EntityTypes/Default", async () => {
    const { body, etag } = await general();
    expect(body).toMatchObject({ name: "General", isDefault: true, appliesTo: null, icon: { name: "general", color: "#607D8B" } });
    expect(EntityTypeSchema.safeParse(body).success).toBe(true);
    const list = await call("/EntityTypes");
    expect(list.body[0]).toMatchObject({ id: body.id, isDefault: true });
    expect(list.body.filter((t: Typed) => t.isDefault)).toHaveLength(1);
    expect((await call("/EntityTypes/Default", { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await call(`/EntityTypes/${body.id}`)).body).toEqual(body);
  });

  it("can be renamed and stays the default", async () => {
    await withGeneral({ name: "Generic" }, async (res) => {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: "Generic", isDefault: true });
      expect((await general()).body.name).toBe("Generic");
    });
    expect((await general()).body.name).toBe("General");
  });

  it("cannot be deleted", async () => {
    const res = await call(`/EntityTypes/${(await general()).body.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("Conflict");
  });

  it("links definitions of any application rule, and keeps appliesTo null", async () => {
    const deviation = await seedPropertyDefinition({ applicationRule: "Deviation" });
    const workItem = await seedPropertyDefinition({ applicationRule: "WorkItem", format: "integer" });
    await withGeneral({ propertyDefinitions: [{ id: workItem.id }, { id: deviation.id }] }, (res) => {
      expect(res.status).toBe(200);
      expect(res.body.propertyDefinitions.map((d: { name: string }) => d.name)).toEqual([workItem.name, deviation.name]);
    });
    await withGeneral({ appliesTo: "Deviation" }, (res) => {
      expect(res.status).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.appliesTo", rule: "default" }));
    });
  });
});

describe("entity types: create, read, replace, delete", () => {
  it("creates a type with an icon, metadata and linked definitions in order", async () => {
    const first = await seedPropertyDefinition({ required: true });
    const second = await seedPropertyDefinition({ format: "decimal" });
    const body = entityTypeBody({
      metadata: { colourScheme: "warm", nested: { a: [1, 2] } },
      propertyDefinitions: [{ id: second.id }, { id: first.id }],
    });
    const res = await call("/EntityTypes", { method: "POST", body });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/EntityTypes/${res.body.id}`);
    expect(EntityTypeSchema.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({
      name: body.name,
      appliesTo: "Deviation",
      isDefault: false,
      icon: { name: "corrosion", color: "#E53935" },
      metadata: { colourScheme: "warm", nested: { a: [1, 2] } },
      propertyDefinitions: [
        { id: second.id, name: second.name, format: "decimal", applicationRule: "Deviation", required: false },
        { id: first.id, name: first.name, format: "text", applicationRule: "Deviation", required: true },
      ],
    });
    const read = await call(`/EntityTypes/${res.body.id}`);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
  });

  it("reads deviatioType as deviationType and links deviationType definitions", async () => {
    const definition = await seedPropertyDefinition({ applicationRule: "deviationType", metadata: { displayNameField: true } });
    const created = await createEntityType({ appliesTo: "deviatioType", propertyDefinitions: [{ id: definition.id }] });
    expect(created.appliesTo).toBe("deviationType");
    expect(created.propertyDefinitions).toHaveLength(1);
  });

  it("replaces the type and its links on PUT, accepting a read sent back as is", async () => {
    const a = await seedPropertyDefinition();
    const b = await seedPropertyDefinition();
    const created = await createEntityType({ propertyDefinitions: [{ id: a.id }, { id: b.id }] });
    const read = await call(`/EntityTypes/${created.id}`);
    const same = await call("/EntityTypes", { method: "PUT", body: read.body, headers: { "if-match": read.headers.get("etag")! } });
    expect(same.status).toBe(200);
    expect(same.body.propertyDefinitions).toEqual(read.body.propertyDefinitions);
    const res = await call("/EntityTypes", {
      method: "PUT",
      body: { id: created.id, name: created.name, appliesTo: "Deviation", propertyDefinitions: [{ id: b.id }] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      icon: null,
      description: null,
      metadata: null,
      propertyDefinitions: [expect.objectContaining({ id: b.id })],
    });
    const links = await env.DB.prepare("SELECT property_definition_id AS id FROM entity_type_properties WHERE entity_type_id = ?1")
      .bind(created.id)
      .all<{ id: string }>();
    expect(links.results).toEqual([{ id: b.id }]);
  });

  it("changes its ETag when a linked definition changes", async () => {
    const definition = await seedPropertyDefinition();
    const created = await createEntityType({ propertyDefinitions: [{ id: definition.id }] });
    await env.DB.prepare("UPDATE property_definitions SET required = 1, etag = 'changed' WHERE id = ?1").bind(definition.id).run();
    const read = await call(`/EntityTypes/${created.id}`, { headers: { "if-none-match": created.etag } });
    expect(read.status).toBe(200);
    expect(read.body.propertyDefinitions[0].required).toBe(true);
    expect(read.headers.get("etag")).not.toBe(created.etag);
    const put = await call("/EntityTypes", {
      method: "PUT",
      body: { id: created.id, name: created.name },
      headers: { "if-match": created.etag },
    });
    expect(put.status).toBe(412);
  });

  it("deletes a type with its links", async () => {
    const definition = await seedPropertyDefinition();
    const created = await createEntityType({ propertyDefinitions: [{ id: definition.id }] });
    expect((await call(`/EntityTypes/${created.id}`, { method: "DELETE", headers: { "if-match": created.etag } })).status).toBe(204);
    expect((await call(`/EntityTypes/${created.id}`)).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM entity_type_properties WHERE entity_type_id = ?1")
      .bind(created.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("refuses to delete a type that entities use, as counted through the table of references (src/db/references.ts)", async () => {
    const created = await createEntityType({ appliesTo: null });
    const users: string[] = [];
    for (const displayName of ["first user of the type", "second user of the type"]) {
      const workItem = await call("/WorkItems", { method: "POST", body: { displayName, typeId: created.id } });
      expect(workItem.status, workItem.text).toBe(201);
      users.push(workItem.body.id);
    }
    try {
      const res = await call(`/EntityTypes/${created.id}`, { method: "DELETE" });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("InUse");
      expect(res.body.detail).toContain("2 entities");
    } finally {
      for (const id of users) await call(`/WorkItems/${id}`, { method: "DELETE" });
    }
    expect((await call(`/EntityTypes/${created.id}`, { method: "DELETE" })).status).toBe(204);
  });
});

describe("entity types: validation", () => {
  it.each([
    ["an unknown definition id", "exists"],
    ["a definition of another application rule", "applicationRule"],
    ["a definition linked twice", "unique"],
    ["a second display name field", "displayNameField"],
  ])("refuses %s with 400 naming body.propertyDefinitions.2.id", async (label, rule) => {
    const fits = await seedPropertyDefinition({ metadata: { displayNameField: true } });
    const other = await seedPropertyDefinition();
    const third = {
      exists: { id: crypto.randomUUID() },
      applicationRule: await seedPropertyDefinition({ applicationRule: "WorkItem" }),
      unique: fits,
      displayNameField: await seedPropertyDefinition({ metadata: { displayNameField: true } }),
    }[rule as "exists"];
    const res = await call("/EntityTypes", {
      method: "POST",
      body: entityTypeBody({ propertyDefinitions: [{ id: fits.id }, { id: other.id }, { id: third.id }] }),
    });
    expect(res.status, label).toBe(400);
    expect(res.body.code).toBe("ValidationFailed");
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.propertyDefinitions.2.id", rule })]);
  });

  it("reports every link problem at once", async () => {
    const misfit = await seedPropertyDefinition({ applicationRule: "Asset" });
    const res = await call("/EntityTypes", {
      method: "POST",
      body: entityTypeBody({ propertyDefinitions: [{ id: crypto.randomUUID() }, { id: misfit.id }] }),
    });
    expect(res.body.errors.map((e: { field: string; rule: string }) => `${e.field} ${e.rule}`)).toEqual([
      "body.propertyDefinitions.0.id exists",
      "body.propertyDefinitions.1.id applicationRule",
    ]);
  });

  describe.each([
    ["a bad icon colour", { icon: { name: "x", color: "#GGG" } }, "body.icon.color", "invalid_format"],
    ["an icon without a colour", { icon: { name: "x" } }, "body.icon.color", "invalid_type"],
    ["an icon name over 100 characters", { icon: { name: "x".repeat(101), color: "#fff" } }, "body.icon.name", "too_big"],
    ["an unknown application rule", { appliesTo: "Deviations" }, "body.appliesTo", "invalid_value"],
    ["metadata that is not an object", { metadata: [1, 2] }, "body.metadata", "invalid_type"],
    ["metadata over 64 KB", { metadata: { blob: "x".repeat(70_000) } }, "body.metadata", "maxSize"],
    ["a malformed definition id", { propertyDefinitions: [{ id: "nope" }] }, "body.propertyDefinitions.0.id", "invalid_format"],
    ["an empty name", { name: "" }, "body.name", "too_small"],
  ])("POST with %s", (_label, overrides, field, rule) => {
    it(`is a 400 naming ${field} (${rule})`, async () => {
      const res = await call("/EntityTypes", { method: "POST", body: entityTypeBody(overrides) });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("ValidationFailed");
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("refuses a duplicate name regardless of case with 409 naming body.name", async () => {
    const first = await createEntityType();
    const res = await call("/EntityTypes", { method: "POST", body: entityTypeBody({ name: first.name.toUpperCase() }) });
    expect(res.status).toBe(409);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
    const general = await call("/EntityTypes", { method: "POST", body: entityTypeBody({ name: "general" }) });
    expect(general.status).toBe(409);
  });

  it("answers 404 for an unknown id", async () => {
    const id = crypto.randomUUID();
    expect((await call(`/EntityTypes/${id}`)).status).toBe(404);
    expect((await call("/EntityTypes", { method: "PUT", body: { id, name: uniqueName("x") } })).status).toBe(404);
    expect((await call(`/EntityTypes/${id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("entity types: concurrency", () => {
  it("answers 412 for a stale If-Match on PUT and DELETE", async () => {
    const created = await createEntityType();
    const stale = { "if-match": '"stale"' };
    expect((await call("/EntityTypes", { method: "PUT", body: { id: created.id, name: uniqueName("New") }, headers: stale })).status).toBe(
      412,
    );
    expect((await call(`/EntityTypes/${created.id}`, { method: "DELETE", headers: stale })).status).toBe(412);
    expect((await call(`/EntityTypes/${created.id}`)).body.name).toBe(created.name);
  });
});

describe("entity types: list", () => {
  it("filters by appliesTo (any = the types that accept every rule), ids and searchText, ordered by name", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const b = await createEntityType({ name: `b ${tag}`, appliesTo: "deviationType" });
    const a = await createEntityType({ name: `A ${tag}`, appliesTo: "deviationType" });
    const c = await createEntityType({ name: `c ${tag}`, appliesTo: "Asset" });
    const deviationTypes = await call(`/EntityTypes?appliesTo=deviatioType&searchText=${tag}`);
    expect(deviationTypes.body.map((t: Typed) => t.id)).toEqual([a.id, b.id]);
    expect(deviationTypes.headers.get("x-total-count")).toBeNull();
    const counted = await call(`/EntityTypes?appliesTo=deviatioType&searchText=${tag}&includeTotal=true`);
    expect(counted.headers.get("x-total-count")).toBe("2");
    const withGeneral = await call(`/EntityTypes?appliesTo=Asset,any`);
    expect(withGeneral.body[0].id).toBe((await general()).body.id);
    expect(withGeneral.body.map((t: Typed) => t.id)).toContain(c.id);
    expect(withGeneral.body.every((t: Typed) => t.appliesTo === null || t.appliesTo === "Asset")).toBe(true);
    const byIds = await call(`/EntityTypes?ids=${c.id},${a.id}&order=name%20desc`);
    expect(byIds.body.map((t: Typed) => t.id)).toEqual([c.id, a.id]);
  });

  it("answers 400 InvalidQuery for an unknown appliesTo", async () => {
    const res = await call("/EntityTypes?appliesTo=Planet");
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("InvalidQuery");
    expect(res.body.errors[0]).toMatchObject({ field: "query.appliesTo", rule: "invalid_value" });
  });
});

describe("entity types: events", () => {
  it("writes an outbox event for create, update and delete", async () => {
    const created = await createEntityType();
    await call("/EntityTypes", { method: "PUT", body: { id: created.id, name: `${created.name} 2`, appliesTo: "Deviation" } });
    await call(`/EntityTypes/${created.id}`, { method: "DELETE" });
    expect(await outboxActions("entityType", created.id)).toEqual(["created", "updated", "deleted"]);
  });
});

describe("entity types: security", () => {
  it("requires a token, properties_read to read and properties_write to write", async () => {
    expect((await call("/EntityTypes", { anonymous: true })).status).toBe(401);
    expect((await call("/EntityTypes/Default", { user: { permissions: [] } })).status).toBe(403);
    const readOnly = { permissions: ["properties_read"] };
    expect((await call("/EntityTypes", { user: readOnly })).status).toBe(200);
    expect((await call("/EntityTypes", { method: "POST", body: entityTypeBody(), user: readOnly })).status).toBe(403);
    const created = await createEntityType();
    expect((await call(`/EntityTypes/${created.id}`, { method: "DELETE", user: readOnly })).status).toBe(403);
    expect((await call("/EntityTypes", { method: "PUT", body: { id: created.id, name: "x" }, user: readOnly })).status).toBe(403);
  });
});
