/**
 * Reading the audit trail (issue 34): an entity's history, the trail with its filters and export, who
 * may read what, and bad input named by parameter and rule.
 */
import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../src/pkg/permissions";
import { exports } from "cloudflare:workers";
import { call, tokenFor } from "../support/http";

/** A GET whose body is left as text (call() parses anything JSON-like, NDJSON included). */
async function raw(path: string) {
  const response = await exports.default.fetch(
    new Request(`https://api.test${path}`, { headers: { authorization: `Bearer ${await tokenFor()}` } }),
  );
  return { status: response.status, headers: response.headers, text: await response.text() };
}
import { createDeviation } from "../support/factories/work";

const ALICE = { id: "00000000-0000-4000-8000-0000000a11ce", name: "Alice Auditor" };

describe("GET /{Resource}/{id}/History", () => {
  it("shows each change newest first with actor, reason and only the fields it changed (a GET-then-PUT)", async () => {
    const deviation = await createDeviation({ description: "Corrosion on the flange" });
    const read = (await call(`/Deviations/${deviation.id}`)).body;
    // The original client's way: read the whole object, change one field, send it all back.
    const put = await call("/Deviations", {
      method: "PUT",
      body: { ...read, description: "Corrosion on the flange, 2 mm" },
      user: ALICE,
      headers: { "audit-reason": "Measured" },
    });
    expect(put.status).toBe(200);
    const again = (await call(`/Deviations/${deviation.id}`)).body;
    expect((await call("/Deviations", { method: "PUT", body: { ...again, status: "active" }, user: ALICE })).status).toBe(200);

    const history = await call(`/Deviations/${deviation.id}/History?includeTotal=true`);
    expect(history.status).toBe(200);
    expect(history.headers.get("x-total-count")).toBe("3");
    expect(history.body.map((e: { action: string }) => e.action)).toEqual(["updated", "updated", "created"]);
    const [status, edit, created] = history.body;
    expect(edit).toMatchObject({ actor: { type: "user", id: ALICE.id, name: ALICE.name, cause: null }, reason: "Measured" });
    expect(edit.changes.filter((c: { path: string }) => c.path !== "/updatedAt")).toEqual([
      { path: "/description", before: "Corrosion on the flange", after: "Corrosion on the flange, 2 mm" },
    ]);
    expect(status.changes.map((c: { path: string }) => c.path).filter((p: string) => p !== "/updatedAt")).toEqual(["/status"]);
    expect(status.etag).toBe((await call(`/Deviations/${deviation.id}`)).headers.get("etag"));
    expect(created.before).toBeNull();
    expect(created.changes.map((c: { path: string }) => c.path)).toContain("/description");

    const page = await call(`/Deviations/${deviation.id}/History?skip=1&take=1`);
    expect(page.body.map((e: { sequence: string }) => e.sequence)).toEqual([edit.sequence]);
  });

  it("keeps a deleted entity's history, and answers 404 for an id that never existed", async () => {
    const deviation = await createDeviation();
    expect((await call(`/Deviations/${deviation.id}`, { method: "DELETE" })).status).toBe(204);
    const history = await call(`/Deviations/${deviation.id}/History`);
    expect(history.status).toBe(200);
    expect(history.body.map((e: { action: string }) => e.action)).toEqual(["deleted", "created"]);
    expect(history.body[0]).toMatchObject({ after: null, changes: [] });
    expect(history.body[0].before).toMatchObject({ id: deviation.id });
    const never = await call(`/Deviations/${crypto.randomUUID()}/History`);
    expect(never.status).toBe(404);
  });

  it("needs audit_read and the permission that reads the kind", async () => {
    const deviation = await createDeviation();
    const without = (permission: string) => ({ permissions: ALL_PERMISSIONS.filter((p) => p !== permission) });
    expect((await call(`/Deviations/${deviation.id}/History`, { user: without("audit_read") })).status).toBe(403);
    expect((await call(`/Deviations/${deviation.id}/History`, { user: without("work_read") })).status).toBe(403);
    const trail = await call(`/AuditTrail?entityIds=${deviation.id}`, { user: without("work_read") });
    expect(trail.status).toBe(200);
    expect(trail.body).toEqual([]);
    expect((await call("/AuditTrail?entityKinds=deviation", { user: without("work_read") })).status).toBe(403);
  });

  it("keeps the alarm's own GET /Alarms/{id}/History and serves its audit history at /AuditHistory", async () => {
    const missing = crypto.randomUUID();
    expect((await call(`/Alarms/${missing}/AuditHistory`)).status).toBe(404);
    expect((await call(`/Alarms/${missing}/History`)).status).toBe(404);
  });
});

