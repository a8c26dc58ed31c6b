/**
 * The monitoring loop (issue 25): controllers evaluated on a model's variables, alarms entered and
 * left, and the actions of an entered alarm (deviation with its origin, work item from a template
 * linked to it, criticality), over HTTP with an External model's status PUT.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { count, outbox, run, vibration, watchedEquipment, workTemplate } from "./alarm-support";

const high = (extra: Record<string, unknown> = {}) => ({
  name: "High vibration",
  conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7.1 }],
  ...extra,
});

describe("controllers are evaluated", () => {
  it(
    "enters an alarm where a controller holds, raises a deviation, creates a linked work item and sets criticality; " +
      "the same values again change nothing; normal values leave it",
    async () => {
      const template = await workTemplate();
      const { monitor, assets, itemOf } = await watchedEquipment([
        high({
          actions: { raiseDeviation: { status: "active" }, createWorkItem: { workTemplateId: template.id }, setCriticality: { value: 90 } },
          onLeave: { deviationStatus: "closed" },
        }),
      ]);
      const [pump, quiet] = assets as [{ id: string; name: string }, { id: string; name: string }];

      const first = await run(monitor.id, vibration({ [pump.id]: 9.4, [quiet.id]: 3.2 }));
      expect(first.done.status, first.done.text).toBe(200);
      expect(first.done.body.status).toBe("Succeeded");
      expect(first.done.body.errorMessage).toBeNull();

      // The item shows its alarm; the other stays normal.
      const read = (await call(`/Monitors/${monitor.id}`)).body;
      const items = read.populations[0].items as {
        id: string;
        assetReference: { id: string };
        criticality: number | null;
        alarms: { id: string; controller: string; monitorJobId: string; deviationId: string; workItemId: string }[];
      }[];
      const item = items.find((i) => i.assetReference.id === pump.id)!;
      expect(items.find((i) => i.assetReference.id === quiet.id)!.alarms).toEqual([]);
      expect(item.alarms).toHaveLength(1);
      const alarm = item.alarms[0]!;
      expect(alarm).toMatchObject({
        controller: "High vibration",
        monitorJobId: first.job.id,
        deviationId: expect.any(String),
        workItemId: expect.any(String),
      });
      expect(item.criticality).toBe(90);

      // The deviation: on the asset, with its origin, a description naming monitor, controller, condition and value, and the work
      // item linked.
      const deviation = (await call(`/Deviations/${alarm.deviationId}`)).body;
      expect(deviation.status).toBe("active");
      expect(deviation.assetReference.equipment.id).toBe(pump.id);
      expect(deviation.origin).toEqual({
        kind: "monitoring",
        monitor: { id: monitor.id, monitorId: monitor.monitorId, name: monitor.name },
        channel: null,
        controller: "High vibration",
        monitorJobId: first.job.id,
        readingsBatchId: null,
        alarmId: alarm.id,
      });
      for (const part of [monitor.monitorId, "High vibration", "vibration GreaterThen 7.1", "9.4 seen", first.job.id])
        expect(deviation.description).toContain(part);
      expect(deviation.workItemIds).toEqual([alarm.workItemId]);
      const workItem = (await call(`/WorkItems/${alarm.workItemId}`)).body;
      expect(workItem.basedOn).toEqual([{ id: template.id, revision: 1 }]);
      expect(workItem.deviationIds).toEqual([alarm.deviationId]);
      expect(workItem.designations.map((d: { id: string }) => d.id)).toEqual([pump.id]);
      expect(workItem.displayName).toContain("High vibration");
      const activities = (await call(`/Activities?workItemIds=${alarm.workItemId}`)).body;
      expect(Array.isArray(activities) ? activities.length : 0).toBe(1);
      // A deviation made through the API is an inspection's.
      const own = await call("/Deviations", { method: "POST", body: { description: "found on a walk-round" } });
      expect(own.body.origin).toEqual({
        kind: "inspection",
        monitor: null,
        channel: null,
        controller: null,
        monitorJobId: null,
        readingsBatchId: null,
        alarmId: null,
      });

      // The entry in the item's history and the outbox event, in the batch that entered it.
      const history = await call(`/Monitors/${monitor.id}/PopulationItems/${itemOf(pump.id)}/Alarms`);
      expect(history.status, history.text).toBe(200);
      expect(history.body).toEqual([
        {
          id: expect.any(String),
          alarmId: alarm.id,
          controller: "High vibration",
          action: "entered",
          monitorJobId: first.job.id,
          conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7.1, value: 9.4, holds: true }],
          recordedAt: expect.any(String),
          deviationId: alarm.deviationId,
          workItemId: alarm.workItemId,
        },
      ]);
      const entered = await outbox("alarm", "entity_id = ?2", alarm.id);
      expect(entered.map((e) => e.action)).toEqual(["entered"]);
      expect(entered[0]!.payload).toMatchObject({
        id: alarm.id,
        state: "alarm",
        monitor: { id: monitor.id, monitorId: monitor.monitorId },
        controller: "High vibration",
        asset: { id: pump.id, type: "Equipment" },
        monitorJobId: first.job.id,
        deviationId: alarm.deviationId,
        workItemId: alarm.workItemId,
      });

      // The same values again: no second alarm, deviation or work item.
      const deviations = () => count("SELECT id FROM deviations WHERE origin_monitor_ref = ?1", monitor.id);
      const workItems = () =>
        count(
          "SELECT w.id FROM work_items w JOIN work_item_templates t ON t.work_item_id = w.id WHERE t.work_template_id = ?1",
          template.id,
        );
      const second = await run(monitor.id, vibration({ [pump.id]: 9.9, [quiet.id]: 3.0 }));
      expect(second.done.status, second.done.text).toBe(200);
      expect(await deviations()).toBe(1);
      expect(await workItems()).toBe(1);
      expect(await count("SELECT id FROM monitor_alarms WHERE monitor_ref = ?1", monitor.id)).toBe(1);
      expect((await outbox("alarm", "entity_id = ?2", alarm.id)).map((e) => e.action)).toEqual(["entered"]);

      // Normal values: the alarm is left, recorded with the job and values, and the deviation takes the onLeave status.
      const third = await run(monitor.id, vibration({ [pump.id]: 2.5, [quiet.id]: 2.0 }));
      expect(third.done.status, third.done.text).toBe(200);
      const after = (await call(`/Monitors/${monitor.id}`)).body.populations[0].items.find(
        (i: { assetReference: { id: string } }) => i.assetReference.id === pump.id,
      );
      expect(after.alarms).toEqual([]);
      const left = (await call(`/Monitors/${monitor.id}/PopulationItems/${itemOf(pump.id)}/Alarms`)).body;
      expect(left.map((e: { action: string }) => e.action)).toEqual(["left", "entered"]);
      expect(left[0]).toMatchObject({
        alarmId: alarm.id,
        monitorJobId: third.job.id,
        conditions: [{ variableName: "vibration", value: 2.5, holds: false }],
      });
      expect((await outbox("alarm", "entity_id = ?2", alarm.id)).map((e) => [e.action, e.payload.state])).toEqual([
        ["entered", "alarm"],
        ["left", "normal"],
      ]);
      const closed = (await call(`/Deviations/${alarm.deviationId}`)).body;
      expect(closed.status).toBe("closed");
      const updates = await outbox("deviation", "entity_id = ?2 AND action = 'updated'", alarm.deviationId);
      expect(updates).toHaveLength(1);
      expect(updates[0]!.payload).toMatchObject({ id: alarm.deviationId, status: "closed" });
      expect(await deviations()).toBe(1);

      // Over the limit again: a new alarm (a new episode) with a new deviation.
      await run(monitor.id, vibration({ [pump.id]: 8.0, [quiet.id]: 2.0 }));
      expect(await deviations()).toBe(2);
      expect(await count("SELECT id FROM monitor_alarms WHERE monitor_ref = ?1", monitor.id)).toBe(2);
    },
  );
});
