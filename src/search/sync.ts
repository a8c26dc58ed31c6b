/**
 * Keeping indices in step (spec 4.2 rule 10): standard indices are refreshed by platform events (the
 * outbox's queue consumer) and fully synchronised daily; custom indices run on their triggerSchedule;
 * a standard index that never synchronised (a new deployment over existing data) starts at once.
 */
import type { Bindings } from "../env";
import type { DomainEvent } from "../events/outbox";
import { errorFields, type Logger } from "../pkg/logger";
import { forEachLimited } from "../pkg/concurrency";
import type { DueRun, ScheduleKind } from "../pkg/schedule";
import { affectedDocuments, STANDARD_INDICES, standardIndex } from "./standard";
import { indexStub, SEARCH_SCHEDULE_KIND, startSync } from "./store";

const INDEXED_KINDS = new Set(["deviation", "workItem", "activity", "asset", "channel", "channelAnalysis"]);

/** The outbox event handler (registered in src/handlers.ts): re-reads the documents an event changed. */
export async function indexEvent(event: DomainEvent, env: Bindings, log: Logger): Promise<void> {
  if (!INDEXED_KINDS.has(event.entityKind)) return;
  const affected = await affectedDocuments(env.DB, event.entityKind, event.entityId, event.action === "deleted");
  for (const [indexId, keys] of affected) {
    try {
      await indexStub(env, indexId).refresh(indexId, [...new Set(keys)]);
    } catch (error) {
      log.error("search refresh failed", { indexId, eventId: event.id, ...errorFields(error) });
      throw error; // the queue retries the event; the daily synchronisation repairs what it still misses
    }
  }
}

/** Every standard index with a source is fully synchronised daily at 02:00 UTC. */
export const DAILY_SYNC = { cron: "0 2 * * *" };

export const searchScheduleKind: ScheduleKind = {
  kind: SEARCH_SCHEDULE_KIND,
  fixed: STANDARD_INDICES.filter((i) => i.source).map((i) => ({ ownerId: i.id, rule: DAILY_SYNC })),
  async start(env: Bindings, runs: readonly DueRun[], log: Logger) {
    const failed: string[] = [];
    await forEachLimited(runs, 4, async (run) => {
      try {
        const exists = await env.DB.prepare("SELECT 1 AS x FROM search_indices WHERE id = ?1").bind(run.ownerId).first();
        if (exists) await startSync(env, run.ownerId, standardIndex(run.ownerId) ? "daily synchronisation" : "trigger schedule");
      } catch (error) {
        log.error("search synchronisation not started", { indexId: run.ownerId, ...errorFields(error) });
        failed.push(run.runKey);
      }
    });
    return failed;
  },
};

/** Minute cron: standard indices that never synchronised start now (a fresh deployment, existing data). */
export async function startPendingIndices(env: Bindings, log: Logger): Promise<void> {
  const { results } = await env.DB.prepare("SELECT id FROM search_indices WHERE type = 'standard' AND status = 'Pending'").all<{
    id: string;
  }>();
  const withSource = new Set(STANDARD_INDICES.filter((i) => i.source).map((i) => i.id));
  for (const { id } of results) {
    if (!withSource.has(id)) continue;
    try {
      await startSync(env, id, "first start");
    } catch (error) {
      log.error("search synchronisation not started", { indexId: id, ...errorFields(error) });
    }
  }
}