describe("the Audit-Reason header", () => {
  it("is documented once and declared on every write operation of the OpenAPI document", async () => {
    const doc = (await call("/openapi.json", { anonymous: true })).body;
    expect(doc.components.parameters.AuditReason).toMatchObject({ name: "Audit-Reason", in: "header", schema: { maxLength: 500 } });
    const writes = Object.entries(doc.paths as Record<string, Record<string, { parameters?: { $ref?: string }[] }>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ["post", "put", "patch", "delete"].includes(method))
          .map(([method, op]) => ({ route: `${method} ${path}`, refs: (op.parameters ?? []).map((p) => p.$ref) })),
    );
    const without = writes.filter((w) => !w.refs.includes("#/components/parameters/AuditReason")).map((w) => w.route);
    // The local token endpoint is outside defineRoute (no token, no write of an entity).
    expect(without).toEqual(["post /connect/token"]);
  });
});

describe("GET /AuditTrail", () => {
  it("filters by kind, id, actor, action and request, and exports NDJSON and CSV", async () => {
    const a = await createDeviation();
    const read = (await call(`/Deviations/${a.id}`)).body;
    await call("/Deviations", {
      method: "PUT",
      body: { ...read, description: "by Alice" },
      user: ALICE,
      headers: { "x-request-id": "req-trail-filter-1", "audit-reason": 'Quote " and, comma' },
    });
    const byActor = await call(`/AuditTrail?actorIds=${ALICE.id}&entityIds=${a.id}`);
    expect(byActor.body.map((e: { action: string }) => e.action)).toEqual(["updated"]);
    const byRequest = await call("/AuditTrail?requestId=req-trail-filter-1");
    expect(byRequest.body).toHaveLength(1);
    expect(byRequest.body[0]).toMatchObject({ entityKind: "deviation", entityId: a.id });
    const created = await call(`/AuditTrail?entityKinds=deviation&actions=created&entityIds=${a.id}`);
    expect(created.body.map((e: { action: string }) => e.action)).toEqual(["created"]);

    const ndjson = await raw(`/AuditTrail/Export?entityIds=${a.id}`);
    expect(ndjson.status).toBe(200);
    expect(ndjson.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = ndjson.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { action: string; reason: string | null });
    expect(lines.map((l) => l.action)).toEqual(["updated", "created"]);
    const csv = await raw(`/AuditTrail/Export?entityIds=${a.id}&format=csv`);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const rows = csv.text.trim().split("\r\n");
    expect(rows[0]!.startsWith("sequence,occurredAt,entityKind,entityId,action")).toBe(true);
    expect(rows).toHaveLength(3);
    expect(rows[1]).toContain('"Quote "" and, comma"');
  });

  it("names the parameter and the rule of bad input", async () => {
    const problem = async (query: string) => {
      const res = await call(`/AuditTrail?${query}`);
      expect(res.status, query).toBe(400);
      return res.body.errors[0] as { field: string; rule: string };
    };
    expect(await problem("entityKinds=deviation,gadget")).toMatchObject({ field: "query.entityKinds", rule: "enum" });
    expect(await problem("actions=renamed")).toMatchObject({ field: "query.actions", rule: "enum" });
    expect(await problem("from=2026-05-01T00:00:00Z&to=2026-04-01T00:00:00Z")).toMatchObject({ field: "query.to", rule: "afterFrom" });
    expect(await problem("from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z")).toMatchObject({ field: "query.to", rule: "maxRange" });
    expect(await problem("from=yesterday")).toMatchObject({ field: "query.from", rule: "format" });
  });
});
