/** An alarm and its history as the API shows them (issue 33), from the rows of ./store.ts. */
import type { ConditionSeen } from "../monitors/controllers";
import { SEVERITIES } from "./severity";
import { storedEnum } from "../stored";
import { alarmRow, historyEntryRow, type AlarmRow } from "./store";
import { ALARM_ASSET_TYPES, HISTORY_ACTIONS, type Alarm, type AlarmAssetType, type AlarmEvent, type AlarmStatus } from "./schema";
import { sourceLinks } from "./payload";

/** An alarm row with what its joins add (monitor and item, or channel; asset: store.ts ALARM_SELECT). */
export interface AlarmRecord {
  row: AlarmRow;
  /** The monitor's monitorId, or the channel's number. */
  sourceNumber: string;
  sourceName: string;
  maxShelveMinutes: number;
  /** The item's population (null for a channel's alarm). */
  populationId: string | null;
  assetName: string | null;
  assetType: string;
}

const ALARM_ASSET_TYPE: Record<string, AlarmAssetType> = {
  plant: "Plant",
  mainSystem: "MainSystem",
  equipment: "Equipment",
  designObject: "DesignObject",
  organization: "Organization",
};

export function alarmRecord(raw: Record<string, unknown>): AlarmRecord {
  return {
    row: alarmRow(raw),
    sourceNumber: String(raw.source_number),
    sourceName: String(raw.source_name),
    maxShelveMinutes: Number(raw.max_shelve_minutes),
    populationId: raw.population_id === null || raw.population_id === undefined ? null : String(raw.population_id),
    assetName: raw.asset_name === null || raw.asset_name === undefined ? null : String(raw.asset_name),
    assetType: String(raw.asset_type),
  };
}

/** What the API says of the alarm's source: `source`, and the `monitor` or the `channel`. */
export const sourceOfRecord = (record: AlarmRecord) =>
  sourceLinks({
    kind: record.row.sourceKind === "channel" ? "channel" : "monitor",
    id: record.row.monitorRef,
    number: record.sourceNumber,
    name: record.sourceName,
  });

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
    ...sourceOfRecord(record),
    controller: r.controller,
    populationItem: record.populationId === null ? null : { id: r.itemId, populationId: record.populationId },
    asset: {
      id: r.assetId,
      name: record.assetName,
      // A population's asset type as it is; a channel's asset's kind as the same names say it.
      type: storedEnum(ALARM_ASSET_TYPES, ALARM_ASSET_TYPE[record.assetType] ?? record.assetType, "alarm asset type"),
    },
    plantId: r.plantId,
    enteredAt: r.enteredAt,
    enteredMonitorJobId: r.sourceKind === "channel" ? null : r.enteredJobId,
    enteredReadingsBatchId: r.sourceKind === "channel" ? r.enteredJobId : null,
    leftAt: r.leftAt,
    leftMonitorJobId: r.sourceKind === "channel" ? null : r.leftJobId,
    leftReadingsBatchId: r.sourceKind === "channel" ? r.leftJobId : null,
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
