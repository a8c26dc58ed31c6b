/**
 * Monitors' trigger events, fed by the outbox events that already exist (the queue consumer):
 *   - `{ kind: "fileProcessed", dataTypeId }`: a file of that data type reached status processed;
 *   - `{ kind: "deviationChanged" }`: a deviation designating (directly or through its plant) an asset
 *     of one of the monitor's populations was created or changed.
 * Each Active monitor so triggered gets one monitor job per event: the run key is the event id, so a
 * redelivered event starts nothing new.
 */
import type { Bindings } from "../env";
import type { DomainEvent } from "../events/outbox";
import { errorFields, type Logger } from "../pkg/logger";
import { executeMonitor } from "./jobs";

async function monitorsFor(env: Bindings, event: DomainEvent): Promise<string[]> {
  if (event.entityKind === "file" && event.action !== "deleted") {
    const file = event.payload as { status?: string; dataType?: { id?: string } } | null;
    if (file?.status !== "processed" || !file.dataType?.id) return [];
    const { results } = await env.DB.prepare(
      `SELECT id FROM monitors WHERE status = 'Active' AND json_extract(trigger_event, '$.kind') = 'fileProcessed' AND json_extract(trigger_event, '$.dataTypeId') = ?1`,
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
       WHERE m.status = 'Active' AND json_extract(m.trigger_event, '$.kind') = 'deviationChanged'`,
    )
      .bind(event.entityId)
      .all<{ id: string }>();
    return results.map((r) => r.id);
  }
  return [];
}

/** The outbox event handler (registered in src/index.ts). */
export async function triggerMonitors(event: DomainEvent, env: Bindings, log: Logger): Promise<void> {
  for (const monitorRef of await monitorsFor(env, event)) {
    try {
      await executeMonitor(env, monitorRef, "event", `event:${event.id}:${monitorRef}`);
    } catch (error) {
      log.error("monitor job not started for an event", { monitorId: monitorRef, eventId: event.id, ...errorFields(error) });
      throw error; // the queue redelivers the event; its run key keeps the job single
    }
  }
}
