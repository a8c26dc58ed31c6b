/** An alarm and its history as the API shows them (issue 33), from the rows of ./store.ts. */
import type { ConditionSeen } from "../monitors/controllers";
import { SEVERITIES } from "./severity";
import { ASSET_TYPES } from "../populations/schema";
import { storedEnum } from "../stored";
import { alarmRow, historyEntryRow, type AlarmRow } from "./store";
import { HISTORY_ACTIONS, type Alarm, type AlarmEvent, type AlarmStatus } from "./schema";

/** An alarm row with what its joins add (monitor, item, asset: store.ts ALARM_SELECT). */
export interface AlarmRecord {
  row: AlarmRow;
  monitorNumber: string;
  monitorName: string;
  maxShelveMinutes: number;
  populationId: string;
  assetName: string | null;
  assetType: string;
}

export function alarmRecord(raw: Record<string, unknown>): AlarmRecord {
  return {
    row: alarmRow(raw),
    monitorNumber: String(raw.monitor_number),
    monitorName: String(raw.monitor_name),
    maxShelveMinutes: Number(raw.monitor_max_shelve_minutes),
    populationId: String(raw.population_id),
    assetName: raw.asset_name === null || raw.asset_name === undefined ? null : String(raw.asset_name),
    assetType: String(raw.asset_type),
  };
}

export function statusOf(row: Pick<AlarmRow, "activeKey" | "acknowledgedAt">): AlarmStatus {
  const active = row.activeKey !== null;
  const acknowledged = row.acknowledgedAt !== null;
  if (active) return acknowledged ? "activeAcknowledged" : "activeUnacknowledged";
  return acknowledged ? "clearedAcknowledged" : "clearedUnacknowledged";
}

const conditionsOf = (text: string | null): ConditionSeen[] => (text === null ? [] : (JSON.parse(text) as ConditionSeen[]));

/** The alarm as GET /Alarms and its events show it. */
export function toAlarm(record: AlarmRecord): Alarm {
  const r = record.row;
  return {
    id: r.id,
    status: statusOf(r),
    active: r.activeKey !== null,
    acknowledged: r.acknowledgedAt !== null,
    severity: storedEnum(SEVERITIES, r.severity, "monitor_alarms.severity"),
    monitor: { id: r.monitorRef, monitorId: record.monitorNumber, name: record.monitorName },
    controller: r.controller,
    populationItem: { id: r.itemId, populationId: record.populationId },
    asset: { id: r.assetId, name: record.assetName, type: storedEnum(ASSET_TYPES, record.assetType, "populations.asset_type") },
    plantId: r.plantId,
    enteredAt: r.enteredAt,
    enteredMonitorJobId: r.enteredJobId,
    leftAt: r.leftAt,
    leftMonitorJobId: r.leftJobId,
    conditions: conditionsOf(r.enteredValues),
    deviationId: r.deviationId,
    workItemId: r.workItemId,
    acknowledgement:
      r.acknowledgedAt === null
        ? null
        : {
            at: r.acknowledgedAt,
            by: r.acknowledgedById === null ? null : { id: r.acknowledgedById, name: r.acknowledgedByName },
            comment: r.acknowledgedComment,
          },
    assignee: r.assigneeId === null ? null : { id: r.assigneeId, name: r.assigneeName, assignedAt: r.assignedAt ?? r.updatedAt },
    shelving:
      r.shelveMode === null || r.shelvedUntil === null
        ? null
        : {
            mode: r.shelveMode === "oneShot" ? "oneShot" : "timed",
            at: r.shelvedAt ?? r.updatedAt,
            until: r.shelvedUntil,
            by: { id: r.shelvedById ?? "", name: r.shelvedByName },
            comment: r.shelveComment,
          },
    held: r.held,
    escalation: { count: r.escalations, nextAt: r.escalateAt },
    updatedAt: r.updatedAt,
  };
}

/** An entry of an alarm's history as the API shows it. */
export function toAlarmEvent(raw: Record<string, unknown>): AlarmEvent {
  const e = historyEntryRow(raw);
  return {
    id: e.id,
    action: storedEnum(HISTORY_ACTIONS, e.action, "monitor_alarm_events.action"),
    at: e.recordedAt,
    by: e.actorId === null ? null : { id: e.actorId, name: e.actorName },
    comment: e.comment,
    monitorJobId: e.monitorJobId,
    conditions: e.conditions === null ? null : conditionsOf(e.conditions),
    details: e.details === null ? null : (JSON.parse(e.details) as Record<string, unknown>),
  };
}
