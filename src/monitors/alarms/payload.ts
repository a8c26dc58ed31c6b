/** What the monitoring loop's steps share: the job being evaluated, and the payload of alarm events (docs/decisions.md, "Alarm events"). */
import type { EventContext } from "../../events/outbox";
import type { ConditionSeen } from "../monitors/controllers";
import type { MonitorRow } from "../monitors/store";
import type { CausingJob } from "./causes";

/**
 * What the controllers were evaluated on: a monitor job (its row's columns, as the minute cron and the
 * job end read them), or a batch of a channel's readings (issue 35: `id` the batch, `monitor_ref` the
 * channel, depth 0).
 */
export interface EvaluatedJob {
  id: string;
  monitor_ref: string;
  created_at: string;
  trigger_depth: number;
}

export const causingJob = (job: EvaluatedJob): CausingJob => ({ id: job.id, monitorRef: job.monitor_ref, triggerDepth: job.trigger_depth });

/**
 * What raises alarms (issue 35): a monitor, whose items are its population's, or a channel, its own
 * one item on its asset. The loop reads the controllers and names the source; everything else is the same.
 */
export interface AlarmSource {
  kind: "monitor" | "channel";
  /** The monitor's or channel's id (monitor_alarms.monitor_ref). */
  id: string;
  /** The monitor's monitorId, or the channel's number. */
  number: string;
  name: string;
  /** Who owns what its alarms raise: the monitor's owner, or the user who made the channel. */
  ownerId: string;
  ownerName: string | null;
  /** The controllers, as stored (JSON). */
  controllers: string;
}

export const monitorSource = (monitor: MonitorRow): AlarmSource => ({
  kind: "monitor",
  id: monitor.id,
  number: monitor.monitorId,
  name: monitor.name,
  ownerId: monitor.ownerId,
  ownerName: monitor.ownerName,
  controllers: monitor.controllers,
});

/** How the API names a source: `monitor { id, monitorId, name }` or `channel { id, channelNumber, name }`. */
export function sourceLinks(source: Pick<AlarmSource, "kind" | "id" | "number" | "name">) {
  return {
    source: source.kind,
    monitor: source.kind === "monitor" ? { id: source.id, monitorId: source.number, name: source.name } : null,
    channel: source.kind === "channel" ? { id: source.id, channelNumber: Number(source.number), name: source.name } : null,
  };
}

/** What an alarm is kept for: a population item of a monitor, or a channel (its id the item's, no population). */
export interface AlarmItem {
  id: string;
  populationId: string | null;
  assetId: string;
  assetName: string | null;
  /** The population's asset type (Plant, MainSystem, Equipment, Organization), or the channel's asset's (DesignObject too). */
  assetType: string;
}

/** One evaluation's facts: the job, its source, and the event context of its writes. */
export interface Evaluation {
  job: EvaluatedJob;
  source: AlarmSource;
  events: EventContext;
  /** What the model reported (or the channel's readings say), by asset and variable name. */
  byAsset: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** What the job's error message should say (actions that no longer fit, a stale job). */
  notes: string[];
}

/** The alarm event payload of an entry or exit (docs/decisions.md, "Alarm events"). */
export function alarmPayload(
  state: "alarm" | "normal",
  alarm: {
    id: string;
    controller: string;
    severity: string;
    acknowledged: boolean;
    deviationId: string | null;
    workItemId: string | null;
  },
  evaluation: Pick<Evaluation, "source" | "job">,
  item: AlarmItem | undefined,
  conditions: ConditionSeen[],
  at: string,
) {
  const { source, job } = evaluation;
  const channel = source.kind === "channel";
  return {
    id: alarm.id,
    state,
    // The alarm's ISA-18.2 state, as GET /Alarms shows it (a subscription's `statuses` filter reads it).
    status: `${state === "alarm" ? "active" : "cleared"}${alarm.acknowledged ? "Acknowledged" : "Unacknowledged"}`,
    ...sourceLinks(source),
    controller: alarm.controller,
    severity: alarm.severity,
    populationItem: item && item.populationId !== null ? { id: item.id, populationId: item.populationId } : null,
    asset: item ? { id: item.assetId, name: item.assetName, type: item.assetType } : null,
    monitorJobId: channel ? null : job.id,
    readingsBatchId: channel ? job.id : null,
    conditions,
    at,
    deviationId: alarm.deviationId,
    workItemId: alarm.workItemId,
  };
}
