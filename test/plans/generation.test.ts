/**
 * Generation (issue 36), driven through the platform's Clock seam and the Worker's scheduled handler:
 * calendar plans across a DST change, lead time, catch-up after a long outage, two cron runs for one
 * minute, from-completion plans, condition plans following a channel's analysis as readings arrive,
 * overdue items and their reminders. Each test jumps the clock to a later year of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { eventsOf } from "../support/factories/work";
import { BUILT_IN, createChannel } from "../measurements/support";
import { runGeneration } from "../../src/plans/generate";
import { env } from "cloudflare:workers";
import { createLogger } from "../../src/pkg/logger";
import { advance, clockNow, createPlan, itemsOf, jumpTo, planSetup, readPlan, setStatus, startClock, stopClock, tick } from "./support";

const MINUTE = 60_000;
const DAY = 86_400_000;
const log = createLogger("error");

beforeAll(() => startClock("2031-01-01T00:00:30Z"));
afterAll(() => stopClock());

describe("inspection plan generation", () => {
  it("generates a weekly 08:00 Berlin inspection at 08:00 local on both sides of the spring DST change, and forecasts it", async () => {
    const { tree, templateId } = await planSetup();
    const plan = await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.equipment.id],
      timeZone: "Europe/Berlin",
      startDate: "2031-03-17T08:00",
      calendar: { every: { count: 1, unit: "weeks" } },
      stack: true,
    });
    const forecast = await call(`/InspectionPlans/${plan.id}/Forecast?until=2031-04-08T00:00:00Z`);
    expect(forecast.status, forecast.text).toBe(200);
    // CET (UTC+1) until 30 March 2031, CEST (UTC+2) after.
    expect(forecast.body.map((e: { dueAt: string; reason: string }) => [e.dueAt, e.reason])).toEqual([
      ["2031-03-17T07:00:00.000Z", "calendar"],
      ["2031-03-24T07:00:00.000Z", "calendar"],
      ["2031-03-31T06:00:00.000Z", "calendar"],
      ["2031-04-07T06:00:00.000Z", "calendar"],
    ]);
    const across = await call(`/InspectionPlans/Forecast?until=2031-04-08T00:00:00Z&plantIds=${tree.plant.id}`);
    expect(across.status, across.text).toBe(200);
    expect(across.body).toHaveLength(4);
    expect(across.body[0]).toMatchObject({ planId: plan.id, assetId: tree.equipment.id });

    jumpTo("2031-03-17T06:59:30Z");
    await tick();
    expect(await itemsOf(templateId)).toEqual([]);
    for (const at of ["2031-03-17T07:00:30Z", "2031-03-24T07:00:30Z", "2031-03-31T06:00:30Z"]) {
      jumpTo(at);
      await tick();
    }
    const items = await itemsOf(templateId);
    expect(items.map((i) => i.dueDate)).toEqual(["2031-03-17T07:00:00.000Z", "2031-03-24T07:00:00.000Z", "2031-03-31T06:00:00.000Z"]);
    // Each names its plan and due date, and the template's latest revision was instantiated.
    expect(items[2]!.metadata.inspectionPlan).toMatchObject({
      id: plan.id,
      name: plan.name,
      dueDate: "2031-03-31T06:00:00.000Z",
      reason: "calendar",
    });
    const one = await call(`/WorkItems/${items[2]!.id}`);
    expect(one.body.basedOn).toEqual([{ id: templateId, revision: 1 }]);
    expect(one.body.designations.map((d: { id: string }) => d.id)).toEqual([tree.equipment.id]);
    const shown = await readPlan(plan.id);
    expect(shown.targets[0]).toMatchObject({
      lastGenerated: { workItemId: items[2]!.id, dueAt: "2031-03-31T06:00:00.000Z" },
      nextDueAt: "2031-04-07T06:00:00.000Z",
    });
  });

  it("generates lead time days ahead with dueDate the due date, one open item at a time, and the next when it is completed", async () => {
    const { tree, templateId } = await planSetup();
    const plan = await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.equipment.id],
      startDate: "2032-03-01T00:00",
      calendar: { every: { count: 1, unit: "months" } },
      leadTimeDays: 10,
    });
    expect(plan.targets[0]).toMatchObject({ nextDueAt: "2032-03-01T00:00:00.000Z", generateAt: "2032-02-20T00:00:00.000Z" });
    jumpTo("2032-02-19T23:59:30Z");
    await tick();
    expect(await itemsOf(templateId)).toEqual([]);
    jumpTo("2032-02-20T00:00:30Z");
    await tick();
    const [first] = await itemsOf(templateId);
    expect(first).toMatchObject({ dueDate: "2032-03-01T00:00:00.000Z" });
    // April's generation time (22 March) passes while March's item is open: nothing more (stack is false).
    jumpTo("2032-03-25T00:00:30Z");
    await tick();
    expect(await itemsOf(templateId)).toHaveLength(1);
    expect((await readPlan(plan.id)).targets[0]).toMatchObject({
      openWorkItemId: first!.id,
      generateAt: null,
      nextDueAt: "2032-04-01T00:00:00.000Z",
    });
    await setStatus(first!.id, "completed");
    advance(MINUTE);
    await tick();
    const items = await itemsOf(templateId);
    expect(items.map((i) => i.dueDate)).toEqual(["2032-03-01T00:00:00.000Z", "2032-04-01T00:00:00.000Z"]);
    expect((await readPlan(plan.id)).targets[0]).toMatchObject({
      lastCompleted: { workItemId: first!.id },
      openWorkItemId: items[1]!.id,
    });
  });

  it("catches up once after a long outage, and two cron runs for the same minute generate one item", async () => {
    const { tree, templateId } = await planSetup();
    await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.equipment.id],
      startDate: "2033-01-01T00:00",
      calendar: { cron: "0 6 * * *" },
      stack: true,
    });
    // Down from before the first occurrence for five days: one item, the earliest missed, then the next after now.
    jumpTo("2033-01-05T12:00:30Z");
    await tick();
    advance(MINUTE);
    await tick();
    const items = await itemsOf(templateId);
    expect(items.map((i) => i.dueDate)).toEqual(["2033-01-01T06:00:00.000Z"]);
    // Two Cron Triggers for the same minute, and two generation runs at once: one item for 6 January.
    jumpTo("2033-01-06T06:00:30Z");
    await Promise.all([tick(2), runGeneration(env, log), runGeneration(env, log)]);
    expect((await itemsOf(templateId)).map((i) => i.dueDate)).toEqual(["2033-01-01T06:00:00.000Z", "2033-01-06T06:00:00.000Z"]);
  });

  it("counts a from-completion interval from when the previous item was completed, not from when it was due", async () => {
    const { tree, templateId } = await planSetup();
    const plan = await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.equipment.id],
      startDate: "2034-01-10T00:00",
      fromCompletion: { every: { count: 30, unit: "days" } },
    });
    jumpTo("2034-01-10T00:00:30Z");
    await tick();
    const [first] = await itemsOf(templateId);
    expect(first).toMatchObject({ dueDate: "2034-01-10T00:00:00.000Z" });
    expect(first!.metadata.inspectionPlan.reason).toBe("completion");
    // Completed 20 days late: the next is due 30 days after the completion.
    jumpTo("2034-01-30T09:00:00Z");
    await setStatus(first!.id, "completed");
    advance(MINUTE);
    await tick();
    const target = (await readPlan(plan.id)).targets[0];
    expect(target.lastCompleted.workItemId).toBe(first!.id);
    const completedAt = Date.parse(target.lastCompleted.completedAt);
    expect(target.nextDueAt).toBe(new Date(completedAt + 30 * DAY).toISOString());
    jumpTo(new Date(completedAt + 30 * DAY + 30_000).toISOString());
    await tick();
    expect((await itemsOf(templateId)).map((i) => i.dueDate)).toEqual(["2034-01-10T00:00:00.000Z", target.nextDueAt]);
  });

  it("follows a channel's next inspection date as readings arrive, and generates when it comes", async () => {
    const channel = await createChannel({ nominalThickness: 12.7, minimumThickness: 6 });
    const { templateId } = await planSetup();
    const assetId = (channel.asset as { id: string }).id;
    const plan = await createPlan({
      workTemplateId: templateId,
      assetIds: [assetId],
      condition: { kind: "nextInspection", channelId: channel.id },
    });
    const record = async (readings: [string, number][]) => {
      const res = await call("/signals/bulk", {
        method: "POST",
        body: readings.map(([iso, value]) => ({ channelNumber: channel.channelNumber, timestamp: Date.parse(iso), value })),
      });
      expect(res.status, res.text).toBe(201);
    };
    const nextInspection = async () => (await call(`/Channels/${channel.id}`)).body.analysis.nextInspectionDate as string;

    jumpTo("2035-01-01T00:00:30Z");
    await record([
      ["2033-01-01T00:00:00Z", 12.0],
      ["2034-01-01T00:00:00Z", 11.0],
    ]);
    const firstDate = await nextInspection();
    advance(MINUTE);
    await tick();
    expect((await readPlan(plan.id)).targets[0]).toMatchObject({ nextDueAt: new Date(firstDate).toISOString(), nextReason: "condition" });

    // Faster corrosion: the next inspection comes earlier, and the plan follows.
    await record([["2035-01-01T00:00:00Z", 9.0]]);
    const secondDate = await nextInspection();
    expect(Date.parse(secondDate)).toBeLessThan(Date.parse(firstDate));
    advance(MINUTE);
    await tick();
    expect((await readPlan(plan.id)).targets[0]).toMatchObject({ nextDueAt: new Date(secondDate).toISOString() });
    const forecast = await call(`/InspectionPlans/${plan.id}/Forecast?until=2037-01-01T00:00:00Z`);
    expect(forecast.body).toEqual([expect.objectContaining({ dueAt: new Date(secondDate).toISOString(), reason: "condition" })]);

    jumpTo(new Date(Date.parse(secondDate) + 30_000).toISOString());
    await tick();
    const items = await itemsOf(templateId);
    expect(items.map((i) => [i.dueDate, i.metadata.inspectionPlan.reason])).toEqual([[new Date(secondDate).toISOString(), "condition"]]);
    // Generated once for that date: the next tick finds nothing more.
    advance(MINUTE);
    await tick();
    expect(await itemsOf(templateId)).toHaveLength(1);
  });

  it("generates meter-style each time the readings pass another step of the value", async () => {
    const channel = await createChannel({ channelTypeId: BUILT_IN.pressure });
    const { templateId } = await planSetup();
    const assetId = (channel.asset as { id: string }).id;
    await createPlan({
      workTemplateId: templateId,
      assetIds: [assetId],
      condition: { kind: "readingPasses", channelId: channel.id, every: 5000 },
    });
    const reading = async (iso: string, value: number) => {
      const res = await call("/signals", {
        method: "POST",
        body: { channelNumber: channel.channelNumber, timestamp: Date.parse(iso), value },
      });
      expect(res.status, res.text).toBe(201);
    };
    jumpTo("2036-01-01T00:00:30Z");
    await reading("2036-01-01T00:00:00Z", 4000);
    advance(MINUTE);
    await tick();
    expect(await itemsOf(templateId)).toEqual([]);
    // Past 5,000 running hours: one item, due when the reading was taken; 9,000 is still in the same step.
    await reading("2036-01-02T00:00:00Z", 5100);
    jumpTo("2036-01-02T00:01:00Z");
    await tick();
    await reading("2036-01-03T00:00:00Z", 9000);
    jumpTo("2036-01-03T00:01:00Z");
    await tick();
    const first = await itemsOf(templateId);
    expect(first.map((i) => [i.dueDate, i.metadata.inspectionPlan.reason])).toEqual([["2036-01-02T00:00:00.000Z", "condition"]]);
    // Completed, then 10,200 passes the next step.
    await setStatus(first[0]!.id, "completed");
    await reading("2036-01-04T00:00:00Z", 10_200);
    jumpTo("2036-01-04T00:01:00Z");
    await tick();
    expect((await itemsOf(templateId)).map((i) => i.dueDate)).toEqual(["2036-01-02T00:00:00.000Z", "2036-01-04T00:00:00.000Z"]);
  });

  it("announces an overdue item once, reminds at the plan's interval until it is completed, and lists it as overdue", async () => {
    const { tree, templateId } = await planSetup();
    await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.equipment.id],
      startDate: "2036-06-01T08:00",
      calendar: { every: { count: 1, unit: "years" } },
      reminderIntervalDays: 2,
      leadTimeDays: 1,
    });
    jumpTo("2036-05-31T08:00:30Z");
    await tick();
    const [item] = await itemsOf(templateId);
    const overdueEvents = async () => (await eventsOf(item!.id)).filter((e) => e.action === "overdue");
    expect(await overdueEvents()).toEqual([]);
    expect((await call(`/WorkItems?overdue=true&basedOnIds=${templateId}`)).body).toEqual([]);

    const since = (await env.DB.prepare("SELECT max(seq) AS n FROM outbox").first<{ n: number }>())!.n;
    jumpTo("2036-06-01T08:00:30Z");
    await tick();
    expect((await overdueEvents()).map((e) => (e.payload!.overdue as { reminder: number }).reminder)).toEqual([0]);
    // The change feed hears it too (webhooks take the same outbox events).
    const feed = await call(`/Changes?types=workItem&since=${since}&take=500`);
    expect(feed.body.changes.filter((c: { id: string; action: string }) => c.id === item!.id && c.action === "overdue")).toHaveLength(1);
    const listed = await call(`/WorkItems?overdue=true&basedOnIds=${templateId}`);
    expect(listed.body.map((w: { id: string }) => w.id)).toEqual([item!.id]);
    expect((await call(`/WorkItems?overdue=false&basedOnIds=${templateId}`)).body).toEqual([]);

    advance(DAY);
    await tick();
    expect(await overdueEvents()).toHaveLength(1);
    advance(DAY + MINUTE);
    await tick();
    expect((await overdueEvents()).map((e) => (e.payload!.overdue as { reminder: number }).reminder)).toEqual([0, 1]);

    await setStatus(item!.id, "completed");
    advance(3 * DAY);
    await tick();
    expect(await overdueEvents()).toHaveLength(2);
    expect((await call(`/WorkItems?overdue=true&basedOnIds=${templateId}`)).body).toEqual([]);
    expect(clockNow().getTime()).toBeGreaterThan(Date.parse("2036-06-06T00:00:00Z"));
  });

  it("announces an item whose due date a planner moves into the past, at the next minute, once", async () => {
    const { tree, templateId } = await planSetup();
    await createPlan({
      workTemplateId: templateId,
      assetIds: [tree.equipment.id],
      startDate: "2037-06-01T08:00",
      calendar: { every: { count: 1, unit: "years" } },
      leadTimeDays: 10,
    });
    jumpTo("2037-05-22T08:00:30Z");
    await tick();
    const [item] = await itemsOf(templateId);
    expect(item!.dueDate).toBe("2037-06-01T08:00:00.000Z");
    const overdueEvents = async () => (await eventsOf(item!.id)).filter((e) => e.action === "overdue");
    advance(MINUTE);
    await tick();
    expect(await overdueEvents()).toEqual([]);

    // Not by its due date passing, nor by its creation: an update moves the due date to yesterday.
    advance(20_000);
    const read = await call(`/WorkItems/${item!.id}`);
    const moved = await call("/WorkItems", { method: "PUT", body: { ...read.body, dueDate: "2037-05-21T08:00:00.000Z" } });
    expect(moved.status, moved.text).toBe(200);
    advance(40_000);
    await tick();
    expect((await overdueEvents()).map((e) => (e.payload!.overdue as { reminder: number; at: string }).at)).toEqual([
      clockNow().toISOString(),
    ]);
    const listed = await call(`/WorkItems?overdue=true&basedOnIds=${templateId}`);
    expect(listed.body.map((w: { id: string }) => w.id)).toEqual([item!.id]);
    // The next minutes read the same change again (their overlap) and announce nothing more.
    advance(MINUTE);
    await tick();
    advance(MINUTE);
    await tick();
    expect(await overdueEvents()).toHaveLength(1);
  });
});
