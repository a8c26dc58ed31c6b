/** What the monitoring loop's steps share: the job being evaluated, and the payload of alarm events (docs/decisions.md, "Alarm events"). */
import type { EventContext } from "../../events/outbox";
import type { ConditionSeen } from "../monitors/controllers";
import type { MonitorRow } from "../monitors/store";
import type { MonitorItem } from "../populations/store";
import type { CausingJob } from "./causes";

/** The monitor job whose controllers are evaluated (its row's columns, as the minute cron and the job end read them). */
export interface EvaluatedJob {
  id: string;
  monitor_ref: string;
  created_at: string;
  trigger_depth: number;
}

export const causingJob = (job: EvaluatedJob): CausingJob => ({ id: job.id, monitorRef: job.monitor_ref, triggerDepth: job.trigger_depth });

/** One evaluation's facts: the job, its monitor, and the event context of its writes. */
export interface Evaluation {
  job: EvaluatedJob;
  monitor: MonitorRow;
  events: EventContext;
  /** What the model reported, by asset and variable name. */
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
  evaluation: Pick<Evaluation, "monitor" | "job">,
  item: MonitorItem | undefined,
  conditions: ConditionSeen[],
  at: string,
) {
  const { monitor, job } = evaluation;
  return {
    id: alarm.id,
    state,
    // The alarm's ISA-18.2 state, as GET /Alarms shows it (a subscription's `statuses` filter reads it).
    status: `${state === "alarm" ? "active" : "cleared"}${alarm.acknowledged ? "Acknowledged" : "Unacknowledged"}`,
    monitor: { id: monitor.id, monitorId: monitor.monitorId, name: monitor.name },
    controller: alarm.controller,
    severity: alarm.severity,
    populationItem: item ? { id: item.id, populationId: item.populationId } : null,
    asset: item ? { id: item.assetId, name: item.assetName, type: item.assetType } : null,
    monitorJobId: job.id,
    conditions,
    at,
    deviationId: alarm.deviationId,
    workItemId: alarm.workItemId,
  };
}
