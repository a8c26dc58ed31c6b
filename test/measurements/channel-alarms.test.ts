/**
 * Issue 35: a channel's controllers, evaluated by the monitoring loop after every batch of readings
 * and every void. They enter and leave the same alarms as a monitor's (GET /Alarms), with the same
 * actions: a deviation on the channel's asset, a work item from a template, events.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { outboxActions } from "../support/factories/types";
import { workTemplate } from "../monitors/alarm-support";
import { at, BUILT_IN, createChannel } from "./support";

async function post(channelNumber: number, readings: [string, number][]) {
  const res = await call("/signals/bulk", {
    method: "POST",
    body: readings.map(([iso, value]) => ({ channelNumber, timestamp: at(iso), value })),
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { batchId: string };
}

interface Alarm {
  id: string;
  controller: string;
  active: boolean;
  deviationId: string;
  workItemId: string;
  conditions: { variableName: string; value: number; holds: boolean }[];
  leftReadingsBatchId: string | null;
}

const alarmsOf = async (channelId: string) => {
  const res = await call(`/Alarms?channelIds=${channelId}&order=enteredAt asc`);
  expect(res.status, res.text).toBe(200);
  return res.body.items as Alarm[];
};

describe("a channel's controllers raise work through the monitoring loop", () => {
  it("enters an alarm when the life left falls below a limit, raises a deviation and a work item, and leaves it when voided", async () => {
    const template = await workTemplate();
    const ch = await createChannel({
      nominalThickness: 12.7,
      minimumThickness: 8.0,
      controllers: [
        {
          name: "Short life",
          severity: "high",
          conditions: [{ variableName: "remainingLifeYears", operator: "LessThan", comparisonValue: 5 }],
          actions: { raiseDeviation: { status: "active" }, createWorkItem: { workTemplateId: template.id } },
          onLeave: { deviationStatus: "closed" },
        },
      ],
    });
    // 12.0 → 11.0 in 2024 (366 days, 1.00205 years of 365.25 days): 0.99795 mm/year, so (11.0 − 8.0) / 0.99795 = 3.00616
    // years of life left: below 5.
    await post(ch.channelNumber, [["2024-01-01T00:00:00Z", 12.0]]);
    expect(await alarmsOf(ch.id)).toEqual([]);
    const second = await post(ch.channelNumber, [["2025-01-01T00:00:00Z", 11.0]]);

    const [alarm, ...more] = await alarmsOf(ch.id);
    expect(more).toEqual([]);
    expect(alarm).toMatchObject({
      source: "channel",
      monitor: null,
      populationItem: null,
      channel: { id: ch.id, channelNumber: ch.channelNumber, name: ch.name },
      controller: "Short life",
      severity: "high",
      status: "activeUnacknowledged",
      enteredMonitorJobId: null,
      enteredReadingsBatchId: second.batchId,
      asset: { id: ch.assetId, type: "Equipment" },
      plantId: ch.plantId,
    });
    const seen = alarm!.conditions[0]!;
    expect(seen).toMatchObject({ variableName: "remainingLifeYears", holds: true });
    expect(seen.value).toBeCloseTo(3.0 * (366 / 365.25), 4);

    // The deviation: on the channel's asset, its origin the channel, the controller and the batch; the work item linked.
    const deviation = (await call(`/Deviations/${alarm!.deviationId}`)).body;
    expect(deviation.status).toBe("active");
    expect(deviation.assetReference.equipment.id).toBe(ch.assetId);
    expect(deviation.origin).toEqual({
      kind: "measurement",
      monitor: null,
      channel: { id: ch.id, channelNumber: ch.channelNumber, name: ch.name },
      controller: "Short life",
      monitorJobId: null,
      readingsBatchId: second.batchId,
      alarmId: alarm!.id,
    });
    expect(deviation.description).toContain(`channel ${ch.channelNumber}`);
    expect(deviation.workItemIds).toEqual([alarm!.workItemId]);
    const workItem = (await call(`/WorkItems/${alarm!.workItemId}`)).body;
    expect(workItem.basedOn).toEqual([{ id: template.id, revision: 1 }]);
    expect(workItem.designations.map((d: { id: string }) => d.id)).toEqual([ch.assetId]);
    expect(await outboxActions("alarm", alarm!.id)).toEqual(["entered"]);

    // The channel says so, under a new version.
    const inAlarm = await call(`/Channels/${ch.id}`);
    expect(inAlarm.body.alarmState).toBe("alarm");
    expect(inAlarm.headers.get("etag")).not.toBe(ch.etag);
    const alarmed = (await call(`/Channels?alarmStates=alarm&assetIds=${ch.assetId}`)).body;
    expect(alarmed.map((c: { id: string }) => c.id)).toEqual([ch.id]);

    // The same readings again (a retried request) change nothing.
    await post(ch.channelNumber, [["2025-01-01T00:00:00Z", 11.0]]);
    expect(await alarmsOf(ch.id)).toHaveLength(1);

    // A correction: the 2025 reading was a mis-read and is voided; one reading has no rate, so no life: the alarm is left.
    const voided = await call(`/Channels/${ch.id}/Readings/${at("2025-01-01T00:00:00Z")}/Void`, {
      method: "POST",
      body: { reason: "probe on the weld cap" },
    });
    expect(voided.status, voided.text).toBe(200);
    const [left] = await alarmsOf(ch.id);
    expect(left).toMatchObject({ active: false, status: "clearedUnacknowledged" });
    expect(left!.leftReadingsBatchId).toEqual(expect.any(String));
    expect((await call(`/Deviations/${alarm!.deviationId}`)).body.status).toBe("closed");
    expect((await call(`/Channels/${ch.id}`)).body.alarmState).toBe("normal");
    expect(await outboxActions("alarm", alarm!.id)).toEqual(["entered", "left"]);
  });

  it("evaluates value on the latest reading and min/max on the batch, with pendingFor counting batches", async () => {
    const ch = await createChannel({
      channelTypeId: BUILT_IN.pressure,
      controllers: [
        { name: "Spike", conditions: [{ variableName: "max", operator: "GreaterThen", comparisonValue: 20 }] },
        { name: "High", pendingFor: 2, conditions: [{ variableName: "value", operator: "GreaterThen", comparisonValue: 10 }] },
      ],
    });
    // A spike inside the batch, the latest reading back to normal: only the batch's max holds.
    await post(ch.channelNumber, [
      ["2026-01-01T00:00:00Z", 5],
      ["2026-01-01T00:00:01Z", 25],
      ["2026-01-01T00:00:02Z", 6],
    ]);
    expect((await alarmsOf(ch.id)).map((a) => [a.controller, a.active])).toEqual([["Spike", true]]);
    // Above 10 once: pending; a second batch: entered. The spike's batch is over: Spike is left.
    await post(ch.channelNumber, [["2026-01-01T00:01:00Z", 12]]);
    expect((await alarmsOf(ch.id)).map((a) => [a.controller, a.active])).toEqual([["Spike", false]]);
    await post(ch.channelNumber, [["2026-01-01T00:02:00Z", 13]]);
    expect((await alarmsOf(ch.id)).map((a) => [a.controller, a.active])).toEqual([
      ["Spike", false],
      ["High", true],
    ]);
    // A channel alarm is worked as any: acknowledged, and shelved at most for the channel's maxShelveMinutes.
    const high = (await alarmsOf(ch.id))[1]!;
    const ack = await call(`/Alarms/${high.id}/Acknowledgement`, { method: "POST", body: { comment: "seen" } });
    expect(ack.status, ack.text).toBe(200);
    expect(ack.body.status).toBe("activeAcknowledged");
    const tooLong = await call(`/Alarms/${high.id}/Shelving`, { method: "POST", body: { durationMinutes: 481 } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.detail).toContain(`channel ${ch.channelNumber}'s maxShelveMinutes`);
    // Only channel alarms, or only monitor alarms.
    expect((await call(`/Alarms?sources=monitor&channelIds=${ch.id}`)).body.items).toEqual([]);
  });

  it("refuses conditions on variables a channel does not have and actions that are a monitor's", async () => {
    const res = await call("/Channels", {
      method: "POST",
      body: {
        name: "PT-1",
        assetId: (await createChannel()).assetId,
        channelTypeId: BUILT_IN.pressure,
        controllers: [
          {
            name: "c",
            conditions: [
              { variableName: "vibration", operator: "GreaterThen", comparisonValue: 1 },
              { variableName: "remainingLifeYears", operator: "LessThan", comparisonValue: 1 },
            ],
            actions: { setCriticality: { value: 50 } },
          },
        ],
      },
    });
    expect(res.status).toBe(400);
    const problems = (res.body.errors as { field: string; rule: string }[]).map((e) => `${e.field} ${e.rule}`);
    expect(problems).toEqual([
      "body.controllers.0.conditions.0.variableName channelVariable",
      "body.controllers.0.conditions.1.variableName channelVariable",
      "body.controllers.0.actions.setCriticality monitorOnly",
    ]);
  });

  it("deleting a channel removes its alarms", async () => {
    const ch = await createChannel({
      channelTypeId: BUILT_IN.pressure,
      controllers: [{ name: "Any", conditions: [{ variableName: "value", operator: "GreaterThen", comparisonValue: 0 }] }],
    });
    await post(ch.channelNumber, [["2026-02-01T00:00:00Z", 1]]);
    const [alarm] = await alarmsOf(ch.id);
    expect(alarm).toBeDefined();
    const current = await call(`/Channels/${ch.id}`);
    const del = await call(`/Channels/${ch.id}`, { method: "DELETE", headers: { "if-match": current.headers.get("etag")! } });
    expect(del.status, del.text).toBe(204);
    expect((await call(`/Alarms/${alarm!.id}`)).status).toBe(404);
  });
});
