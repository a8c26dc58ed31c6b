/**
 * The audit trail's records (issue 34): every change writes exactly one, in the same batch as the
 * change, with who, why, the request, and the state before and after.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createDeviation } from "../support/factories/work";
import { auditRecordsOf } from "./support";

const ALICE = { id: "00000000-0000-4000-8000-0000000a11ce", name: "Alice Auditor" };

describe("audit records", () => {
  it("a deviation's create, update and delete each leave one record with before, after, actor and reason", async () => {
    const created = await call("/Deviations", {
      method: "POST",
      body: { description: "Corrosion on the flange" },
      user: ALICE,
      headers: { "audit-reason": "Found on the round", "x-request-id": "req-audit-create-1" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    let records = await auditRecordsOf("deviation", id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      action: "created",
      actorType: "user",
      actorId: ALICE.id,
      actorName: ALICE.name,
      reason: "Found on the round",
      requestId: "req-audit-create-1",
      before: null,
      etag: created.headers.get("etag")!.replace(/"/g, ""),
    });
    expect(records[0]!.after).toMatchObject({ id, description: "Corrosion on the flange" });

    const updated = await call("/Deviations", { method: "PUT", body: { ...created.body, description: "Corrosion, 2 mm deep" } });
    expect(updated.status).toBe(200);
    records = await auditRecordsOf("deviation", id);
    expect(records).toHaveLength(2);
    expect(records[1]).toMatchObject({ action: "updated", actorType: "user", reason: null });
    expect(records[1]!.before).toEqual(records[0]!.after);
    expect(records[1]!.after).toMatchObject({ description: "Corrosion, 2 mm deep" });

    expect((await call(`/Deviations/${id}`, { method: "DELETE" })).status).toBe(204);
    records = await auditRecordsOf("deviation", id);
    expect(records.map((r) => r.action)).toEqual(["created", "updated", "deleted"]);
    expect(records[2]).toMatchObject({ after: null, etag: null });
    expect(records[2]!.before).toEqual(records[1]!.after);
  });

  it("a write that fails leaves no record", async () => {
    const deviation = await createDeviation();
    const before = await auditRecordsOf("deviation", deviation.id);
    const stale = await call("/Deviations", {
      method: "PUT",
      body: { ...(await call(`/Deviations/${deviation.id}`)).body, description: "changed" },
      headers: { "if-match": '"not-the-version"' },
    });
    expect(stale.status).toBe(412);
    expect(await auditRecordsOf("deviation", deviation.id)).toEqual(before);
    const count = async () => (await env.DB.prepare("SELECT count(*) AS n FROM audit_records").first<{ n: number }>())!.n;
    const n = await count();
    const invalid = await call("/Deviations", { method: "POST", body: { description: 42 } });
    expect(invalid.status).toBe(400);
    expect(await count()).toBe(n);
  });

  it("a reason over the limit or with control characters is a 400 naming the header, and nothing is written", async () => {
    const deviation = await createDeviation();
    const read = (await call(`/Deviations/${deviation.id}`)).body;
    for (const [reason, rule] of [
      ["x".repeat(501), "maxLength"],
      ["line one%0Aline two", "noControlCharacters"],
      ["tab\there", "noControlCharacters"],
    ] as const) {
      const res = await call("/Deviations", {
        method: "PUT",
        body: { ...read, description: "never" },
        headers: { "audit-reason": reason },
      });
      expect(res.status, reason).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: "header.Audit-Reason", rule })]);
    }
    expect((await call(`/Deviations/${deviation.id}`)).body.description).toBe(read.description);
    expect(await auditRecordsOf("deviation", deviation.id)).toHaveLength(1);
    const ok = await call("/Deviations", {
      method: "PUT",
      body: { ...read, description: "re-measured" },
      headers: { "audit-reason": "R%C3%A9-mesur%C3%A9 (WO-4711)" },
    });
    expect(ok.status).toBe(200);
    expect((await auditRecordsOf("deviation", deviation.id))[1]!.reason).toBe("Ré-mesuré (WO-4711)");
  });
});
