import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../src/pkg/permissions";
import { call } from "../support/http";
import { receiver, subscribe } from "./support";

const deviationsCreated = [{ entityKind: "deviation", action: "created" }];

describe("/Subscriptions", () => {
  it("shows the secret once, at creation; reads never show it and D1 holds it sealed", async () => {
    const { url } = receiver();
    const created = await subscribe({ url, filters: deviationsCreated, description: "Inspection desk" });
    expect(created.body).toMatchObject({
      url,
      description: "Inspection desk",
      enabled: true,
      disabledReason: null,
      filters: [{ entityKind: "deviation", action: "created", statuses: null }],
    });
    expect(created.secret).toMatch(/^whsec_/);

    const read = await call(`/Subscriptions/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.headers.get("etag")).toBe(created.etag);
    expect(read.text).not.toContain(created.secret);
    expect(Object.keys(read.body)).not.toContain("secret");
    const list = await call(`/Subscriptions?ids=${created.id}`);
    expect(list.body).toHaveLength(1);
    expect(list.text).not.toContain("whsec_");

    const row = await env.DB.prepare("SELECT secret_sealed FROM webhook_subscriptions WHERE id = ?1")
      .bind(created.id)
      .first<{ secret_sealed: string }>();
    expect(row!.secret_sealed).toMatch(/^v1\./);
    expect(row!.secret_sealed).not.toContain(created.secret.slice(6, 20));
    // Its own event carries no secret either.
    const event = await env.DB.prepare("SELECT payload FROM outbox WHERE entity_id = ?1").bind(created.id).first<{ payload: string }>();
    expect(event!.payload).not.toContain("whsec_");
    expect(event!.payload).not.toContain(row!.secret_sealed);
  });

  it("replays a create with the same Idempotency-Key (same subscription, same secret)", async () => {
    const { url } = receiver();
    const key = `sub-${crypto.randomUUID()}`;
    const first = await call("/Subscriptions", {
      method: "POST",
      body: { url, filters: deviationsCreated },
      headers: { "idempotency-key": key },
    });
    const again = await call("/Subscriptions", {
      method: "POST",
      body: { url, filters: deviationsCreated },
      headers: { "idempotency-key": key },
    });
    expect(first.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });

  it("updates as a whole object with If-Match, and deletes with the deliveries", async () => {
    const { url } = receiver();
    const created = await subscribe({ url, filters: deviationsCreated });
    const updated = await call("/Subscriptions", {
      method: "PUT",
      body: {
        ...created.body,
        secret: undefined,
        filters: [
          { entityKind: "alarm", action: "entered" },
          { entityKind: "job", statuses: ["Failed"] },
        ],
      },
      headers: { "if-match": created.etag },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.filters).toEqual([
      { entityKind: "alarm", action: "entered", statuses: null },
      { entityKind: "job", action: null, statuses: ["Failed"] },
    ]);
    const { results } = await env.DB.prepare(
      "SELECT entity_kind, action FROM webhook_subscription_filters WHERE subscription_id = ?1 ORDER BY entity_kind",
    )
      .bind(created.id)
      .all();
    expect(results).toEqual([
      { entity_kind: "alarm", action: "entered" },
      { entity_kind: "job", action: "*" },
    ]);

    // A stale version changes nothing, filters included.
    const stale = await call("/Subscriptions", {
      method: "PUT",
      body: { ...updated.body, filters: deviationsCreated },
      headers: { "if-match": created.etag },
    });
    expect(stale.status).toBe(412);
    const after = await env.DB.prepare("SELECT count(*) AS n FROM webhook_subscription_filters WHERE subscription_id = ?1")
      .bind(created.id)
      .first<{ n: number }>();
    expect(after!.n).toBe(2);

    await env.DB.prepare(
      "INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, entity_kind, entity_id, " +
        "occurred_at, payload, truncated, status, attempts, round, round_attempts, created_at, updated_at) VALUES (?1, " +
        "?2, ?3, 'alarm.entered', 'alarm', 'x', ?4, '{}', 0, 'succeeded', 1, 0, 1, ?4, ?4)",
    )
      .bind(crypto.randomUUID(), created.id, crypto.randomUUID(), new Date().toISOString())
      .run();
    const removed = await call(`/Subscriptions/${created.id}`, { method: "DELETE", headers: { "if-match": updated.headers.get("etag")! } });
    expect(removed.status).toBe(204);
    expect((await call(`/Subscriptions/${created.id}`)).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE subscription_id = ?1")
      .bind(created.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("lists on the query engine: enabled, entity kinds, search, order, paging", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const a = await subscribe({ url: `https://a-${tag}.example.com/h`, filters: deviationsCreated, description: `alpha ${tag}` });
    const b = await subscribe({
      url: `https://b-${tag}.example.com/h`,
      filters: [{ entityKind: "alarm" }],
      description: `beta ${tag}`,
      enabled: false,
    });
    const bySearch = await call(`/Subscriptions?searchText=${tag}&order=description asc&includeTotal=true`);
    expect(bySearch.body.map((s: { id: string }) => s.id)).toEqual([a.id, b.id]);
    expect(bySearch.headers.get("x-total-count")).toBe("2");
    expect((await call(`/Subscriptions?searchText=${tag}&enabled=false`)).body.map((s: { id: string }) => s.id)).toEqual([b.id]);
    expect((await call(`/Subscriptions?searchText=${tag}&entityKinds=alarm,job`)).body.map((s: { id: string }) => s.id)).toEqual([b.id]);
    expect((await call(`/Subscriptions?searchText=${tag}&take=1`)).body.map((s: { id: string }) => s.id)).toEqual([b.id]);
    expect(b.body.disabledAt).not.toBeNull();
    const badOrder = await call("/Subscriptions?order=secret asc");
    expect(badOrder.status).toBe(400);
  });

  it("refuses unknown entity kinds and actions, naming the field and what is known", async () => {
    const { url } = receiver();
    const kind = await call("/Subscriptions", { method: "POST", body: { url, filters: [{ entityKind: "deviatoin" }] } });
    expect(kind.status).toBe(400);
    expect(kind.body.errors[0]).toMatchObject({ field: "body.filters.0.entityKind", rule: "enum" });
    expect(kind.body.errors[0].message).toContain("deviation");
    const action = await call("/Subscriptions", { method: "POST", body: { url, filters: [{ entityKind: "alarm", action: "created" }] } });
    expect(action.status).toBe(400);
    expect(action.body.errors[0]).toMatchObject({ field: "body.filters.0.action" });
    expect(action.body.errors[0].message).toContain("entered, left");
    const none = await call("/Subscriptions", { method: "POST", body: { url, filters: [] } });
    expect(none.status).toBe(400);
    const extra = await call("/Subscriptions", { method: "POST", body: { url, filters: deviationsCreated, secret: "whsec_mine" } });
    expect(extra.status).toBe(400);
  });

  it("needs its own permissions, and the author must be able to read what they subscribe to", async () => {
    const { url } = receiver();
    const readOnly = { permissions: ["subscriptions_read", "work_read"] };
    expect((await call("/Subscriptions", { method: "POST", body: { url, filters: deviationsCreated }, user: readOnly })).status).toBe(403);
    expect((await call("/Subscriptions", { user: { permissions: ["work_read"] } })).status).toBe(403);
    expect((await call("/Subscriptions", { user: readOnly })).status).toBe(200);
    const noAssets = await call("/Subscriptions", {
      method: "POST",
      body: { url, filters: deviationsCreated },
      user: { permissions: ["subscriptions_write"] },
    });
    expect(noAssets.status).toBe(403);
    expect(noAssets.body.detail).toContain("deviation events need work_read");
    const allowed = await call("/Subscriptions", {
      method: "POST",
      body: { url, filters: deviationsCreated },
      user: { permissions: ["subscriptions_write", "work_read"] },
    });
    expect(allowed.status).toBe(201);
    expect(ALL_PERMISSIONS).toEqual(expect.arrayContaining(["subscriptions_read", "subscriptions_write"]));
  });

  it("rotates the secret: shown once, a new version, never on reads", async () => {
    const { url } = receiver();
    const created = await subscribe({ url, filters: deviationsCreated });
    const rotated = await call(`/Subscriptions/${created.id}/SecretRotation`, { method: "POST", headers: { "if-match": created.etag } });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);
    expect(rotated.headers.get("etag")).not.toBe(created.etag);
    expect(rotated.body.secretRotatedAt >= created.body.secretRotatedAt).toBe(true);
    const stale = await call(`/Subscriptions/${created.id}/SecretRotation`, { method: "POST", headers: { "if-match": created.etag } });
    expect(stale.status).toBe(412);
    expect((await call(`/Subscriptions/${created.id}`)).text).not.toContain(rotated.body.secret);
    expect(
      (await call(`/Subscriptions/${created.id}/SecretRotation`, { method: "POST", user: { permissions: ["subscriptions_read"] } })).status,
    ).toBe(403);
  });

  it("lists the event types with the permission each needs", async () => {
    const res = await call("/Subscriptions/EventTypes");
    expect(res.status).toBe(200);
    const alarm = res.body.find((k: { entityKind: string }) => k.entityKind === "alarm");
    // Entered and left by the loop (issue 25); worked by people and the clock (issue 33).
    const actions = ["entered", "left", "acknowledged", "assigned", "unassigned", "commented", "shelved", "unshelved", "escalated"];
    expect(alarm).toMatchObject({ actions, eventTypes: actions.map((a) => `alarm.${a}`), permission: "monitors_read" });
    expect(res.body.find((k: { entityKind: string }) => k.entityKind === "deviation").eventTypes).toContain("deviation.created");
  });
});
