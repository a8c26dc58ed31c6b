import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DeviationTypeSchema } from "../../src/deviations/types/schema";
import { call } from "../support/http";
import { createPropertyDefinition } from "../support/factories/properties";
import { createDeviation, createDeviationType, eventsOf, unique } from "../support/factories/work";

const GENERAL = "00000000-0000-4000-8000-000000000001";

describe("deviation types: create, read, replace, delete", () => {
  it("creates a type with an icon, links of both rules and its own property values", async () => {
    const own = await createPropertyDefinition({ applicationRule: "deviatioType", format: "integer", defaultValue: 3 });
    const label = await createPropertyDefinition({ applicationRule: "deviationType" });
    const carried = await createPropertyDefinition({ applicationRule: "Deviation" });
    const type = await createDeviationType({
      metadata: { group: "mechanical" },
      propertyDefinitions: [{ id: own.id }, { id: carried.id }, { id: label.id }],
      properties: [{ name: label.name, value: "pressure" }],
    });
    expect(DeviationTypeSchema.safeParse(type).success).toBe(true);
    expect(type).toMatchObject({
      isDefault: false,
      icon: { name: "corrosion", color: "#FF8800" },
      metadata: { group: "mechanical" },
      propertyDefinitions: [
        { id: own.id, applicationRule: "deviationType" },
        { id: carried.id, applicationRule: "Deviation" },
        { id: label.id, applicationRule: "deviationType" },
      ],
      // Only deviationType values, in link order; a missing one takes its default.
      properties: [
        { name: own.name, value: 3 },
        { name: label.name, value: "pressure" },
      ],
    });
    const read = await call(`/DeviationTypes/${type.id}`);
    expect(read.status).toBe(200);
    const { etag, ...body } = type;
    expect(read.body).toEqual(body);
    expect(read.headers.get("etag")).toBe(etag);
    expect((await call(`/DeviationTypes/${type.id}`, { headers: { "if-none-match": etag } })).status).toBe(304);
    // It is an entity type with appliesTo deviationType.
    expect((await call(`/EntityTypes/${type.id}`)).body.appliesTo).toBe("deviationType");
    expect((await eventsOf(type.id)).map((e) => [e.kind, e.action])).toEqual([["deviationType", "created"]]);
  });

  it("PUT replaces links and properties, accepts a read sent back, honours If-Match", async () => {
    const own = await createPropertyDefinition({ applicationRule: "deviationType" });
    const type = await createDeviationType({ propertyDefinitions: [{ id: own.id }], properties: [{ name: own.name, value: "a" }] });
    const read = await call(`/DeviationTypes/${type.id}`);
    const res = await call("/DeviationTypes", {
      method: "PUT",
      body: { ...read.body, properties: [{ name: own.name, value: "b" }] },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(res.status).toBe(200);
    expect(res.body.properties).toEqual([{ name: own.name, value: "b" }]);
    const stale = await call("/DeviationTypes", { method: "PUT", body: read.body, headers: { "if-match": read.headers.get("etag")! } });
    expect(stale.status).toBe(412);
    const unlinked = await call("/DeviationTypes", { method: "PUT", body: { ...res.body, propertyDefinitions: [], properties: [] } });
    expect(unlinked.status).toBe(200);
    expect(unlinked.body.properties).toEqual([]);
    expect((await eventsOf(type.id)).map((e) => e.action)).toEqual(["created", "updated", "updated"]);
  });

  it("lists General first, then the deviation types, but not other entity types", async () => {
    const type = await createDeviationType();
    const other = await call("/EntityTypes", { method: "POST", body: { name: unique("workType"), appliesTo: "WorkItem" } });
    const list = await call("/DeviationTypes?take=1000");
    expect(list.status).toBe(200);
    const ids = list.body.map((t: { id: string }) => t.id);
    expect(ids[0]).toBe(GENERAL);
    expect(ids).toContain(type.id);
    expect(ids).not.toContain(other.body.id);
    expect((await call(`/DeviationTypes/${other.body.id}`)).status).toBe(404);
  });

  it("General is a deviation type that accepts every rule and cannot be deleted", async () => {
    const general = await call(`/DeviationTypes/${GENERAL}`);
    expect(general.body).toMatchObject({ isDefault: true });
    const workItemRule = await createPropertyDefinition({ applicationRule: "WorkItem" });
    const res = await call("/DeviationTypes", {
      method: "PUT",
      body: { ...general.body, propertyDefinitions: [...general.body.propertyDefinitions, { id: workItemRule.id }] },
    });
    expect(res.status).toBe(200);
    expect((await call(`/EntityTypes/${GENERAL}`)).body.appliesTo).toBeNull();
    await call("/DeviationTypes", { method: "PUT", body: { ...general.body } });
    const removed = await call(`/DeviationTypes/${GENERAL}`, { method: "DELETE" });
    expect(removed.status).toBe(409);
  });

  it("deletes an unused type with its links and values; refuses one that deviations use (409 InUse)", async () => {
    const own = await createPropertyDefinition({ applicationRule: "deviationType" });
    const unused = await createDeviationType({ propertyDefinitions: [{ id: own.id }], properties: [{ name: own.name, value: "x" }] });
    expect((await call(`/DeviationTypes/${unused.id}`, { method: "DELETE", headers: { "if-match": unused.etag } })).status).toBe(204);
    expect((await call(`/DeviationTypes/${unused.id}`)).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM property_values WHERE entity_id = ?1")
      .bind(unused.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    const used = await createDeviationType();
    const deviation = await createDeviation({ typeId: used.id });
    for (const path of [`/DeviationTypes/${used.id}`, `/EntityTypes/${used.id}`]) {
      const refused = await call(path, { method: "DELETE" });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe("InUse");
    }
    await call(`/Deviations/${deviation.id}`, { method: "DELETE" });
    expect((await call(`/DeviationTypes/${used.id}`, { method: "DELETE" })).status).toBe(204);
  });
});

describe("deviation types: the rules of linked definitions", () => {
  it("a linked definition may move between Deviation and deviationType, but not to a rule the type refuses", async () => {
    const definition = await createPropertyDefinition({ applicationRule: "deviatioType" });
    await createDeviationType({ propertyDefinitions: [{ id: definition.id }] });
    const read = await call(`/PropertyDefinitions/${definition.id}`);
    const { createdAt: _c, updatedAt: _u, ...body } = read.body;
    const moved = await call("/PropertyDefinitions", { method: "PUT", body: { ...body, applicationRule: "Deviation" } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.applicationRule).toBe("Deviation");
    const refused = await call("/PropertyDefinitions", { method: "PUT", body: { ...body, applicationRule: "WorkItem" } });
    expect(refused.status).toBe(409);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: "body.applicationRule", rule: "inUse" })]);
  });
});

describe("deviation types: validation", () => {
  it.each<[string, string, string]>([
    ["a WorkItem definition", "WorkItem", "applicationRule"],
    ["an Activity definition", "Activity", "applicationRule"],
  ])("refuses to link %s (400 on the link's id)", async (_, applicationRule, rule) => {
    const definition = await createPropertyDefinition({ applicationRule });
    const res = await call("/DeviationTypes", {
      method: "POST",
      body: { name: unique("t"), propertyDefinitions: [{ id: definition.id }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.propertyDefinitions.0.id", rule }));
  });

  it("allows at most one display name field among the links", async () => {
    const a = await createPropertyDefinition({ applicationRule: "deviationType", metadata: { displayNameField: true } });
    const b = await createPropertyDefinition({ applicationRule: "Deviation", metadata: { displayNameField: true } });
    const res = await call("/DeviationTypes", {
      method: "POST",
      body: { name: unique("t"), propertyDefinitions: [{ id: a.id }, { id: b.id }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.propertyDefinitions.1.id", rule: "displayNameField" }));
  });

  it("checks property values: only linked deviationType definitions, typed by format, required", async () => {
    const count = await createPropertyDefinition({ applicationRule: "deviationType", format: "integer" });
    const needed = await createPropertyDefinition({ applicationRule: "deviationType", required: true });
    const carried = await createPropertyDefinition({ applicationRule: "Deviation" });
    const res = await call("/DeviationTypes", {
      method: "POST",
      body: {
        name: unique("t"),
        propertyDefinitions: [{ id: count.id }, { id: needed.id }, { id: carried.id }],
        properties: [
          { name: count.name, value: "many" },
          { name: carried.name, value: "x" },
          { name: "nope", value: 1 },
        ],
      },
    });
    expect(res.status).toBe(400);
    const fields = res.body.errors.map((e: { field: string; rule: string }) => `${e.field}:${e.rule}`);
    expect(fields).toEqual(
      expect.arrayContaining([
        "body.properties.1.name:unknownProperty",
        "body.properties.2.name:unknownProperty",
        `body.properties.${needed.name}:required`,
      ]),
    );
    expect(fields.some((f: string) => f.startsWith("body.properties.0.value:"))).toBe(true);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["a bad icon colour", { icon: { name: "x", color: "orange" } }, "body.icon.color"],
    ["no name", { name: "" }, "body.name"],
    ["an unknown field", { appliesTo: "Deviation" }, "body"],
  ])("400 for %s", async (_, change, field) => {
    const res = await call("/DeviationTypes", { method: "POST", body: { name: unique("t"), ...change } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it("409 for a name another entity type has (ignoring case)", async () => {
    const type = await createDeviationType();
    const res = await call("/DeviationTypes", { method: "POST", body: { name: String(type.name).toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
  });

  it("404 for an unknown type on GET, PUT and DELETE", async () => {
    const id = crypto.randomUUID();
    expect((await call(`/DeviationTypes/${id}`)).status).toBe(404);
    expect((await call("/DeviationTypes", { method: "PUT", body: { id, name: "x" } })).status).toBe(404);
    expect((await call(`/DeviationTypes/${id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("a user status in use by a deviation cannot be deleted", async () => {
    const status = await call("/UserStatuses", { method: "POST", body: { name: unique("Awaiting parts"), status: "onHold" } });
    expect(status.status).toBe(201);
    await createDeviation({ status: status.body.id });
    const res = await call(`/UserStatuses/${status.body.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
  });
});

describe("deviation types: security", () => {
  it.each<[string, string, Record<string, unknown> | undefined]>([
    ["GET", "/DeviationTypes", undefined],
    ["GET", `/DeviationTypes/${GENERAL}`, undefined],
    ["POST", "/DeviationTypes", { name: "x" }],
    ["PUT", "/DeviationTypes", { id: GENERAL, name: "x" }],
    ["DELETE", `/DeviationTypes/${crypto.randomUUID()}`, undefined],
  ])("%s %s: 401 without a token, 403 without the permission", async (method, path, body) => {
    expect((await call(path, { method, body, anonymous: true })).status).toBe(401);
    expect((await call(path, { method, body, user: { permissions: [method === "GET" ? "work_write" : "work_read"] } })).status).toBe(403);
  });
});
