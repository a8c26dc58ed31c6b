/**
 * Shelving and escalation (issue 33), over HTTP with the clock driven through the platform's Clock seam
 * and the minute cron fired through the Worker's scheduled handler (./alarm-clock.ts): bounds of a
 * shelving, its expiry by the clock and not by the next evaluation, one-shot shelving ending with the
 * alarm, alarms entered again while shelved held and released, escalations at their delay and interval
 * until acknowledged or cleared, held while shelved, and evaluations racing a shelving.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { advance, iso, MINUTE, tick, useAlarmClock } from "./alarm-clock";
import { alarmsOf, count, outbox, pumpInAlarm, type Alarm } from "./alarm-support";

useAlarmClock();

const alarmEvents = async (alarmId: string) => (await outbox("alarm", "entity_id = ?2", alarmId)).map((e) => e.action);
const read = async (id: string) => {
  const res = await call<Alarm>(`/Alarms/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const post = (id: string, action: string, body?: unknown) =>
  call(`/Alarms/${id}/${action}`, { method: "POST", ...(body === undefined ? {} : { body }) });
const history = (alarm: Alarm) => alarm.history!.map((e) => e.action);

describe("shelving", () => {
  it("is refused beyond the monitor's maximum or until a time past, naming the field, changing nothing", async () => {
    const { alarm } = await pumpInAlarm({}, 9.4, { maxShelveMinutes: 60 });
    const before = await call(`/Alarms/${alarm.id}`);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ until: iso(-MINUTE) }, "body.until", "future"],
      [{ until: iso(61 * MINUTE) }, "body.until", "maxShelveDuration"],
      [{ durationMinutes: 61 }, "body.durationMinutes", "maxShelveDuration"],
      [{ until: iso(10 * MINUTE), durationMinutes: 10 }, "body.durationMinutes", "conflict"],
      [{}, "body.until", "required"],
      [{ until: "tomorrow" }, "body.until", "invalid_format"],
      [{ durationMinutes: 0 }, "body.durationMinutes", "too_small"],
    ];
    for (const [body, field, rule] of cases) {
      const res = await post(alarm.id, "Shelving", body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field, rule })]);
    }
    const after = await call(`/Alarms/${alarm.id}`);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    expect(await alarmEvents(alarm.id)).toEqual(["entered"]);
    // Exactly the maximum is fine.
    const ok = await post(alarm.id, "Shelving", { durationMinutes: 60, comment: "sensor being replaced" });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.shelving).toMatchObject({ mode: "timed", until: iso(60 * MINUTE), comment: "sensor being replaced" });
    const monitor = await call("/Monitors", { method: "POST", body: { name: "x", modelId: crypto.randomUUID(), maxShelveMinutes: 0 } });
    expect(monitor.status).toBe(400);
    expect(monitor.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: "body.maxShelveMinutes" })]));
  });

  it("ends by the clock (the minute cron), not by the next evaluation", async () => {
    const { alarm, reading, monitor } = await pumpInAlarm({});
    const shelved = await post(alarm.id, "Shelving", { durationMinutes: 30, comment: "known issue" });
    expect(shelved.status, shelved.text).toBe(200);
    expect(shelved.body).toMatchObject({ shelving: { mode: "timed", until: iso(30 * MINUTE) }, status: "activeUnacknowledged" });
    expect((await alarmsOf(monitor.id, "shelved=true")).items.map((a) => a.id)).toEqual([alarm.id]);

    // Past its time, before the cron: an evaluation leaves the shelving alone (and, values still high, the alarm too).
    advance(31 * MINUTE);
    await reading(9.9);
    expect((await read(alarm.id)).shelving).not.toBeNull();
    expect(await count("SELECT id FROM monitor_alarms WHERE monitor_ref = ?1", monitor.id)).toBe(1);

    await tick();
    const after = await read(alarm.id);
    expect(after.shelving).toBeNull();
    expect(after.history!.at(-1)).toMatchObject({ action: "unshelved", by: null, comment: expect.stringContaining("expired") });
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved", "unshelved"]);
    const [unshelved] = await outbox("alarm", "entity_id = ?2 AND action = 'unshelved'", alarm.id);
    expect(unshelved!.payload).toMatchObject({ shelving: null, by: null, severity: "medium" });
    // A second tick finds nothing more.
    advance(MINUTE);
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved", "unshelved"]);
  });

  it("one-shot: ends when the alarm clears; the alarm entered again is not shelved", async () => {
    const { alarm, reading, monitor } = await pumpInAlarm({});
    const shelved = await post(alarm.id, "Shelving", { oneShot: true });
    expect(shelved.status, shelved.text).toBe(200);
    // Bounded by the monitor's maximum (480 minutes by default).
    expect(shelved.body.shelving).toMatchObject({ mode: "oneShot", until: iso(480 * MINUTE) });
    await reading(2.0);
    const cleared = await read(alarm.id);
    expect(cleared).toMatchObject({ status: "clearedUnacknowledged", shelving: null });
    expect(history(cleared)).toEqual(["entered", "shelved", "unshelved", "left"]);
    expect(cleared.history![2]).toMatchObject({ by: null, comment: expect.stringContaining("cleared") });
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved", "left"]);
    // One-shot on a cleared alarm: 409.
    const late = await post(alarm.id, "Shelving", { oneShot: true });
    expect(late.status, late.text).toBe(409);
    await reading(9.0);
    const again = (await alarmsOf(monitor.id, "active=true")).items[0]!;
    expect(again.id).not.toBe(alarm.id);
    expect(again).toMatchObject({ held: false, shelving: null });
    expect(await alarmEvents(again.id)).toEqual(["entered"]);
  });
});

describe("an alarm entered again while its controller and item are shelved", () => {
  const raising = { actions: { raiseDeviation: { status: "active" } } };

  it("is held (no deviation, no events) and released when the shelving expires while it is active", async () => {
    const { alarm, reading, monitor } = await pumpInAlarm(raising);
    expect((await post(alarm.id, "Shelving", { durationMinutes: 60, comment: "chattering" })).status).toBe(200);
    await reading(2.0); // cleared: the timed shelving stays
    expect(await read(alarm.id)).toMatchObject({ status: "clearedUnacknowledged", shelving: { mode: "timed" } });
    const deviations = () => count("SELECT id FROM deviations WHERE origin_monitor_ref = ?1", monitor.id);
    expect(await deviations()).toBe(1);

    // It chatters: in, out, in, all held.
    await reading(9.5);
    const first = (await alarmsOf(monitor.id, "active=true")).items[0]!;
    expect(first).toMatchObject({
      held: true,
      deviationId: null,
      shelving: { mode: "timed", until: alarm.shelving?.until ?? expect.any(String) },
    });
    expect(await alarmEvents(first.id)).toEqual([]);
    await reading(2.0);
    expect(await alarmEvents(first.id)).toEqual([]);
    await reading(9.6);
    const second = (await alarmsOf(monitor.id, "active=true")).items[0]!;
    expect(second.held).toBe(true);
    expect(await deviations()).toBe(1);
    expect((await alarmsOf(monitor.id, "shelved=true")).counts).toMatchObject({ total: 3, shelved: 3 });

    advance(61 * MINUTE);
    await tick();
    // The active one is released: its deviation raised now, its entered event written, its history says so.
    const released = await read(second.id);
    expect(released).toMatchObject({ held: false, shelving: null, active: true });
    expect(released.deviationId).toEqual(expect.any(String));
    expect(history(released)).toEqual(["entered", "unshelved", "released"]);
    expect(await alarmEvents(second.id)).toEqual(["unshelved", "entered"]);
    const [entered] = await outbox("alarm", "entity_id = ?2 AND action = 'entered'", second.id);
    expect(entered!.payload).toMatchObject({ state: "alarm", released: true, deviationId: released.deviationId });
    expect(await deviations()).toBe(2);
    // The held one that cleared is unshelved in its history only (nobody was told of it); the first, announced, says so.
    expect(history(await read(first.id))).toEqual(["entered", "left", "unshelved"]);
    expect(await alarmEvents(first.id)).toEqual([]);
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved", "left", "unshelved"]);
  });

  it("is released when a person unshelves any alarm of the controller and item", async () => {
    const { alarm, reading, monitor } = await pumpInAlarm(raising);
    expect((await post(alarm.id, "Shelving", { durationMinutes: 60 })).status).toBe(200);
    await reading(2.0);
    await reading(9.5);
    const held = (await alarmsOf(monitor.id, "active=true")).items[0]!;
    expect(held.held).toBe(true);
    const unshelved = await post(alarm.id, "Unshelving", { comment: "fixed the sensor" });
    expect(unshelved.status, unshelved.text).toBe(200);
    expect(unshelved.body.shelving).toBeNull();
    const released = await read(held.id);
    expect(released).toMatchObject({ held: false, shelving: null });
    expect(released.deviationId).toEqual(expect.any(String));
    expect(released.history!.map((e) => [e.action, e.by?.id ?? null])).toEqual([
      ["entered", null],
      ["unshelved", "00000000-0000-4000-8000-00000000aaaa"],
      ["released", "00000000-0000-4000-8000-00000000aaaa"],
    ]);
    expect(await alarmEvents(held.id)).toEqual(["unshelved", "entered"]);
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved", "left", "unshelved"]);
    // Unshelving what is not shelved changes nothing.
    const again = await post(alarm.id, "Unshelving");
    expect(again.status).toBe(200);
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved", "left", "unshelved"]);
  });

  it("a timed shelving of a cleared alarm that a newer one follows is refused (409): shelve the newer one", async () => {
    const { alarm, reading, monitor } = await pumpInAlarm({});
    const cleared = await reading(2.0);
    expect(cleared.done.status, cleared.done.text).toBe(200);
    const again = await reading(9.0);
    expect(again.done.status, again.done.text).toBe(200);
    expect((await alarmsOf(monitor.id, "active=true")).items, "entered again").toHaveLength(1);
    const res = await post(alarm.id, "Shelving", { durationMinutes: 10 });
    expect(res.status, res.text).toBe(409);
    const newer = (await alarmsOf(monitor.id, "active=true")).items[0]!;
    expect(res.body.detail).toContain(newer.id);
  });
});

describe("escalation", () => {
  const escalating = { escalation: { afterMinutes: 15, repeatMinutes: 30 }, severity: "critical" };

  it("emits escalated after the delay, again at the interval, until the alarm is acknowledged", async () => {
    const entered = iso();
    const { alarm } = await pumpInAlarm(escalating);
    expect(alarm.escalation).toEqual({ count: 0, nextAt: iso(15 * MINUTE) });
    advance(14 * MINUTE);
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered"]);
    advance(MINUTE);
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "escalated"]);
    const first = await read(alarm.id);
    expect(first.escalation).toEqual({ count: 1, nextAt: new Date(Date.parse(entered) + 45 * MINUTE).toISOString() });
    const [event] = await outbox("alarm", "entity_id = ?2 AND action = 'escalated'", alarm.id);
    expect(event!.payload).toMatchObject({ escalation: 1, severity: "critical", status: "activeUnacknowledged", by: null });
    advance(15 * MINUTE);
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "escalated"]);
    advance(16 * MINUTE);
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "escalated", "escalated"]);
    expect((await read(alarm.id)).escalation.count).toBe(2);

    const acked = await post(alarm.id, "Acknowledgement", { comment: "paged, on my way" });
    expect(acked.body.escalation).toEqual({ count: 2, nextAt: null });
    advance(60 * MINUTE);
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "escalated", "escalated", "acknowledged"]);
    expect(history(await read(alarm.id))).toEqual(["entered", "escalated", "escalated", "acknowledged"]);
  });

  it("stops when the alarm clears; after a pause of the service, one escalation, not one per missed interval", async () => {
    const { alarm, reading } = await pumpInAlarm({ escalation: { afterMinutes: 5 } });
    advance(5 * MINUTE);
    await tick();
    advance(3 * 60 * MINUTE); // three hours without a tick: 36 intervals missed
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "escalated", "escalated"]);
    expect((await read(alarm.id)).escalation).toEqual({ count: 2, nextAt: iso(5 * MINUTE) });
    await reading(1.0);
    expect((await read(alarm.id)).escalation.nextAt).toBeNull();
    advance(10 * MINUTE);
    await tick();
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "escalated", "escalated", "left"]);
  });

  it("is held while the alarm is shelved, and resumes when the shelving expires", async () => {
    const { alarm } = await pumpInAlarm({ escalation: { afterMinutes: 5, repeatMinutes: 60 } });
    advance(MINUTE);
    expect((await post(alarm.id, "Shelving", { durationMinutes: 20 })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      advance(6 * MINUTE);
      await tick();
    }
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved"]);
    advance(3 * MINUTE);
    await tick(); // 22 minutes in: the shelving expired at 21, and the overdue escalation follows in the same minute
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved", "unshelved", "escalated"]);
  });
});

describe("an evaluation racing a shelving", () => {
  it("a one-shot shelving and the alarm clearing at once: whichever comes first, the alarm ends cleared and unshelved", async () => {
    const { alarm, reading } = await pumpInAlarm({});
    const [shelved, cleared] = await Promise.all([post(alarm.id, "Shelving", { oneShot: true }), reading(2.0)]);
    expect(cleared.done.status, cleared.done.text).toBe(200);
    const after = await read(alarm.id);
    expect(after).toMatchObject({ status: "clearedUnacknowledged", shelving: null });
    if (shelved.status === 200) {
      expect(history(after)).toEqual(["entered", "shelved", "unshelved", "left"]);
    } else {
      // The alarm had cleared first: a one-shot shelving has nothing to last for.
      expect(shelved.status, shelved.text).toBe(409);
      expect(history(after)).toEqual(["entered", "left"]);
    }
  });

  it("values still holding while shelved change nothing: no second alarm, no deviation, no event", async () => {
    const { alarm, reading, monitor } = await pumpInAlarm({ actions: { raiseDeviation: {} } });
    expect((await post(alarm.id, "Shelving", { durationMinutes: 30 })).status).toBe(200);
    const [a, b] = await Promise.all([reading(9.8), reading(9.9)]);
    expect([a.done.status, b.done.status]).toEqual([200, 200]);
    expect(await count("SELECT id FROM monitor_alarms WHERE monitor_ref = ?1", monitor.id)).toBe(1);
    expect(await count("SELECT id FROM deviations WHERE origin_monitor_ref = ?1", monitor.id)).toBe(1);
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "shelved"]);
  });
});
