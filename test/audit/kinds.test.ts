/**
 * Each kind of change leaves exactly one audit record with the right before, after and actor (issue
 * 34): links and unlinks, template revisions, job status changes by a person and by the service,
 * subscription changes (never their secret), job configurations (never their run option values).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createConfig, owner, step } from "../dataprocessing/support";
import { receiver, subscribe } from "../subscriptions/support";
import { createDeviation } from "../support/factories/work";
import { auditRecordsOf } from "./support";
import { pumpInAlarm } from "../monitors/alarm-support";

describe("each kind of change leaves one record", () => {
  it("a link and an unlink: one record on each side, its list changed", async () => {
    const deviation = await createDeviation();
    const workItem = (await call("/WorkItems", { method: "POST", body: { displayName: `wi ${crypto.randomUUID()}` } })).body;
    expect((await call(`/Deviations/${deviation.id}/WorkItems/${workItem.id}`, { method: "POST" })).status).toBeLessThan(300);
    let records = await auditRecordsOf("deviation", deviation.id);
    expect(records.map((r) => r.action)).toEqual(["created", "updated"]);
    expect(records[1]!.before!.workItemIds).toEqual([]);
    expect(records[1]!.after!.workItemIds).toEqual([workItem.id]);
    expect(records[1]!.after!.description).toBe(records[1]!.before!.description);
    const wi = await auditRecordsOf("workItem", workItem.id);
    expect(wi.map((r) => r.action)).toEqual(["created", "updated"]);
    expect(wi[1]!.after!.deviationIds).toEqual([deviation.id]);

    expect((await call(`/Deviations/${deviation.id}/WorkItems/${workItem.id}`, { method: "DELETE" })).status).toBeLessThan(300);
    records = await auditRecordsOf("deviation", deviation.id);
    expect(records).toHaveLength(3);
    expect(records[2]!.before!.workItemIds).toEqual([workItem.id]);
    expect(records[2]!.after!.workItemIds).toEqual([]);
    // Unlinking what is not linked is a 404, and records nothing.
    expect((await call(`/Deviations/${deviation.id}/WorkItems/${workItem.id}`, { method: "DELETE" })).status).toBe(404);
    expect(await auditRecordsOf("deviation", deviation.id)).toHaveLength(3);
  });

  it("a template revision: one record with the revision before and after", async () => {
    const created = await call("/ActivityTemplates", { method: "POST", body: { displayName: "Measure wall" } });
    const read = (await call(`/ActivityTemplates/${created.body.id}`)).body;
    const put = await call("/ActivityTemplates", { method: "PUT", body: { ...read, displayName: "Measure wall thickness" } });
    expect(put.status).toBe(200);
    const records = await auditRecordsOf("activityTemplate", created.body.id);
    expect(records.map((r) => r.action)).toEqual(["created", "updated"]);
    expect(records[1]!.before).toMatchObject({ displayName: "Measure wall" });
    expect(records[1]!.after).toMatchObject({ displayName: "Measure wall thickness" });
    expect(records[1]!.actorType).toBe("user");
  });

  it("a job: started by its owner, moved on by the service's job runner, cancelled by a person", async () => {
    const config = await createConfig();
    const run = await call(`/Jobs/Execution/${config.id}`, { method: "POST", user: owner });
    expect(run.status, run.text).toBe(201);
    const jobId = run.body.jobId as string;
    await step(run.body.chainId);
    const cancelled = await call(`/Jobs/${jobId}/Cancellation`, { method: "POST", user: { id: "canceller-1", name: "Ada" } });
    expect(cancelled.status, cancelled.text).toBeLessThan(300);
    const records = await auditRecordsOf("job", jobId);
    expect(records[0]).toMatchObject({ action: "created", actorType: "user", actorId: owner.id });
    const byService = records.filter((r) => r.actorType === "service");
    expect(byService.length).toBeGreaterThanOrEqual(1);
    expect(byService[0]).toMatchObject({ cause: "job runner", actorName: "integrity-edge" });
    expect(records.at(-1)).toMatchObject({ actorType: "user", actorId: "canceller-1", actorName: "Ada" });
    expect(records.at(-1)!.after).toMatchObject({ status: "Failed" });
    expect(records.at(-1)!.before!.status).not.toBe("Failed");
    // Run option values never reach the trail.
    const all = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_records WHERE after LIKE '%hunter2%' OR before LIKE '%hunter2%'",
    ).first<{ n: number }>();
    expect(all!.n).toBe(0);
  });

  it("a subscription: its changes recorded, its secret never", async () => {
    const sub = await subscribe({ url: receiver().url, filters: [{ entityKind: "deviation" }] });
    expect(sub.secret).toMatch(/^whsec_/);
    const put = await call("/Subscriptions", { method: "PUT", body: { ...sub.body, secret: undefined, enabled: false } });
    expect(put.status, put.text).toBe(200);
    const rotated = await call(`/Subscriptions/${sub.id}/SecretRotation`, { method: "POST" });
    expect(rotated.status, rotated.text).toBeLessThan(300);
    const records = await auditRecordsOf("subscription", sub.id);
    expect(records.length).toBeGreaterThanOrEqual(2);
    expect(records[1]).toMatchObject({ action: "updated" });
    expect(records[1]!.before).toMatchObject({ enabled: true });
    expect(records[1]!.after).toMatchObject({ enabled: false });
    const stored = await env.DB.prepare(
      "SELECT group_concat(coalesce(before, '') || coalesce(after, '')) AS text FROM audit_records WHERE entity_id = ?1",
    )
      .bind(sub.id)
      .first<{ text: string }>();
    expect(stored!.text).not.toContain(sub.secret);
    expect(stored!.text).not.toContain(rotated.body.secret ?? "whsec_never");
    expect(stored!.text).not.toMatch(/whsec_/);
  });
});

describe("alarms: the monitoring loop's transitions and people's actions", () => {
  it("entered by the loop (the service), acknowledged by a person: one record each, at /Alarms/{id}/AuditHistory", async () => {
    const { alarm } = await pumpInAlarm({ severity: "high" });
    const entered = await auditRecordsOf("alarm", alarm.id);
    expect(entered.map((r) => r.action)).toEqual(["entered"]);
    expect(entered[0]).toMatchObject({ actorType: "service", cause: "monitoring loop", before: null });
    expect(entered[0]!.after).toMatchObject({ id: alarm.id, status: "activeUnacknowledged" });

    const ack = await call(`/Alarms/${alarm.id}/Acknowledgement`, {
      method: "POST",
      body: { comment: "On my way" },
      user: { id: "operator-1", name: "Olga Operator" },
      headers: { "audit-reason": "Shift handover" },
    });
    expect(ack.status, ack.text).toBe(200);
    const records = await auditRecordsOf("alarm", alarm.id);
    expect(records.map((r) => r.action)).toEqual(["entered", "acknowledged"]);
    expect(records[1]).toMatchObject({ actorType: "user", actorId: "operator-1", actorName: "Olga Operator", reason: "Shift handover" });
    expect(records[1]!.before).toMatchObject({ status: "activeUnacknowledged" });
    expect(records[1]!.after).toMatchObject({ status: "activeAcknowledged" });
    const history = await call(`/Alarms/${alarm.id}/AuditHistory`);
    expect(history.status).toBe(200);
    expect(history.body.map((e: { action: string }) => e.action)).toEqual(["acknowledged", "entered"]);
    // The alarm's own workflow history is where it was.
    expect((await call(`/Alarms/${alarm.id}/History`)).body.map((e: { action: string }) => e.action)).toEqual(["entered", "acknowledged"]);
  });
});
