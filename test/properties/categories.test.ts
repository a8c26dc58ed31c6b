import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

const unique = (prefix: string) => `${prefix} ${crypto.randomUUID().slice(0, 8)}`;

async function defaultCategory() {
  const res = await call("/Categories");
  return (res.body as { id: string; name: string; isDefault: boolean }[]).find((c) => c.isDefault)!;
}

describe("categories", () => {
  it("creates, reads, renames and deletes a category", async () => {
    const name = unique("Corrosion");
    const created = await call("/Categories", { method: "POST", body: { name } });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/Categories/${created.body.id}`);
    expect(created.body).toMatchObject({ name, isDefault: false });
    expect(created.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const renamed = await call("/Categories", { method: "PUT", body: { id: created.body.id, name: `${name} 2` } });
    expect(renamed.status).toBe(200);
    expect((await call(`/Categories/${created.body.id}`)).body.name).toBe(`${name} 2`);

    expect((await call(`/Categories/${created.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/Categories/${created.body.id}`)).status).toBe(404);
  });

  it("has the default Ungrouped category first, which can be renamed and stays the default", async () => {
    const before = await defaultCategory();
    expect(before.name).toBe("Ungrouped");
    const list = await call("/Categories");
    expect(list.body[0].id).toBe(before.id);
    const renamed = await call("/Categories", { method: "PUT", body: { id: before.id, name: "General properties" } });
    expect(renamed.body).toMatchObject({ isDefault: true, name: "General properties" });
    await call("/Categories", { method: "PUT", body: { id: before.id, name: "Ungrouped" } });
  });

  it("refuses to delete the default category", async () => {
    const res = await call(`/Categories/${(await defaultCategory()).id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("Conflict");
  });

  it("refuses to delete a category a property definition uses, with 409 InUse", async () => {
    const category = await call("/Categories", { method: "POST", body: { name: unique("Used") } });
    const now = new Date().toISOString();
    await env.DB.prepare(
      "INSERT INTO property_definitions (id, name, format, application_rule, category_id, etag, created_at, " +
        "updated_at) VALUES (?1, ?2, 'text', 'Deviation', ?3, 'e', ?4, ?4)",
    )
      .bind(crypto.randomUUID(), unique("prop"), category.body.id, now)
      .run();
    const res = await call(`/Categories/${category.body.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
  });

  describe.each([
    ["empty name", { name: "" }, "body.name", "too_small"],
    ["name too long", { name: "x".repeat(201) }, "body.name", "too_big"],
    ["unknown field", { name: "ok", colour: "red" }, "body", "unrecognized_keys"],
    ["missing name", {}, "body.name", "invalid_type"],
  ])("POST with %s", (_label, body, field, rule) => {
    it("is a 400 naming the field and the rule", async () => {
      const res = await call("/Categories", { method: "POST", body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("ValidationFailed");
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("refuses a duplicate name regardless of case with 409 naming body.name", async () => {
    const name = unique("Duplicate");
    await call("/Categories", { method: "POST", body: { name } });
    const res = await call("/Categories", { method: "POST", body: { name: name.toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
  });

  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    expect((await call(`/Categories/${crypto.randomUUID()}`)).status).toBe(404);
    const bad = await call("/Categories/not-a-uuid");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe("path.id");
  });

  it("requires properties_read to read and properties_write to write", async () => {
    expect((await call("/Categories", { user: { permissions: [] } })).status).toBe(403);
    expect(
      (await call("/Categories", { method: "POST", body: { name: unique("x") }, user: { permissions: ["properties_read"] } })).status,
    ).toBe(403);
    expect((await call("/Categories", { anonymous: true })).status).toBe(401);
  });
});
