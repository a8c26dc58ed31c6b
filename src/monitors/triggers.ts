/**
 * Monitors' trigger events, fed by the outbox events that already exist (the queue consumer):
 *   - `{ kind: "fileProcessed", dataTypeId }`: a file of that data type reached status processed;
 *   - `{ kind: "deviationChanged" }`: a deviation designating (directly or through its plant) an asset
 *     of one of the monitor's populations was created or changed.
 * Each Active monitor so triggered gets one monitor job per event: the run key is the event id, so a
 * redelivered event starts nothing new.
 *
 * The monitoring loop (issue 25) raises and changes deviations; its events carry their cause
 * (monitor_event_causes, ./alarms/causes.ts: the monitor job and its trigger depth). Such an event never starts the
 * monitor that caused it, and starts the others one level deeper: a job started by an event has
 * depth 1 + the depth of the job that caused it (0 for a person's change, a schedule or a run on
 * demand), and none starts beyond {@link MAX_TRIGGER_DEPTH}. So two monitors whose deviations
 * trigger each other stop after a few rounds instead of running forever.
 */
import type { Bindings } from "../env";
import type { DomainEvent } from "../events/outbox";
import { errorFields, type Logger } from "../pkg/logger";
import { platform } from "../platform/services";
import { causeOf } from "./alarms/causes";
import { executeMonitor } from "./monitor-jobs/run";

/** The deepest chain of event-triggered monitor jobs: a job at this depth starts no other through its deviations. */
export const MAX_TRIGGER_DEPTH = 3;

async function monitorsFor(env: Bindings, event: DomainEvent, cause: { monitorRef: string } | null): Promise<string[]> {
  if (event.entityKind === "file" && event.action !== "deleted") {
    const file = event.payload as { status?: string; dataType?: { id?: string } } | null;
    if (file?.status !== "processed" || !file.dataType?.id) return [];
    const { results } = await env.DB.prepare(
      `SELECT id FROM monitors WHERE status = 'Active' AND json_extract(trigger_event, '$.kind') = 'fileProcessed' ` +
        `AND json_extract(trigger_event, '$.dataTypeId') = ?1`,
    )
      .bind(file.dataType.id)
      .all<{ id: string }>();
    return results.map((r) => r.id);
  }
  if (event.entityKind === "deviation" && event.action !== "deleted") {
    const { results } = await env.DB.prepare(
      `SELECT DISTINCT m.id FROM monitors m
       JOIN populations p ON p.owner_kind = 'monitor' AND p.owner_id = m.id
       JOIN population_items i ON i.population_id = p.id
       JOIN designations d ON d.entity_kind = 'deviation' AND d.entity_id = ?1 AND d.asset_id = i.asset_id
       WHERE m.status = 'Active' AND json_extract(m.trigger_event, '$.kind') = 'deviationChanged' AND m.id IS NOT ?2`,
    )
      .bind(event.entityId, cause?.monitorRef ?? null)
      .all<{ id: string }>();
    return results.map((r) => r.id);
  }
  return [];
}

/** The outbox event handler (registered in src/handlers.ts). */
export async function triggerMonitors(event: DomainEvent, env: Bindings, log: Logger): Promise<void> {
  const cause = event.entityKind === "deviation" ? await causeOf(env.DB, event.id) : null;
  const depth = (cause?.depth ?? 0) + 1;
  const monitors = await monitorsFor(env, event, cause);
  if (monitors.length > 0 && depth > MAX_TRIGGER_DEPTH) {
    log.warn("monitor jobs not started: trigger depth reached", {
      eventId: event.id,
      depth,
      maxDepth: MAX_TRIGGER_DEPTH,
      monitorIds: monitors,
    });
    return;
  }
  for (const monitorRef of monitors) {
    try {
      await executeMonitor(env, monitorRef, "event", `event:${event.id}:${monitorRef}`, platform().clock.now(), depth);
    } catch (error) {
      log.error("monitor job not started for an event", { monitorId: monitorRef, eventId: event.id, ...errorFields(error) });
      throw error; // the queue redelivers the event; its run key keeps the job single
    }
  }
}
