/**
 * The Worker entry. Its handlers (src/handlers.ts: the Hono app, the minute cron, the queue consumers)
 * are loaded when the isolate first needs them, not while it starts: building the app (every route's
 * schemas and OpenAPI metadata) is most of the Worker's start-up CPU, and the platform limits that
 * phase (docs/benchmarks.md, "Startup"). The Durable Object classes are exported as they are.
 */
import type { WorkerBindings } from "./env";

export { IdempotencyStore } from "../durable-objects/idempotency-store";
export { TemplateWriter } from "../durable-objects/template-writer";
export { JobRunner } from "../durable-objects/job-runner";
export { SearchIndex } from "../durable-objects/search-index";
export { ChannelSeries } from "../durable-objects/channel-series";
export { ImportRunner } from "../durable-objects/import-runner";

type Handlers = typeof import("./handlers").default;
let loading: Promise<Handlers> | undefined;
/** The handlers, loaded once per isolate (a failed load is tried again by the next event). */
function handlers(): Promise<Handlers> {
  loading ??= import("./handlers").then(
    (module) => module.default,
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

export default {
  async fetch(request, env, ctx) {
    return (await handlers()).fetch(request, env, ctx);
  },
  async scheduled(controller, env, ctx) {
    return (await handlers()).scheduled(controller, env, ctx);
  },
  async queue(batch, env, ctx) {
    return (await handlers()).queue(batch, env, ctx);
  },
} satisfies ExportedHandler<WorkerBindings>;
