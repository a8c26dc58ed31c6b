/**
 * The loop's last step (issue 25): a subscriber hears an alarm entered (and the deviation it raised)
 * and the alarm left, each once, signed; the same values again send nothing new.
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { run, vibration, watchedEquipment } from "../monitors/alarm-support";
import { eventually, received, receiver, subscribe } from "./support";

const high = {
  name: "High vibration",
  conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7 }],
  actions: { raiseDeviation: { status: "active" } },
};

type Hook = { type: string; data: { entityKind: string; entityId: string; entity: Record<string, unknown> } };

describe("alarm webhooks", () => {
  it("a monitor's alarm entered, its deviation and the alarm left reach the subscriber once each", async () => {
    const target = receiver();
    const sub = await subscribe({ url: target.url, filters: [{ entityKind: "alarm" }, { entityKind: "deviation", action: "created" }] });
    const { monitor, assets } = await watchedEquipment([high], 1);
    const pump = assets[0]!;
    const verified = async (count: number) =>
      eventually(async () => {
        const got = await received(target.path);
        expect(got).toHaveLength(count);
        return got.map((h) => new Webhook(sub.secret).verify(h.body, h.headers) as Hook);
      });

    await run(monitor.id, vibration({ [pump.id]: 9.3 }));
    const entered = await verified(2);
    expect(entered.map((h) => h.type).sort()).toEqual(["alarm.entered", "deviation.created"]);
    const alarm = entered.find((h) => h.type === "alarm.entered")!;
    expect(alarm.data.entity).toMatchObject({
      state: "alarm",
      controller: "High vibration",
      monitor: { id: monitor.id },
      asset: { id: pump.id },
    });
    expect(alarm.data.entity.deviationId).toBe(entered.find((h) => h.type === "deviation.created")!.data.entityId);

    // The same values again: no second alarm, so nothing more is sent.
    await run(monitor.id, vibration({ [pump.id]: 9.4 }));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await received(target.path)).toHaveLength(2);

    await run(monitor.id, vibration({ [pump.id]: 3.1 }));
    const all = await verified(3);
    expect(all[2]).toMatchObject({ type: "alarm.left", data: { entityId: alarm.data.entityId, entity: { state: "normal" } } });
  });
});
