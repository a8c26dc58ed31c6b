import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PropertyDefinitionSchema } from "../../src/properties/definitions/schema";
import { call } from "../support/http";
import {
  createClassification,
  createEntityType,
  createPropertyDefinition,
  linkToEntityType,
  outboxFor,
  propertyDefinitionBody,
  uniqueName,
} from "../support/factories/properties";

const DEFAULT_CATEGORY = "00000000-0000-4000-8000-000000000002";

/** The body a client sends back on PUT: what it read, with changes. */
function forPut(read: Record<string, unknown>, changes: Record<string, unknown> = {}) {
  const { etag: _etag, ...rest } = read;
  return { ...rest, ...changes };
}

describe("POST /PropertyDefinitions happy paths", () => {
  it("creates a text property with regex, instruction and metadata (201, Location, ETag)", async () => {
    const body = propertyDefinitionBody({
      regex: "^[A-Z]{2}-\\d+$",
      regexErrorMessage: "Use AA-123",
      defaultValue: "AB-1",
      instruction: "Read the tag on the flange.",
      metadata: { visibleByDefault: true, isMultiLine: false, displayNameField: true, anything: { nested: [1] } },
    });
    const res = await call("/PropertyDefinitions", { method: "POST", body });
    expect(res.status).toBe(201);
    expect(PropertyDefinitionSchema.safeParse(res.body).success).toBe(true);
    expect(res.headers.get("location")).toBe(`/PropertyDefinitions/${res.body.id}`);
    expect(res.headers.get("etag")).toMatch(/^".+"$/);
    expect(res.body).toMatchObject({
      name: body.name,
      format: "text",
      regex: "^[A-Z]{2}-\\d+$",
      regexErrorMessage: "Use AA-123",
      unit: null,
      classification: null,
      entityType: null,
      isMultiselect: false,
      applicationRule: "Deviation",
      required: false,
      defaultValue: "AB-1",
      valueExpression: null,
      instruction: "Read the tag on the flange.",
      hasInstructionImage: false,
      metadata: { visibleByDefault: true, isMultiLine: false, displayNameField: true, anything: { nested: [1] } },
      category: { id: DEFAULT_CATEGORY, name: expect.any(String) },
    });
    const read = await call(`/PropertyDefinitions/${res.body.id}`);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
  });

  it.each([
    ["boolean", { format: "boolean", defaultValue: false }, { defaultValue: false, unit: null }],
    ["integer", { format: "integer", unit: "kilogram", defaultValue: 42 }, { unit: "kilogram", defaultValue: 42 }],
    ["decimal", { format: "decimal", unit: "cubicMetre", defaultValue: 2.75 }, { unit: "cubicMetre", defaultValue: 2.75 }],
    [
      "date (slash form, normalised to ISO)",
      { format: "date", defaultValue: "03/15/2024 14:30" },
      { defaultValue: "2024-03-15T14:30:00.000Z" },
    ],
    ["date (ISO with offset)", { format: "date", defaultValue: "2024-03-15T16:30:00+02:00" }, { defaultValue: "2024-03-15T14:30:00.000Z" }],
    [
      "entity",
      { format: "entity", entityType: "identity", defaultValue: { id: "u1", name: "Jane", extra: 1 } },
      { entityType: "identity", isMultiselect: false, defaultValue: { id: "u1", name: "Jane" } },
    ],
    ["entity multiselect", { format: "entity", entityType: "identity", isMultiselect: true }, { isMultiselect: true, defaultValue: null }],
    ["deviatioType spelling", { applicationRule: "deviatioType" }, { applicationRule: "deviationType" }],
    ["required", { required: true }, { required: true, defaultValue: null }],
    ["expression", { format: "decimal", unit: "metre", valueExpression: "return 1 + 1;" }, { valueExpression: "return 1 + 1;" }],
  ])("creates a %s property", async (_, overrides, expected) => {
    const res = await call("/PropertyDefinitions", { method: "POST", body: propertyDefinitionBody(overrides) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject(expected);
  });

  it("creates a classification property with a nested element as default", async () => {
    const classification = await createClassification([{ name: "Area", children: [{ name: "Zone", children: [{ name: "Bay 4" }] }] }]);
    const res = await call("/PropertyDefinitions", {
      method: "POST",
      body: propertyDefinitionBody({ format: "classification", classification: { id: classification.id }, defaultValue: "Bay 4" }),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ classification: { id: classification.id, name: classification.name }, defaultValue: "Bay 4" });
  });

  it("accepts every application rule", async () => {
    for (const rule of [
      "Deviation",
      "deviationType",
      "WorkItem",
      "WorkTemplate",
      "Activity",
      "ActivityTemplate",
      "Model",
      "Monitor",
      "File",
      "Asset",
    ]) {
      const res = await call("/PropertyDefinitions", { method: "POST", body: propertyDefinitionBody({ applicationRule: rule }) });
      expect(res.status).toBe(201);
      expect(res.body.applicationRule).toBe(rule);
    }
  });

  it("puts a definition without category in the default category, also after the default is renamed", async () => {
    const renamed = `Misc ${uniqueName()}`;
    const category = await call(`/Categories/${DEFAULT_CATEGORY}`);
    const rename = await call("/Categories", { method: "PUT", body: { id: DEFAULT_CATEGORY, name: renamed } });
    expect(rename.status).toBe(200);
    const res = await call("/PropertyDefinitions", { method: "POST", body: propertyDefinitionBody({ category: null }) });
    expect(res.body.category).toEqual({ id: DEFAULT_CATEGORY, name: renamed });
    await call("/Categories", { method: "PUT", body: { id: DEFAULT_CATEGORY, name: category.body.name } });
  });

  it("puts a definition in the category it names", async () => {
    const category = await call("/Categories", { method: "POST", body: { name: uniqueName("Inspection") } });
    const res = await call("/PropertyDefinitions", {
      method: "POST",
      body: propertyDefinitionBody({ category: { id: category.body.id } }),
    });
    expect(res.body.category).toEqual({ id: category.body.id, name: category.body.name });
  });

  it("writes a created event to the outbox", async () => {
    const created = await createPropertyDefinition();
    expect(await outboxFor(created.id)).toEqual([
      { kind: "propertyDefinition", action: "created", payload: expect.objectContaining({ id: created.id, name: created.name }) },
    ]);
  });
});

describe("GET /PropertyDefinitions/{id}", () => {
  it("answers 304 to If-None-Match with the current ETag", async () => {
    const created = await createPropertyDefinition();
    const res = await call(`/PropertyDefinitions/${created.id}`, { headers: { "if-none-match": created.etag } });
    expect(res.status).toBe(304);
  });

  it.each([
    ["an unknown id", () => crypto.randomUUID(), 404, "NotFound", undefined],
    ["an id that is not a UUID", () => "abc", 400, "ValidationFailed", "path.id"],
  ])("answers %s with %i", async (_, id, status, code, field) => {
    const res = await call(`/PropertyDefinitions/${id()}`);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    if (field) expect(res.body.errors[0].field).toBe(field);
  });
});

describe("PUT /PropertyDefinitions", () => {
  it("replaces the definition, changes the ETag and writes an updated event", async () => {
    const created = await createPropertyDefinition({ instruction: "old" });
    const res = await call("/PropertyDefinitions", {
      method: "PUT",
      headers: { "if-match": created.etag },
      body: forPut(created, { instruction: "new", regex: "^x", required: true }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      id: created.id,
      name: created.name,
      instruction: "new",
      regex: "^x",
      required: true,
      createdAt: created.createdAt,
    });
    expect(res.headers.get("etag")).not.toBe(created.etag);
    expect((await call(`/PropertyDefinitions/${created.id}`)).body).toEqual(res.body);
    const events = await outboxFor(created.id);
    expect(events.map((e) => e.action)).toEqual(["created", "updated"]);
    expect(events[1]?.payload).toMatchObject({ instruction: "new" });
  });

  it("clears optional fields left out of the whole object", async () => {
    const created = await createPropertyDefinition({ instruction: "guide", metadata: { a: 1 }, defaultValue: "d" });
    const res = await call("/PropertyDefinitions", {
      method: "PUT",
      body: { id: created.id, name: created.name, format: "text", applicationRule: "Deviation" },
    });
    expect(res.body).toMatchObject({ instruction: null, metadata: null, defaultValue: null });
  });

  it.each([
    ["a stale If-Match", () => '"stale"', 412, "PreconditionFailed"],
    ["an unknown id", () => undefined, 404, "NotFound"],
  ])("answers %s with %i", async (_, ifMatch, status, code) => {
    const created = await createPropertyDefinition();
    const unknown = status === 404;
    const headers: Record<string, string> = ifMatch() ? { "if-match": ifMatch() as string } : {};
    const res = await call("/PropertyDefinitions", {
      method: "PUT",
      headers,
      body: forPut(created, unknown ? { id: crypto.randomUUID() } : {}),
    });
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
  });

  it("refuses to change the format while values are stored (409 naming the field)", async () => {
    const created = await createPropertyDefinition({ format: "integer", unit: "metre" });
    await env.DB.prepare(
      "INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_num, value_json) " +
        "VALUES ('deviation', ?1, ?2, 0, ?3, 5, '5')",
    )
      .bind(crypto.randomUUID(), created.name, created.id)
      .run();
    const res = await call("/PropertyDefinitions", { method: "PUT", body: forPut(created, { format: "decimal" }) });
    expect(res.status).toBe(409);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.format", rule: "inUse" })]);
    const unit = await call("/PropertyDefinitions", { method: "PUT", body: forPut(created, { unit: "second" }) });
    expect(unit.status).toBe(200);
  });

  it("refuses an application rule a linking entity type does not accept (409)", async () => {
    const created = await createPropertyDefinition({ applicationRule: "WorkItem" });
    const type = await createEntityType({ appliesTo: "WorkItem" });
    await linkToEntityType(type.id, [created.id]);
    const res = await call("/PropertyDefinitions", { method: "PUT", body: forPut(created, { applicationRule: "Deviation" }) });
    expect(res.status).toBe(409);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.applicationRule", rule: "inUse" })]);
  });
});

describe("DELETE /PropertyDefinitions/{id}", () => {
  it("deletes (204), then the definition is gone, and writes a deleted event", async () => {
    const created = await createPropertyDefinition();
    const res = await call(`/PropertyDefinitions/${created.id}`, { method: "DELETE", headers: { "if-match": created.etag } });
    expect(res.status).toBe(204);
    expect((await call(`/PropertyDefinitions/${created.id}`)).status).toBe(404);
    expect((await outboxFor(created.id)).map((e) => e.action)).toEqual(["created", "deleted"]);
  });

  it("answers 412 to a stale If-Match and keeps the definition", async () => {
    const created = await createPropertyDefinition();
    const res = await call(`/PropertyDefinitions/${created.id}`, { method: "DELETE", headers: { "if-match": '"stale"' } });
    expect(res.status).toBe(412);
    expect((await call(`/PropertyDefinitions/${created.id}`)).status).toBe(200);
  });

  it("answers 404 for an unknown id", async () => {
    expect((await call(`/PropertyDefinitions/${crypto.randomUUID()}`, { method: "DELETE" })).status).toBe(404);
  });

  it("answers 409 InUse while an entity type links it", async () => {
    const created = await createPropertyDefinition();
    const type = await createEntityType();
    await linkToEntityType(type.id, [created.id]);
    const res = await call(`/PropertyDefinitions/${created.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
  });

  it("answers 409 InUse while an entity holds a value of it", async () => {
    const created = await createPropertyDefinition();
    await env.DB.prepare(
      "INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_text, value_json) " +
        "VALUES ('workItem', ?1, ?2, 0, ?3, 'x', '\"x\"')",
    )
      .bind(crypto.randomUUID(), created.name, created.id)
      .run();
    const res = await call(`/PropertyDefinitions/${created.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
  });
});

describe("security", () => {
  const routes: [string, string, () => unknown][] = [
    ["GET", "/PropertyDefinitions", () => undefined],
    ["GET", `/PropertyDefinitions/${crypto.randomUUID()}`, () => undefined],
    ["GET", "/PropertyDefinitions/UniqueValues?fieldNames=format", () => undefined],
    ["POST", "/PropertyDefinitions", () => propertyDefinitionBody()],
    ["PUT", "/PropertyDefinitions", () => ({ ...propertyDefinitionBody(), id: crypto.randomUUID() })],
    ["DELETE", `/PropertyDefinitions/${crypto.randomUUID()}`, () => undefined],
  ];

  it.each(routes)("%s %s without a token -> 401", async (method, path, body) => {
    const res = await call(path, { method, body: body(), anonymous: true });
    expect(res.status).toBe(401);
  });

  it.each(routes)("%s %s without the permission -> 403", async (method, path, body) => {
    const permission = method === "GET" ? "properties_write" : "properties_read";
    const res = await call(path, { method, body: body(), user: { permissions: [permission] } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("Forbidden");
  });
});
