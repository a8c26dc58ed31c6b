/**
 * Working an alarm (issue 33), over HTTP: acknowledgement separate from the alarm's state, assignment
 * to a user of the directory, the comment thread, the events every action writes, races between people
 * and the loop, permissions and bad input (nothing changed), and a person's decision winning over onLeave.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { settledCall, newPerson } from "../users/support";
import { count, outbox, pumpInAlarm, type Alarm } from "./alarm-support";

const alarmEvents = async (alarmId: string) => (await outbox("alarm", "entity_id = ?2", alarmId)).map((e) => e.action);
const history = (alarm: Alarm) => alarm.history!.map((e) => e.action);
const read = async (id: string) => {
  const res = await call<Alarm>(`/Alarms/${id}`);
  expect(res.status, res.text).toBe(200);
  return { alarm: res.body, etag: res.headers.get("etag")! };
};
const post = (
  id: string,
  action: string,
  body?: unknown,
  options: { user?: Record<string, unknown>; headers?: Record<string, string> } = {},
) => call(`/Alarms/${id}/${action}`, { method: "POST", ...(body === undefined ? {} : { body }), ...options });

describe("acknowledgement is separate from the alarm's state", () => {
  it("an active alarm acknowledged stays active; acknowledging it again changes nothing", async () => {
    const { alarm, monitor } = await pumpInAlarm({ severity: "high" });
    const before = await read(alarm.id);
    expect(before.alarm).toMatchObject({
      status: "activeUnacknowledged",
      active: true,
      acknowledged: false,
      severity: "high",
      controller: "High vibration",
      monitor: { id: monitor.id, monitorId: monitor.monitorId },
      acknowledgement: null,
      escalation: { count: 0, nextAt: null },
    });
    expect(history(before.alarm)).toEqual(["entered"]);

    const acked = await post(
      alarm.id,
      "Acknowledgement",
      { comment: "On it: pump P-101" },
      { user: { id: "op-1", name: "Olga Operator" } },
    );
    expect(acked.status, acked.text).toBe(200);
    expect(acked.body).toMatchObject({
      status: "activeAcknowledged",
      active: true,
      acknowledged: true,
      acknowledgement: { by: { id: "op-1", name: "Olga Operator" }, comment: "On it: pump P-101" },
    });
    const etag = acked.headers.get("etag");
    expect(etag).not.toBe(before.etag);
    expect(acked.body.history!.at(-1)).toMatchObject({
      action: "acknowledged",
      by: { id: "op-1", name: "Olga Operator" },
      comment: "On it: pump P-101",
    });
    const events = await outbox("alarm", "entity_id = ?2 AND action = 'acknowledged'", alarm.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({
      id: alarm.id,
      status: "activeAcknowledged",
      severity: "high",
      by: { id: "op-1", name: "Olga Operator" },
      comment: "On it: pump P-101",
    });

    // Twice: harmless, even from another person with the old version.
    const again = await post(alarm.id, "Acknowledgement", undefined, { user: { id: "op-2" }, headers: { "if-match": before.etag } });
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.body.acknowledgement!.by!.id).toBe("op-1");
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "acknowledged"]);
  });

  it("an alarm that cleared unacknowledged stays on the board until someone acknowledges it", async () => {
    const { alarm, monitor, reading } = await pumpInAlarm({});
    await reading(2.0);
    const board = "statuses=activeUnacknowledged,activeAcknowledged,clearedUnacknowledged";
    const onBoard = await call(`/Alarms?monitorIds=${monitor.id}&${board}`);
    expect(onBoard.body.items.map((a: Alarm) => [a.id, a.status])).toEqual([[alarm.id, "clearedUnacknowledged"]]);
    const acked = await post(alarm.id, "Acknowledgement");
    expect(acked.status, acked.text).toBe(200);
    expect(acked.body).toMatchObject({ status: "clearedAcknowledged", active: false, acknowledged: true });
    expect(history(acked.body)).toEqual(["entered", "left", "acknowledged"]);
    expect((await call(`/Alarms?monitorIds=${monitor.id}&${board}`)).body.items).toEqual([]);
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "left", "acknowledged"]);
  });

  it("two people acknowledging at once: one acknowledgement, one event, both answered 200", async () => {
    const { alarm } = await pumpInAlarm({});
    const answers = await Promise.all(
      ["op-a", "op-b", "op-c"].map((id) => post(alarm.id, "Acknowledgement", { comment: `by ${id}` }, { user: { id, name: id } })),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    const { alarm: after } = await read(alarm.id);
    const by = after.acknowledgement!.by!.id;
    expect(["op-a", "op-b", "op-c"]).toContain(by);
    expect(after.acknowledgement!.comment).toBe(`by ${by}`);
    expect(history(after)).toEqual(["entered", "acknowledged"]);
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "acknowledged"]);
    // Every answer shows the one acknowledgement.
    for (const answer of answers) expect(answer.body.acknowledgement!.by!.id).toBe(by);
  });

  it("an alarm clearing while it is acknowledged: both happen, cleared and acknowledged", async () => {
    const { alarm, reading } = await pumpInAlarm({});
    const [acked, left] = await Promise.all([post(alarm.id, "Acknowledgement"), reading(1.0)]);
    expect(acked.status, acked.text).toBe(200);
    expect(left.done.status, left.done.text).toBe(200);
    const { alarm: after } = await read(alarm.id);
    expect(after).toMatchObject({ status: "clearedAcknowledged", active: false, acknowledged: true });
    expect(history(after).sort()).toEqual(["acknowledged", "entered", "left"]);
    expect((await alarmEvents(alarm.id)).sort()).toEqual(["acknowledged", "entered", "left"]);
  });

  it("If-Match: a stale version is a 412 and changes nothing; the current one is applied", async () => {
    const { alarm } = await pumpInAlarm({});
    const { etag } = await read(alarm.id);
    expect((await post(alarm.id, "Comments", { text: "first" })).status).toBe(200);
    const stale = await post(alarm.id, "Comments", { text: "second" }, { headers: { "if-match": etag } });
    expect(stale.status, stale.text).toBe(412);
    expect(stale.body).toMatchObject({ code: "PreconditionFailed" });
    const current = await read(alarm.id);
    expect(history(current.alarm)).toEqual(["entered", "commented"]);
    const applied = await post(alarm.id, "Acknowledgement", {}, { headers: { "if-match": current.etag } });
    expect(applied.status, applied.text).toBe(200);
  });
});

describe("assignment to a user of the directory", () => {
  it("assigns, reassigns and unassigns, each recorded and announced; unknown users are refused", async () => {
    const { alarm } = await pumpInAlarm({});
    const ada = newPerson("Ada Inspector");
    const bo = newPerson("Bo Technician");
    for (const person of [ada, bo]) expect((await settledCall("/Categories", { user: person })).status).toBe(200);

    const unknown = await post(alarm.id, "Assignment", { userId: "nobody-we-know" });
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body.errors).toEqual([expect.objectContaining({ field: "body.userId", rule: "exists" })]);
    expect(await alarmEvents(alarm.id)).toEqual(["entered"]);

    const assigned = await post(alarm.id, "Assignment", { userId: ada.id, comment: "your area" });
    expect(assigned.status, assigned.text).toBe(200);
    expect(assigned.body.assignee).toMatchObject({ id: ada.id, name: "Ada Inspector" });
    const same = await post(alarm.id, "Assignment", { userId: ada.id });
    expect(same.headers.get("etag")).toBe(assigned.headers.get("etag"));
    const reassigned = await post(alarm.id, "Assignment", { userId: bo.id });
    expect(reassigned.body.assignee).toMatchObject({ id: bo.id, name: "Bo Technician" });
    expect(reassigned.body.history!.at(-1)).toMatchObject({
      action: "assigned",
      details: { assignee: { id: bo.id, name: "Bo Technician" }, previous: { id: ada.id, name: "Ada Inspector" } },
    });
    const mine = await call(`/Alarms?assigneeIds=${bo.id}`);
    expect(mine.body.items.map((a: Alarm) => a.id)).toEqual([alarm.id]);

    const unassigned = await post(alarm.id, "Unassignment");
    expect(unassigned.status, unassigned.text).toBe(200);
    expect(unassigned.body.assignee).toBeNull();
    expect((await post(alarm.id, "Unassignment")).headers.get("etag")).toBe(unassigned.headers.get("etag"));
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "assigned", "assigned", "unassigned"]);
    const events = await outbox("alarm", "entity_id = ?2 AND action = 'assigned'", alarm.id);
    expect(events[0]!.payload).toMatchObject({ assignee: { id: ada.id }, comment: "your area", severity: "medium" });
  });
});

describe("the comment thread", () => {
  it("keeps comments with who and when in the history, as events; GET /Alarms/{id}/History pages them", async () => {
    const { alarm } = await pumpInAlarm({});
    for (const [user, text] of [
      ["op-1", "Bearing noise confirmed on site."],
      ["op-2", "Spare bearing ordered."],
    ] as const) {
      const res = await post(alarm.id, "Comments", { text }, { user: { id: user, name: user } });
      expect(res.status, res.text).toBe(200);
    }
    const thread = await call(`/Alarms/${alarm.id}/History?actions=commented&includeTotal=true`);
    expect(thread.status, thread.text).toBe(200);
    expect(thread.headers.get("x-total-count")).toBe("2");
    expect(thread.body.map((e: { by: { id: string }; comment: string }) => [e.by.id, e.comment])).toEqual([
      ["op-1", "Bearing noise confirmed on site."],
      ["op-2", "Spare bearing ordered."],
    ]);
    const all = await call(`/Alarms/${alarm.id}/History`);
    expect(all.body.map((e: { action: string }) => e.action)).toEqual(["entered", "commented", "commented"]);
    const events = await outbox("alarm", "entity_id = ?2 AND action = 'commented'", alarm.id);
    expect(events.map((e) => e.payload.comment)).toEqual(["Bearing noise confirmed on site.", "Spare bearing ordered."]);
  });

  it("refuses an empty comment (400 naming body.text) and a 10 MB one (413), changing nothing", async () => {
    const { alarm } = await pumpInAlarm({});
    const { etag } = await read(alarm.id);
    for (const text of ["", "   "]) {
      const res = await post(alarm.id, "Comments", { text });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field: "body.text" });
    }
    const missing = await post(alarm.id, "Comments", {});
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatchObject({ field: "body.text" });
    const long = await post(alarm.id, "Comments", { text: "x".repeat(10_001) });
    expect(long.status).toBe(400);
    expect(long.body.errors[0]).toMatchObject({ field: "body.text", rule: "too_big" });
    const huge = await post(alarm.id, "Comments", { text: "x".repeat(10 * 1024 * 1024) });
    expect(huge.status, huge.text.slice(0, 200)).toBe(413);
    expect(huge.body.code).toBe("PayloadTooLarge");
    expect((await read(alarm.id)).etag).toBe(etag);
    expect(await alarmEvents(alarm.id)).toEqual(["entered"]);
  });
});

describe("permissions and bad input", () => {
  it("reading takes monitors_read; acting takes alarms_write (403, nothing changed)", async () => {
    const { alarm } = await pumpInAlarm({});
    const { etag } = await read(alarm.id);
    const reader = { id: "reader-1", permissions: ["monitors_read"] };
    expect((await call(`/Alarms/${alarm.id}`, { user: reader })).status).toBe(200);
    expect((await call("/Alarms", { user: reader })).status).toBe(200);
    for (const [action, body] of [
      ["Acknowledgement", {}],
      ["Assignment", { userId: "reader-1" }],
      ["Unassignment", {}],
      ["Comments", { text: "hi" }],
      ["Shelving", { oneShot: true }],
      ["Unshelving", {}],
    ] as const) {
      const res = await post(alarm.id, action, body, { user: reader });
      expect(res.status, `${action}: ${res.text}`).toBe(403);
      expect(res.body.code).toBe("Forbidden");
    }
    const writerOnly = { id: "writer-1", permissions: ["alarms_write"] };
    expect((await call(`/Alarms/${alarm.id}`, { user: writerOnly })).status).toBe(403);
    expect((await post(alarm.id, "Acknowledgement", {}, { user: writerOnly })).status).toBe(200);
    expect((await read(alarm.id)).etag).not.toBe(etag);
    expect(await alarmEvents(alarm.id)).toEqual(["entered", "acknowledged"]);
  });

  it("an alarm that does not exist is a 404, a malformed id or an unknown field a 400", async () => {
    const missing = crypto.randomUUID();
    for (const action of ["Acknowledgement", "Comments", "Shelving", "Unshelving", "Assignment", "Unassignment"]) {
      const body =
        action === "Comments" ? { text: "x" } : action === "Shelving" ? { oneShot: true } : action === "Assignment" ? { userId: "u" } : {};
      const res = await post(missing, action, body);
      expect(res.status, `${action}: ${res.text}`).toBe(404);
      expect(res.body.detail).toContain(missing);
    }
    expect((await call(`/Alarms/${missing}`)).status).toBe(404);
    expect((await call(`/Alarms/${missing}/History`)).status).toBe(404);
    const malformed = await post("not-an-id", "Acknowledgement");
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0]).toMatchObject({ field: "path.id" });
    const { alarm } = await pumpInAlarm({});
    const unknown = await post(alarm.id, "Acknowledgement", { comment: "ok", colour: "red" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ field: "body", rule: "unrecognized_keys" });
    expect(unknown.body.errors[0].message).toContain("colour");
    expect(await alarmEvents(alarm.id)).toEqual(["entered"]);
  });
});

describe("a person's decision wins over onLeave", () => {
  const raising = { actions: { raiseDeviation: { status: "active" } }, onLeave: { deviationStatus: "closed" } };

  it("a deviation an inspector put on hold stays on hold when the values return, and the alarm's history says why", async () => {
    const { alarm, reading } = await pumpInAlarm(raising);
    const deviation = await call(`/Deviations/${alarm.deviationId}`);
    const held = await call("/Deviations", {
      method: "PUT",
      headers: { "if-match": deviation.headers.get("etag")! },
      body: { ...deviation.body, status: "onHold" },
      user: { id: "inspector-1", name: "Ines Inspector" },
    });
    expect(held.status, held.text).toBe(200);
    await reading(2.0);
    expect((await call(`/Deviations/${alarm.deviationId}`)).body.status).toBe("onHold");
    const { alarm: after } = await read(alarm.id);
    expect(history(after)).toEqual(["entered", "left", "onLeaveSkipped"]);
    const skipped = after.history!.at(-1)!;
    expect(skipped.by).toBeNull();
    expect(skipped.comment).toContain("'onHold'");
    expect(skipped.comment).toContain("a person's decision wins");
    expect(skipped.details).toMatchObject({ deviationId: alarm.deviationId, status: "onHold", raisedWith: "active", onLeave: "closed" });
    // The only deviation update is the inspector's.
    expect(
      await count("SELECT id FROM outbox WHERE entity_kind = 'deviation' AND action = 'updated' AND entity_id = ?1", alarm.deviationId),
    ).toBe(1);
  });

  it("a deviation whose status nobody changed takes onLeave's status, even after other edits", async () => {
    const { alarm, reading } = await pumpInAlarm(raising);
    const deviation = await call(`/Deviations/${alarm.deviationId}`);
    const edited = await call("/Deviations", {
      method: "PUT",
      headers: { "if-match": deviation.headers.get("etag")! },
      body: { ...deviation.body, description: `${deviation.body.description} Checked on site.` },
    });
    expect(edited.status, edited.text).toBe(200);
    await reading(2.0);
    expect((await call(`/Deviations/${alarm.deviationId}`)).body.status).toBe("closed");
    expect(history((await read(alarm.id)).alarm)).toEqual(["entered", "left"]);
  });
});
