/**
 * Entering alarms, in one D1 batch per {@link ENTER_CHUNK} alarms: the alarm rows first (a second
 * entry of an active alarm fails the batch there), their history entries and `entered` events, and
 * the controllers' actions (./effects.ts), each written by its owner's statement builders. So
 * everything an alarm does exists exactly when the alarm does.
 *
 * An alarm entered while a timed shelving is in force for its controller and item (issue 33) inherits
 * the shelving and is held: no actions and no `entered` event until the shelving ends with the alarm
 * still active (./release.ts). Its batch asserts that the shelving it inherits is still there.
 */
import type { Database } from "../../db/statements";
import { outboxManyStatements } from "../../events/outbox";
import { assertStatement, newEtagToken } from "../../pkg/db";
import { conditionsSeen } from "../monitors/controllers";
import { DEFAULT_SEVERITY } from "./severity";
import { AlarmEffects, planEffects, type Entering } from "./effects";
import { alarmPayload, type Evaluation } from "./payload";
import { ALARM_EVENT_KIND, enterAlarmsStatements, type EnteredAlarm, type ShelfRow } from "./store";

/** Alarms entered per batch (each with at most one deviation and one work item). */
const ENTER_CHUNK = 20;

export interface EnteringAlarm extends Entering {
  /** A timed shelving in force for the controller and item: the alarm inherits it and is held. */
  shelf: ShelfRow | null;
}

/** The escalation an alarm of `controller` gets (issue 33): its delay and repeat interval, or none. */
export function escalationOf(controller: EnteringAlarm["controller"]): EnteredAlarm["escalation"] {
  const e = controller.escalation;
  return e ? { afterMinutes: e.afterMinutes, everyMinutes: e.repeatMinutes ?? e.afterMinutes } : null;
}

export async function enter(db: Database, evaluation: Evaluation, entering: readonly EnteringAlarm[]): Promise<void> {
  const { job, events, byAsset, notes } = evaluation;
  // A held alarm does nothing yet: only the others' actions are planned.
  const plan = await planEffects(
    db,
    entering.filter((e) => e.shelf === null),
    entering.map((e) => e.item.assetId),
    notes,
  );
  for (let start = 0; start < entering.length; start += ENTER_CHUNK) {
    const chunk = entering.slice(start, start + ENTER_CHUNK);
    const alarms: EnteredAlarm[] = [];
    const alarmEvents: { entityKind: typeof ALARM_EVENT_KIND; entityId: string; action: "entered"; payload: unknown }[] = [];
    const effects = new AlarmEffects(db, evaluation, plan);
    const shelves: ShelfRow[] = [];
    for (const { item, controller, shelf } of chunk) {
      const conditions = conditionsSeen(controller, byAsset.get(item.assetId));
      const alarmId = events.uuid();
      const made = shelf
        ? { deviationId: null, deviationStatus: null, workItemId: null }
        : await effects.add(item, controller, alarmId, conditions);
      const severity = controller.severity ?? DEFAULT_SEVERITY;
      alarms.push({
        id: alarmId,
        historyId: events.uuid(),
        itemId: item.id,
        assetId: item.assetId,
        plantId: plan.assets.get(item.assetId)?.plantId ?? null,
        controller: controller.name,
        severity,
        conditions: JSON.stringify(conditions),
        ...made,
        shelf,
        escalation: escalationOf(controller),
        etag: newEtagToken(),
      });
      if (shelf) {
        shelves.push(shelf);
        continue;
      }
      alarmEvents.push({
        entityKind: ALARM_EVENT_KIND,
        entityId: alarmId,
        action: "entered",
        payload: alarmPayload(
          "alarm",
          { id: alarmId, controller: controller.name, severity, acknowledged: false, ...made },
          evaluation,
          item,
          conditions,
          events.now,
        ),
      });
    }

    await db.batch([
      // First: a second entry of an active alarm fails here (unique active_key), and the whole batch with it.
      ...enterAlarmsStatements(db, alarms, { id: job.id, monitorRef: job.monitor_ref, sourceKind: evaluation.source.kind }, events.now),
      // A shelving ended meanwhile (a person, the clock) holds nothing any more: read again (the evaluation retries).
      ...shelves.map((s) =>
        assertStatement(db, "EXISTS (SELECT 1 FROM monitor_alarms WHERE id = ?1 AND shelved_until = ?2)", s.id, s.shelvedUntil),
      ),
      ...outboxManyStatements(db, events, alarmEvents),
      ...effects.statements(),
    ]);
  }
}
