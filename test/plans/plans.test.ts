/**
 * Inspection plans (issue 36) as a resource: CRUD on the resource contract, the list, what a plan shows
 * per asset, the bad input the issue names (each a 400 naming the field and rule, changing nothing), and
 * the work template a plan uses, whose delete is refused while the plan exists.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createChannel } from "../measurements/support";
import { createPlan, planSetup, unique } from "./support";

const yearly = { every: { count: 1, unit: "years" } };

describe("InspectionPlans", () => {
  it("creates, reads, lists, replaces and deletes a plan; each asset shows its next due date", async () => {
    const { tree, templateId } = await planSetup();
    const plan = await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.equipment.id, tree.designObject.id],
      timeZone: "Europe/Berlin",
      startDate: "2030-03-01T08:00",
      calendar: yearly,
      leadTimeDays: 30,
      tags: ["ut"],
      responsible: { id: "auth0|ada", name: "Ada" },
    });
    expect(plan).toMatchObject({ status: "active", itemPer: "asset", leadTimeDays: 30, stack: false, startDate: "2030-03-01T08:00" });
    expect(plan.targets).toHaveLength(2);
    // 08:00 in Berlin on 1 March (CET, UTC+1), generated 30 days before.
    expect(plan.targets[0]).toMatchObject({
      nextDueAt: "2030-03-01T07:00:00.000Z",
      nextReason: "calendar",
      generateAt: "2030-01-30T07:00:00.000Z",
    });

    const got = await call(`/InspectionPlans/${plan.id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("etag")).toBe(plan.etag);

    const listed = await call(`/InspectionPlans?assetIds=${tree.designObject.id}&includeTotal=true`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.map((p: { id: string }) => p.id)).toEqual([plan.id]);

    // Suspending keeps the next due date and stops generation; one asset fewer drops its target.
    const put = await call("/InspectionPlans", {
      method: "PUT",
      headers: { "if-match": plan.etag },
      body: { ...got.body, status: "suspended", assetIds: [tree.equipment.id] },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.targets).toEqual([
      expect.objectContaining({ assetId: tree.equipment.id, nextDueAt: "2030-03-01T07:00:00.000Z", generateAt: null }),
    ]);

    const stale = await call("/InspectionPlans", { method: "PUT", headers: { "if-match": plan.etag }, body: { ...got.body, name: "x" } });
    expect(stale.status).toBe(412);

    const deleted = await call(`/InspectionPlans/${plan.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect((await call(`/InspectionPlans/${plan.id}`)).status).toBe(404);
  });

  it("refuses no due rule, a zero interval, a never-firing cron, a missing template or channel, too long a lead time", async () => {
    const { tree, templateId } = await planSetup();
    const base = { name: unique("plan"), workTemplateId: templateId, assetIds: [tree.equipment.id] };
    const cases: [Record<string, unknown>, string, string][] = [
      [base, "body", "dueRule"],
      [{ ...base, calendar: { every: { count: 0, unit: "months" } } }, "body.calendar.every.count", "too_small"],
      [{ ...base, calendar: { cron: "0 8 30 2 *" } }, "body.calendar.cron", "neverFires"],
      [{ ...base, calendar: { cron: "every day" } }, "body.calendar.cron", "cron"],
      [{ ...base, workTemplateId: crypto.randomUUID(), calendar: yearly }, "body.workTemplateId", "exists"],
      [{ ...base, condition: { kind: "nextInspection", channelId: crypto.randomUUID() } }, "body.condition.channelId", "exists"],
      [{ ...base, calendar: { every: { count: 2, unit: "weeks" } }, leadTimeDays: 14 }, "body.leadTimeDays", "leadTime"],
      [{ ...base, fromCompletion: { every: { count: 1, unit: "months" } }, leadTimeDays: 45 }, "body.leadTimeDays", "leadTime"],
      [{ ...base, calendar: { cron: "0 8 * * 1" }, leadTimeDays: 7 }, "body.leadTimeDays", "leadTime"],
      [{ ...base, calendar: yearly, timeZone: "Mars/Olympus" }, "body.timeZone", "timeZone"],
    ];
    const before = await call("/InspectionPlans?includeTotal=true");
    for (const [body, field, rule] of cases) {
      const res = await call("/InspectionPlans", { method: "POST", body });
      expect(res.status, `${field} ${rule}: ${res.text}`).toBe(400);
      expect(res.body.errors, `${field} ${rule}`).toEqual(expect.arrayContaining([expect.objectContaining({ field, rule })]));
    }
    const after = await call("/InspectionPlans?includeTotal=true");
    expect(after.headers.get("x-total-count")).toBe(before.headers.get("x-total-count"));
  });

  it("refuses to delete the work template a plan uses (409 naming the plan), and deletes it once the plan is gone", async () => {
    const { tree, templateId } = await planSetup();
    const plan = await createPlan({
      name: unique("Vessel V-1 yearly"),
      workTemplateId: templateId,
      assetIds: [tree.equipment.id],
      calendar: yearly,
    });
    const refused = await call(`/WorkTemplates/${templateId}`, { method: "DELETE" });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.detail).toContain(plan.name);
    expect(refused.body.detail).toContain(plan.id);
    expect((await call(`/InspectionPlans/${plan.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/WorkTemplates/${templateId}`, { method: "DELETE" })).status).toBe(204);
  });

  it("refuses to delete an asset a plan generates work on (409 naming the plans), and deletes it once they are gone", async () => {
    const { tree, templateId } = await planSetup();
    // One plan makes an item per asset; the other, one item for all its assets: both name the equipment.
    const perAsset = await createPlan({ workTemplateId: templateId, assetIds: [tree.equipment.id], calendar: yearly });
    const perPlan = await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.plant.id, tree.equipment.id.toUpperCase()],
      itemPer: "plan",
      calendar: yearly,
    });
    const refused = await call(`/Assets/${tree.equipment.id}`, { method: "DELETE" });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.code).toBe("InUse");
    for (const plan of [perAsset, perPlan]) expect(refused.body.detail).toContain(`'${plan.name}' (${plan.id})`);
    expect((await call(`/Assets/${tree.equipment.id}`)).status).toBe(200);
    expect((await call(`/InspectionPlans/${perAsset.id}`, { method: "DELETE" })).status).toBe(204);
    const still = await call(`/Assets/${tree.equipment.id}`, { method: "DELETE" });
    expect(still.status, still.text).toBe(409);
    expect(still.body.detail).not.toContain(perAsset.id);
    expect((await call(`/InspectionPlans/${perPlan.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/Assets/${tree.equipment.id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("takes a channel's next inspection date as a condition", async () => {
    const channel = await createChannel({ nominalThickness: 12, minimumThickness: 6 });
    const { templateId } = await planSetup();
    const plan = await createPlan({
      workTemplateId: templateId,
      assetIds: [channel.asset && (channel.asset as { id: string }).id],
      condition: { kind: "nextInspection", channelId: channel.id },
    });
    // No readings yet: no date.
    expect(plan.targets[0]).toMatchObject({ nextDueAt: null, generateAt: null });
  });
});
