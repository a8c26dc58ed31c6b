/**
 * Leaving alarms: each exit recorded in the history with the job and the values, the alarm's `left`
 * event (not for an alarm held since it was entered while shelved: nobody heard of it), its escalation
 * stopped and a one-shot shelving ended with it, and with `onLeave.deviationStatus` the deviation the
 * alarm raised takes that status (its `updated` event with the whole deviation, and the event's cause).
 *
 * A person's decision wins over the loop (issue 33): onLeave changes the deviation only while it still
 * has the status the alarm raised it with, and only if it is as the evaluation read it. Otherwise the
 * alarm's history says why onLeave was skipped (`onLeaveSkipped`). One batch; everything after the exit
 * is guarded on the history entry this batch wrote, so a leave happens once.
 */
import type { Database } from "../../db/statements";
import { newEtagToken } from "../../pkg/db";
import { DEFAULT_SEVERITY } from "./severity";
import { DEVIATION_COLUMNS, hydrateDeviations, setStatusesStatements, type DeviationRow } from "../../deviations/store";
import { conditionsSeen, prepareActions, type PreparedActions } from "../monitors/controllers";
import type { Controller } from "../monitors/schema";
import { writtenEventCausesStatements } from "./causes";
import { deviationEventsStatements } from "./effects";
import { alarmPayload, causingJob, type AlarmItem, type Evaluation } from "./payload";
import {
  alarmLeftCondition,
  leaveAlarmsStatements,
  leftAlarmEventsStatements,
  onLeaveSkippedStatements,
  type ActiveAlarmRow,
} from "./store";

/** An active alarm the evaluation leaves: its item (gone when the item was removed) and controller (null when removed). */
export interface Leaving {
  alarm: ActiveAlarmRow;
  item: AlarmItem | undefined;
  controller: Controller | null;
}

export async function leave(db: Database, evaluation: Evaluation, leaving: readonly Leaving[]): Promise<void> {
  const { job, events, byAsset, notes } = evaluation;
  // Deviations to set a status on, with the status (checked now: it may have been removed since the save).
  const statusFor = new Map<string, string>();
  const checkedStatus = new Map<string, PreparedActions>();
  for (const { alarm, controller } of leaving) {
    if (!controller?.onLeave?.deviationStatus || !alarm.deviationId) continue;
    let prepared = checkedStatus.get(controller.name);
    if (!prepared)
      checkedStatus.set(
        controller.name,
        (prepared = await prepareActions(
          db,
          { name: controller.name, conditions: [], onLeave: controller.onLeave },
          `controller '${controller.name}'`,
        )),
      );
    if (prepared.leaveStatus) statusFor.set(alarm.deviationId, prepared.leaveStatus);
  }
  for (const p of checkedStatus.values())
    for (const problem of p.problems) notes.push(`${problem.field}: deviation status not set on leaving: ${problem.message}`);

  const rows = leaving.map(({ alarm, item, controller }) => {
    const conditions = conditionsSeen(controller, item ? byAsset.get(item.assetId) : undefined, true);
    const payload = alarmPayload(
      "normal",
      {
        id: alarm.id,
        controller: alarm.controller,
        severity: alarm.severity || DEFAULT_SEVERITY,
        acknowledged: alarm.acknowledgedAt !== null,
        deviationId: alarm.deviationId,
        workItemId: alarm.workItemId,
      },
      evaluation,
      item,
      conditions,
      events.now,
    );
    return {
      id: alarm.id,
      etag: newEtagToken(),
      history: events.uuid(),
      unshelved: events.uuid(),
      conditions: JSON.stringify(conditions),
      payload: JSON.stringify(payload),
    };
  });
  // The deviations whose status changes: their new representation is the event's payload.
  const deviationIds = [...statusFor.keys()];
  const deviationRows = deviationIds.length
    ? (
        await db
          .prepare(`SELECT ${DEVIATION_COLUMNS} FROM deviations WHERE id IN (SELECT value FROM json_each(?1))`)
          .bind(JSON.stringify(deviationIds))
          .all<DeviationRow>()
      ).results
    : [];
  const alarmOf = new Map(leaving.filter((l) => l.alarm.deviationId).map((l) => [l.alarm.deviationId!, l.alarm]));
  // A person changed the deviation's status since the alarm raised it: their decision stands, and the history says so.
  const decided: { id: string; alarm: string; comment: string; details: string }[] = [];
  const personChanged = (r: DeviationRow) => {
    const raisedWith = alarmOf.get(r.id)?.deviationStatus ?? null;
    return raisedWith !== null && r.status !== raisedWith;
  };
  for (const r of deviationRows.filter((d) => personChanged(d) && d.status !== statusFor.get(d.id))) {
    const alarm = alarmOf.get(r.id)!;
    decided.push({
      id: events.uuid(),
      alarm: alarm.id,
      comment:
        `onLeave did not set the deviation's status to '${statusFor.get(r.id)}': the deviation is '${r.status}' now, not ` +
        `'${alarm.deviationStatus}' as the alarm raised it, so a person changed it, and a person's decision wins.`,
      details: JSON.stringify({ deviationId: r.id, status: r.status, raisedWith: alarm.deviationStatus, onLeave: statusFor.get(r.id) }),
    });
  }
  const changed = deviationRows
    .filter((r) => !personChanged(r) && r.status !== statusFor.get(r.id))
    .map((r) => ({ ...r, status: statusFor.get(r.id)!, etag: newEtagToken(), updated_at: events.now, previous: r.etag }));
  const composed = await hydrateDeviations(db, changed);
  const updates = changed.map((r, i) => ({
    id: r.id,
    status: r.status,
    etag: r.etag,
    previous: r.previous,
    alarm: alarmOf.get(r.id)!.id,
    payload: JSON.stringify(composed[i]!.value),
  }));
  // A change between the read and the batch (a person's, most likely) also wins: said in the history when it happens.
  const raced = updates.map((u) => ({
    id: events.uuid(),
    alarm: u.alarm,
    deviation: u.id,
    etag: u.etag,
    comment:
      `onLeave did not set the deviation's status to '${u.status}': the deviation changed (or was removed) while the alarm was ` +
      "being left, and a person's decision wins.",
    details: JSON.stringify({ deviationId: u.id, onLeave: u.status }),
  }));
  const statusEvents = deviationEventsStatements(
    db,
    events,
    "updated",
    updates,
    "EXISTS (SELECT 1 FROM deviations d WHERE d.id = json_extract(j.value, '$.id') AND d.etag = json_extract(j.value, '$.etag'))",
  );

  await db.batch([
    ...leaveAlarmsStatements(db, rows, job.id, events.now),
    // A leave happens once: the alarm's history entry (unique per alarm and action) is the guard of everything after it.
    ...leftAlarmEventsStatements(db, events, rows),
    // onLeave.deviationStatus: only when the deviation is as read (a person's change meanwhile wins) and this job left its alarm.
    ...setStatusesStatements(db, updates, events.now, alarmLeftCondition(job.id)),
    ...statusEvents.statements,
    ...writtenEventCausesStatements(db, statusEvents.eventIds, causingJob(job), events.now),
    ...onLeaveSkippedStatements(db, job.id, events.now, decided, raced),
  ]);
}
