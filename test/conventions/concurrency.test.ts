import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

let counter = 0;
async function createCategory(name = `Concurrency ${++counter} ${crypto.randomUUID().slice(0, 8)}`) {
  const res = await call("/Categories", { method: "POST", body: { name } });
  expect(res.status).toBe(201);
  return { id: res.body.id as string, etag: res.headers.get("etag")!, body: res.body };
}

describe("ETags", () => {
  it("sends a strong ETag on reads and answers If-None-Match with 304", async () => {
    const created = await createCategory();
    const read = await call(`/Categories/${created.id}`);
    expect(read.headers.get("etag")).toBe(created.etag);
    const again = await call(`/Categories/${created.id}`, { headers: { "if-none-match": created.etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
  });

  it("changes the ETag on every update", async () => {
    const created = await createCategory();
    const updated = await call("/Categories", { method: "PUT", body: { id: created.id, name: `${created.body.name} renamed` } });
    expect(updated.status).toBe(200);
    expect(updated.headers.get("etag")).not.toBe(created.etag);
  });
});

describe("If-Match", () => {
  it("applies an update whose If-Match names the current version", async () => {
    const created = await createCategory();
    const res = await call("/Categories", {
      method: "PUT",
      body: { id: created.id, name: `${created.body.name} v2` },
      headers: { "if-match": created.etag },
    });
    expect(res.status).toBe(200);
  });

  it("refuses an update from a stale version with 412 and changes nothing", async () => {
    const created = await createCategory();
    await call("/Categories", { method: "PUT", body: { id: created.id, name: `${created.body.name} first` } });
    const stale = await call("/Categories", {
      method: "PUT",
      body: { id: created.id, name: "second" },
      headers: { "if-match": created.etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ code: "PreconditionFailed" });
    const read = await call(`/Categories/${created.id}`);
    expect(read.body.name).toBe(`${created.body.name} first`);
  });

  it("refuses a delete from a stale version with 412", async () => {
    const created = await createCategory();
    await call("/Categories", { method: "PUT", body: { id: created.id, name: `${created.body.name} x` } });
    const res = await call(`/Categories/${created.id}`, { method: "DELETE", headers: { "if-match": created.etag } });
    expect(res.status).toBe(412);
    expect((await call(`/Categories/${created.id}`)).status).toBe(200);
  });

  it("lets exactly one of several concurrent updates from the same ETag through", async () => {
    const created = await createCategory();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call("/Categories", {
          method: "PUT",
          body: { id: created.id, name: `${created.body.name} racer ${i}` },
          headers: { "if-match": created.etag },
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(9);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE entity_id = ?1 AND action = 'updated'")
      .bind(created.id)
      .first<{ n: number }>();
    expect(events?.n).toBe(1);
  });
});

describe("Idempotency-Key", () => {
  it("replays the first response for a repeated key", async () => {
    const name = `Idempotent ${crypto.randomUUID()}`;
    const headers = { "idempotency-key": `key-${crypto.randomUUID()}` };
    const first = await call("/Categories", { method: "POST", body: { name }, headers });
    const second = await call("/Categories", { method: "POST", body: { name }, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM categories WHERE name = ?1").bind(name).first<{ n: number }>();
    expect(rows?.n).toBe(1);
  });

  it("rejects the same key with a different body with 422 and writes nothing", async () => {
    const key = `key-${crypto.randomUUID()}`;
    await call("/Categories", { method: "POST", body: { name: `A ${key}` }, headers: { "idempotency-key": key } });
    const res = await call("/Categories", { method: "POST", body: { name: `B ${key}` }, headers: { "idempotency-key": key } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "IdempotencyKeyReused" });
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM categories WHERE name = ?1").bind(`B ${key}`).first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });

  it("scopes keys per user", async () => {
    const key = `shared-${crypto.randomUUID()}`;
    const a = await call("/Categories", {
      method: "POST",
      body: { name: `User A ${key}` },
      headers: { "idempotency-key": key },
      user: { id: "user-a" },
    });
    const b = await call("/Categories", {
      method: "POST",
      body: { name: `User B ${key}` },
      headers: { "idempotency-key": key },
      user: { id: "user-b" },
    });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it("rejects a malformed key", async () => {
    const res = await call("/Categories", { method: "POST", body: { name: "x" }, headers: { "idempotency-key": "x".repeat(300) } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe("header.Idempotency-Key");
  });

  it("replays a validation error for the same bad request rather than running it twice", async () => {
    const headers = { "idempotency-key": `bad-${crypto.randomUUID()}` };
    const first = await call("/Categories", { method: "POST", body: { name: "" }, headers });
    const second = await call("/Categories", { method: "POST", body: { name: "" }, headers });
    expect(first.status).toBe(400);
    expect(second.status).toBe(400);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
  });
});
