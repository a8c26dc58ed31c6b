import { describe, expect, it } from "vitest";
import { SystemStatusSchema, UserStatusSchema } from "../../src/properties/user-statuses/schema";
import { call } from "../support/http";
import { createUserStatus, outboxActions, uniqueName, userStatusBody } from "../support/factories/types";

const SYSTEM_STATUSES = ["new", "active", "inProgress", "onHold", "completed", "closed", "cancelled"];

describe("system statuses", () => {
  it("lists the system statuses in their order", async () => {
    const res = await call("/SystemStatuses");
    expect(res.status).toBe(200);
    expect(res.body.map((s: { name: string }) => s.name)).toEqual(SYSTEM_STATUSES);
    expect(res.body.map((s: { order: number }) => s.order)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const status of res.body) expect(SystemStatusSchema.safeParse(status).success).toBe(true);
  });
});

describe("user statuses: create, read, replace, delete", () => {
  it("creates a user status and reads it back with its ETag", async () => {
    const body = userStatusBody({ order: 40 });
    const res = await call("/UserStatuses", { method: "POST", body });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/UserStatuses/${res.body.id}`);
    expect(UserStatusSchema.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({ name: body.name, status: "onHold", order: 40 });
    const read = await call(`/UserStatuses/${res.body.id}`);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
    expect((await call(`/UserStatuses/${res.body.id}`, { headers: { "if-none-match": read.headers.get("etag")! } })).status).toBe(304);
  });

  it("puts a status without an order after the last one", async () => {
    const last = await createUserStatus({ order: 900_000 });
    const next = await createUserStatus();
    expect(next.order).toBe(last.order + 1);
  });

  it("replaces a user status on PUT, accepting a read sent back with changes", async () => {
    const created = await createUserStatus();
    const read = await call(`/UserStatuses/${created.id}`);
    const res = await call("/UserStatuses", {
      method: "PUT",
      body: { ...read.body, status: "completed", order: 7 },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, status: "completed", order: 7 });
    expect(res.headers.get("etag")).not.toBe(read.headers.get("etag"));
  });

  it("deletes a user status", async () => {
    const created = await createUserStatus();
    expect((await call(`/UserStatuses/${created.id}`, { method: "DELETE", headers: { "if-match": created.etag } })).status).toBe(204);
    expect((await call(`/UserStatuses/${created.id}`)).status).toBe(404);
  });
});

describe("user statuses: validation", () => {
  describe.each([
    ["an unknown system status", { status: "paused" }, "body.status", "invalid_value"],
    ["a system status in another case", { status: "NEW" }, "body.status", "invalid_value"],
    ["a fractional order", { order: 1.5 }, "body.order", "invalid_type"],
    ["an empty name", { name: "" }, "body.name", "too_small"],
    ["a missing status", { status: undefined }, "body.status", "invalid_type"],
    ["an unknown field", { colour: "red" }, "body", "unrecognized_keys"],
  ])("POST with %s", (_label, overrides, field, rule) => {
    it(`is a 400 naming ${field} (${rule})`, async () => {
      const res = await call("/UserStatuses", { method: "POST", body: userStatusBody(overrides) });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("ValidationFailed");
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("lists the allowed system statuses when the status is unknown", async () => {
    const res = await call("/UserStatuses", { method: "POST", body: userStatusBody({ status: "paused" }) });
    for (const name of SYSTEM_STATUSES) expect(res.body.errors[0].message).toContain(name);
  });

  it("refuses an unknown system status on PUT too", async () => {
    const created = await createUserStatus();
    const res = await call("/UserStatuses", { method: "PUT", body: { id: created.id, name: created.name, order: 1, status: "paused" } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: "body.status", rule: "invalid_value" });
  });

  it("refuses a duplicate name regardless of case with 409 naming body.name", async () => {
    const first = await createUserStatus();
    const res = await call("/UserStatuses", { method: "POST", body: userStatusBody({ name: first.name.toUpperCase() }) });
    expect(res.status).toBe(409);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
    const other = await createUserStatus();
    const rename = await call("/UserStatuses", { method: "PUT", body: { id: other.id, name: first.name, order: 1, status: "new" } });
    expect(rename.status).toBe(409);
  });

  it("answers 404 for an unknown id", async () => {
    const id = crypto.randomUUID();
    expect((await call(`/UserStatuses/${id}`)).status).toBe(404);
    expect((await call("/UserStatuses", { method: "PUT", body: { id, name: uniqueName("x"), order: 1, status: "new" } })).status).toBe(404);
    expect((await call(`/UserStatuses/${id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("user statuses: concurrency", () => {
  it("answers 412 for a stale If-Match on PUT and DELETE", async () => {
    const created = await createUserStatus();
    const stale = { "if-match": '"stale"' };
    const put = await call("/UserStatuses", {
      method: "PUT",
      body: { id: created.id, name: created.name, order: 1, status: "new" },
      headers: stale,
    });
    expect(put.status).toBe(412);
    expect((await call(`/UserStatuses/${created.id}`, { method: "DELETE", headers: stale })).status).toBe(412);
    expect((await call(`/UserStatuses/${created.id}`)).body.status).toBe("onHold");
  });
});

describe("user statuses: list", () => {
  it("orders by order, then name, and filters by ids, searchText and system status", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const b = await createUserStatus({ name: `b ${tag}`, order: -500, status: "new" });
    const a = await createUserStatus({ name: `A ${tag}`, order: -500, status: "active" });
    const first = await createUserStatus({ name: `z ${tag}`, order: -501, status: "new" });
    const res = await call(`/UserStatuses?searchText=${tag}`);
    expect(res.status).toBe(200);
    expect(res.body.map((s: { id: string }) => s.id)).toEqual([first.id, a.id, b.id]);
    const onlyNew = await call(`/UserStatuses?searchText=${tag}&statuses=new`);
    expect(onlyNew.body.map((s: { id: string }) => s.id)).toEqual([first.id, b.id]);
    const byName = await call(`/UserStatuses?ids=${a.id},${b.id}&order=name%20desc`);
    expect(byName.body.map((s: { id: string }) => s.id)).toEqual([b.id, a.id]);
    const page = await call(`/UserStatuses?searchText=${tag}&take=1&skip=2`);
    expect(page.body.map((s: { id: string }) => s.id)).toEqual([b.id]);
    expect(page.headers.get("x-total-count")).toBeNull();
    const counted = await call(`/UserStatuses?searchText=${tag}&take=1&skip=2&includeTotal=true`);
    expect(counted.headers.get("x-total-count")).toBe("3");
  });
});

describe("user statuses: events", () => {
  it("writes an outbox event for create, update and delete", async () => {
    const created = await createUserStatus();
    await call("/UserStatuses", { method: "PUT", body: { id: created.id, name: created.name, order: 3, status: "closed" } });
    await call(`/UserStatuses/${created.id}`, { method: "DELETE" });
    expect(await outboxActions("userStatus", created.id)).toEqual(["created", "updated", "deleted"]);
  });
});

describe("user statuses: security", () => {
  it("requires a token, properties_read to read and properties_write to write", async () => {
    expect((await call("/UserStatuses", { anonymous: true })).status).toBe(401);
    expect((await call("/SystemStatuses", { anonymous: true })).status).toBe(401);
    expect((await call("/UserStatuses", { user: { permissions: [] } })).status).toBe(403);
    expect((await call("/SystemStatuses", { user: { permissions: [] } })).status).toBe(403);
    const readOnly = { permissions: ["properties_read"] };
    expect((await call("/UserStatuses", { method: "POST", body: userStatusBody(), user: readOnly })).status).toBe(403);
    const created = await createUserStatus();
    expect((await call(`/UserStatuses/${created.id}`, { method: "DELETE", user: readOnly })).status).toBe(403);
  });
});
