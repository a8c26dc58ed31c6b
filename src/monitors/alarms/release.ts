/**
 * The release of a held alarm (issue 33): an alarm entered while its controller and item were shelved
 * did nothing and told no one; when its shelving ends (a person unshelves it, or the minute cron
 * expires it) and it is still active, what it held runs now: its controller's actions as they are today
 * (./effects.ts), its `entered` event, and its escalation from now. Its history says `released`, with
 * any action that no longer fits. The caller writes the release in the batch that ends the shelving,
 * after an assertion of the version it read (the actions' statements are not guarded themselves).
 */
import type { Database } from "../../db/statements";
import type { EventContext } from "../../events/outbox";
import type { Controller } from "../monitors/schema";
import { monitorRow, monitorRowStatement } from "../monitors/store";
import { monitorItemOf, monitorItemStatement } from "../populations/store";
import { AlarmEffects, planEffects } from "./effects";
import { escalationOf } from "./enter";
import { alarmPayload, monitorSource, type EvaluatedJob } from "./payload";
import { channelAlarmSource } from "../../measurements/channels/alarms";
import { channelRecord, channelRecordStatement } from "../../measurements/channels/store";
import { minutesAfter, versionedEventsStatements, versionedHistoryStatements, type AlarmChange } from "./store";
import type { AlarmRecord } from "./view";
import type { ConditionSeen } from "../monitors/controllers";

export interface Release {
  /** What the release sets on the alarm, besides the end of its shelving. */
  change: AlarmChange;
  /** The actions, the `released` history entry and the `entered` event (written when the alarm carries `etag`). */
  statements: D1PreparedStatement[];
}

/** The release of `record` (held and active), its new version to be `etag`; `actorName`: who ended the shelving (null: the clock). */
export async function prepareRelease(
  db: Database,
  events: EventContext,
  actorName: string | null,
  record: AlarmRecord,
  etag: string,
): Promise<Release> {
  const alarm = record.row;
  const [sourceResult, itemResult, jobResult] = await db.batch<Record<string, unknown>>(
    alarm.sourceKind === "channel"
      ? [channelRecordStatement(db, alarm.monitorRef), db.prepare("SELECT 1"), db.prepare("SELECT 1")]
      : [
          monitorRowStatement(db, alarm.monitorRef),
          monitorItemStatement(db, alarm.itemId),
          db.prepare("SELECT created_at, trigger_depth FROM monitor_jobs WHERE id = ?1").bind(alarm.enteredJobId),
        ],
  );
  const sourceRaw = sourceResult?.results[0];
  const itemRaw = itemResult?.results[0];
  // The alarm's source and item exist as long as it does (their deletes remove it).
  if (!sourceRaw || !itemRaw) throw new Error(`alarm ${alarm.id}: its monitor, channel or item is gone`);
  const { source, item } =
    alarm.sourceKind === "channel"
      ? channelAlarmSource(channelRecord(sourceRaw))
      : { source: monitorSource(monitorRow(sourceRaw)), item: monitorItemOf(itemRaw) };
  const jobRaw = alarm.sourceKind === "channel" ? undefined : jobResult?.results[0];
  const job: EvaluatedJob = {
    id: alarm.enteredJobId,
    monitor_ref: alarm.monitorRef,
    created_at: jobRaw ? String(jobRaw.created_at) : alarm.enteredAt,
    trigger_depth: jobRaw ? Number(jobRaw.trigger_depth) : 0,
  };
  const controller = (JSON.parse(source.controllers) as Controller[]).find((c) => c.name === alarm.controller) ?? null;
  // The values that entered it, as the job reported them.
  const seen = JSON.parse(alarm.enteredValues) as ConditionSeen[];
  const conditions = controller ? seen : [];
  const notes: string[] = [];
  let made = { deviationId: null as string | null, deviationStatus: null as string | null, workItemId: null as string | null };
  const statements: D1PreparedStatement[] = [];
  if (controller) {
    const plan = await planEffects(db, [{ item, controller }], [item.assetId], notes);
    const effects = new AlarmEffects(db, { job, source, events }, plan);
    made = await effects.add(item, controller, alarm.id, conditions);
    statements.push(...effects.statements());
  } else notes.push(`The ${source.kind} has no controller '${alarm.controller}' any more: nothing to run.`);
  const escalation = controller ? escalationOf(controller) : null;
  const payload = {
    ...alarmPayload(
      "alarm",
      { id: alarm.id, controller: alarm.controller, severity: alarm.severity, acknowledged: alarm.acknowledgedAt !== null, ...made },
      { source, job },
      item,
      conditions.length > 0 ? conditions : seen,
      events.now,
    ),
    enteredAt: alarm.enteredAt,
    released: true,
  };
  statements.push(
    ...versionedHistoryStatements(db, [
      {
        etag,
        entry: {
          id: events.uuid(),
          alarmId: alarm.id,
          monitorRef: alarm.monitorRef,
          itemId: alarm.itemId,
          controller: alarm.controller,
          action: "released",
          actorId: events.actorId,
          actorName,
          comment: ["Its shelving ended while it was active: what it held ran now.", ...notes].join(" "),
          details: JSON.stringify({ deviationId: made.deviationId, workItemId: made.workItemId, enteredAt: alarm.enteredAt }),
          recordedAt: events.now,
        },
      },
    ]),
    ...versionedEventsStatements(db, events, "entered", [{ id: alarm.id, etag, payload: JSON.stringify(payload) }]),
  );
  return {
    change: {
      held: false,
      ...made,
      escalateAt: escalation && alarm.acknowledgedAt === null ? minutesAfter(events.now, escalation.afterMinutes) : null,
    },
    statements,
  };
}
