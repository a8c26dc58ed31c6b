/**
 * The Worker's handlers: HTTP (the Hono app), the minute cron, and the queue consumers (events,
 * webhooks). The entry (src/index.ts) loads this module when the isolate first needs it.
 */
import { createApp } from "./app";
import type { WorkerBindings } from "./env";
import { consumeEvents, pruneOutbox, relayOutbox, type DomainEvent, type EventHandler } from "./events/outbox";
import { errorFields } from "./pkg/logger";
import { taskLogger, withDatabase } from "./config";
import { decodeRequestBody } from "./pkg/encoding";
import { openSession, withBookmark } from "./pkg/bookmark";
import { withTrailingNewline } from "./pkg/trailing-newline";
import { cleanUpUploads } from "./upload/cleanup";
import { sweepMediaOrphans } from "./media/sweep";
import { dispatchDueRuns, type ScheduleKind } from "./pkg/schedule";
import { jobConfigScheduleKind, refreshActiveJobs } from "./dataprocessing/execution";
import { expireMonitorJobs, monitorScheduleKind } from "./monitors/monitor-jobs/run";
import { triggerMonitors } from "./monitors/triggers";
import { alarmTimersKind } from "./monitors/alarms/timers";
import { feedInspection } from "./measurements/feed/reconcile";
import { indexEvent, searchScheduleKind, startPendingIndices } from "./search/sync";
import { inspectionPlansKind } from "./plans/generate";
import { runNameKeyBackfill } from "./pkg/name-keys";
import { sealAuditTrail } from "./audit/chain";
import { archiveAuditTrail } from "./audit/archive";
import { fanOutEvent, sweepDeliveries, type DeliveryMessage } from "./subscriptions/deliveries";
import { consumeDeadLetters, consumeDeliveries } from "./subscriptions/sender";
import { resumeStalledImports } from "./imports/run";

const app = createApp();

/** Subscribers to platform events: monitors triggered by events, search indexing, and webhook subscriptions. */
const eventHandlers: EventHandler[] = [triggerMonitors, indexEvent, fanOutEvent, feedInspection];

/** Areas that run things on a schedule (src/pkg/schedule); each registers its kind here. */
const scheduleKinds: ScheduleKind[] = [
  jobConfigScheduleKind,
  monitorScheduleKind,
  searchScheduleKind,
  alarmTimersKind,
  inspectionPlansKind,
];

export default {
  async fetch(incoming, env, ctx) {
    const request = decodeRequestBody(incoming);
    if (request instanceof Response) return withTrailingNewline(request);
    // Reads run on the nearest D1 replica; a client that sends back the bookmark of its last answer
    // reads at least what that answer had written (src/pkg/bookmark.ts).
    const session = openSession(env.DB, request);
    const response = withTrailingNewline(withBookmark(await app.fetch(request, withDatabase(env, session), ctx), session));
    // Writes leave events in the outbox; relay them now rather than waiting for the cron.
    if (request.method !== "GET" && request.method !== "HEAD" && request.method !== "OPTIONS" && response.status < 400) {
      ctx.waitUntil(relayOutbox(env, taskLogger(env, { task: "relay" })).catch(() => undefined));
    }
    return response;
  },

  async scheduled(controller, env, ctx) {
    const log = taskLogger(env, { task: "cron", cron: controller.cron });
    const now = new Date(controller.scheduledTime);
    const jobs: [string, () => Promise<unknown>][] = [
      ["relayOutbox", () => relayOutbox(env, log, 50)],
      ["pruneOutbox", () => pruneOutbox(env, now)],
      ["cleanUpUploads", () => cleanUpUploads(env, now, log)],
      ["sweepMediaOrphans", () => sweepMediaOrphans(env, now, log)],
      ["dispatchSchedules", () => dispatchDueRuns(env, now, scheduleKinds, log)],
      ["refreshJobs", () => refreshActiveJobs(env, log)],
      ["expireMonitorJobs", () => expireMonitorJobs(env, now)],
      ["startPendingIndices", () => startPendingIndices(env, log)],
      // A one-off step (migration 0015): a single read per isolate once it is done.
      ["nameKeyBackfill", () => runNameKeyBackfill(env, log, now)],
      ["sweepWebhookDeliveries", () => sweepDeliveries(env, now, log)],
      // Imports whose runner's alarm was lost (or gave up retrying) are poked (src/imports/run.ts).
      ["resumeStalledImports", () => resumeStalledImports(env, now)],
      // The audit trail: seal what was written since the last run, then move a few old days to R2 (each bounded).
      ["auditTrail", () => sealAuditTrail(env, log).then(() => archiveAuditTrail(env, now, log))],
    ];
    // One failing job must not starve the others; each is retried on the next minute.
    const runs = jobs.map(([name, job]) => job().catch((error) => log.error("scheduled job failed", { job: name, ...errorFields(error) })));
    for (const run of runs) ctx.waitUntil(run);
    // What the jobs wrote (a job's end, alarms, a disabled subscription) leaves now, not at the next minute.
    ctx.waitUntil(
      Promise.allSettled(runs)
        .then(() => relayOutbox(env, log, 50))
        .catch((error) => log.error("scheduled job failed", { job: "relayOutbox", ...errorFields(error) })),
    );
  },

  async queue(batch, env, ctx) {
    // Webhook deliveries and their dead letters (wrangler.toml); every other queue carries platform events.
    if (batch.queue.startsWith("integrity-edge-webhooks")) {
      const log = taskLogger(env, { task: "webhooks" });
      if (batch.queue.endsWith("-dlq")) await consumeDeadLetters(batch as MessageBatch<DeliveryMessage>, env, log);
      else await consumeDeliveries(batch as MessageBatch<DeliveryMessage>, env, log);
      return;
    }
    await consumeEvents(batch as MessageBatch<DomainEvent>, env, taskLogger(env, { task: "events" }), eventHandlers);
    // What the consumers wrote (a fed reading, a triggered monitor job) left events in the
    // outbox: relay them now, as a request's writes are, rather than at the next write or the next minute.
    ctx.waitUntil(relayOutbox(env, taskLogger(env, { task: "relay" })).catch(() => undefined));
  },
} satisfies ExportedHandler<WorkerBindings>;
