/**
 * Chattering (issue 33): a controller's `pendingFor` (consecutive evaluations holding before the alarm
 * is entered), `clearAfter` (not holding before it is left) and a condition's `deadband`, over HTTP
 * with an External model's status PUT; an evaluation run again for the same job counts once.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { evaluateControllers } from "../../src/monitors/alarms/evaluation";
import { call } from "../support/http";
import { alarmsOf, count, HIGH, outbox, vibration, watchedEquipment, run, type Alarm } from "./alarm-support";

async function pump(controller: Record<string, unknown>) {
  const watched = await watchedEquipment([{ name: "High vibration", conditions: HIGH, ...controller }], 1);
  const asset = watched.assets[0]!;
  const reading = async (value: number) => {
    const done = await run(watched.monitor.id, vibration({ [asset.id]: value }));
    expect(done.done.status, done.done.text).toBe(200);
    return done.job;
  };
  const alarms = async () => (await alarmsOf(watched.monitor.id)).items;
  const active = async () => (await alarmsOf(watched.monitor.id, "active=true")).items;
  return { ...watched, asset, reading, alarms, active };
}

describe("pendingFor", () => {
  it("enters the alarm only after N consecutive evaluations holding; a normal one starts the count again", async () => {
    const p = await pump({ pendingFor: 3, actions: { raiseDeviation: {} } });
    await p.reading(9.0);
    await p.reading(9.1);
    expect(await p.alarms()).toEqual([]);
    await p.reading(2.0); // the streak breaks
    await p.reading(9.2);
    await p.reading(9.3);
    expect(await p.alarms()).toEqual([]);
    const third = await p.reading(9.4);
    const [alarm] = await p.alarms();
    expect(alarm).toMatchObject({ active: true, enteredMonitorJobId: third.id, conditions: [{ value: 9.4, holds: true }] });
    expect(await count("SELECT id FROM deviations WHERE origin_monitor_ref = ?1", p.monitor.id)).toBe(1);
    // While it holds, nothing again; and no streak rows are left behind.
    await p.reading(9.5);
    expect(await p.alarms()).toHaveLength(1);
    expect(await count("SELECT key FROM monitor_alarm_streaks WHERE monitor_ref = ?1", p.monitor.id)).toBe(0);
  });

  it("an evaluation run again for the same job counts it once", async () => {
    const p = await pump({ pendingFor: 2 });
    const job = await p.reading(9.0);
    const row = (await env.DB.prepare("SELECT id, monitor_ref, created_at, trigger_depth FROM monitor_jobs WHERE id = ?1")
      .bind(job.id)
      .first<{ id: string; monitor_ref: string; created_at: string; trigger_depth: number }>())!;
    const events = { actorId: null, requestId: null, now: new Date().toISOString(), uuid: () => crypto.randomUUID() };
    const variables = vibration({ [p.asset.id]: 9.0 }).variables;
    await evaluateControllers(env, row, variables, events);
    await Promise.all([evaluateControllers(env, row, variables, events), evaluateControllers(env, row, variables, events)]);
    expect(await p.alarms()).toEqual([]);
    await p.reading(9.0);
    expect(await p.alarms()).toHaveLength(1);
  });
});

describe("clearAfter", () => {
  it("leaves the alarm only after N consecutive evaluations not holding", async () => {
    const p = await pump({ clearAfter: 2, actions: { raiseDeviation: {} }, onLeave: { deviationStatus: "closed" } });
    await p.reading(9.0);
    const [alarm] = await p.active();
    await p.reading(2.0);
    expect((await p.active()).map((a) => a.id)).toEqual([alarm!.id]);
    await p.reading(9.0); // holding again: the count starts over
    await p.reading(2.0);
    expect((await p.active()).map((a) => a.id)).toEqual([alarm!.id]);
    const last = await p.reading(1.5);
    expect(await p.active()).toEqual([]);
    const left = (await call<Alarm>(`/Alarms/${alarm!.id}`)).body;
    expect(left).toMatchObject({ leftMonitorJobId: last.id, status: "clearedUnacknowledged" });
    expect((await call(`/Deviations/${alarm!.deviationId}`)).body.status).toBe("closed");
    expect((await outbox("alarm", "entity_id = ?2", alarm!.id)).map((e) => e.action)).toEqual(["entered", "left"]);
  });
});

describe("a deadband on the limit", () => {
  it("keeps an active alarm while the value is within the deadband of the limit, and leaves it past it", async () => {
    const p = await pump({ conditions: [{ ...HIGH[0], deadband: 0.5 }] });
    await p.reading(7.0); // below the limit: no alarm (the deadband does not widen the entry)
    expect(await p.alarms()).toEqual([]);
    await p.reading(7.2);
    const [alarm] = await p.active();
    expect(alarm!.conditions).toEqual([
      { variableName: "vibration", operator: "GreaterThen", comparisonValue: 7.1, deadband: 0.5, value: 7.2, holds: true },
    ]);
    await p.reading(6.9);
    await p.reading(6.7);
    expect((await p.active()).map((a) => a.id)).toEqual([alarm!.id]);
    await p.reading(6.6); // 7.1 - 0.5: no longer past the limit
    expect(await p.active()).toEqual([]);
    const history = await call(`/Monitors/${p.monitor.id}/PopulationItems/${p.itemOf(p.asset.id)}/Alarms`);
    expect(history.body[0]).toMatchObject({ action: "left", conditions: [{ value: 6.6, deadband: 0.5, holds: false }] });
  });

  it("works below a limit too (LessThan), and a controller reads back exactly as sent", async () => {
    const controller = {
      name: "Low pressure",
      conditions: [{ variableName: "pressure", operator: "LessThan", comparisonValue: 2, deadband: 0.25 }],
      severity: "critical",
      pendingFor: 1,
      clearAfter: 1,
      escalation: { afterMinutes: 10 },
    };
    const watched = await watchedEquipment([controller], 1);
    expect((await call(`/Monitors/${watched.monitor.id}`)).body.controllers).toEqual([controller]);
    const asset = watched.assets[0]!.id;
    const reading = (value: number) => run(watched.monitor.id, { variables: [{ assetId: asset, name: "pressure", value }] });
    await reading(1.9);
    const [alarm] = (await alarmsOf(watched.monitor.id, "active=true")).items;
    expect(alarm).toMatchObject({ severity: "critical" });
    await reading(2.2);
    expect((await alarmsOf(watched.monitor.id, "active=true")).items).toHaveLength(1);
    await reading(2.3);
    expect((await alarmsOf(watched.monitor.id, "active=true")).items).toEqual([]);
  });

  it("refuses a negative deadband and chattering counts out of range, naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ conditions: [{ ...HIGH[0], deadband: -1 }] }, "body.controllers.0.conditions.0.deadband"],
      [{ pendingFor: 0 }, "body.controllers.0.pendingFor"],
      [{ clearAfter: 101 }, "body.controllers.0.clearAfter"],
      [{ severity: "urgent" }, "body.controllers.0.severity"],
      [{ escalation: { afterMinutes: 0 } }, "body.controllers.0.escalation.afterMinutes"],
    ];
    const { monitor } = await watchedEquipment([], 1);
    const current = await call(`/Monitors/${monitor.id}`);
    for (const [extra, field] of cases) {
      const res = await call("/Monitors", {
        method: "PUT",
        headers: { "if-match": current.headers.get("etag")! },
        body: { ...current.body, controllers: [{ name: "c", conditions: HIGH, ...extra }] },
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });
});
