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
let loaded: Handlers | undefined;
/**
 * The handlers, loaded on the isolate's first event. Each event that finds them not yet loaded awaits
 * its own `import()` (the module is evaluated once, however many ask): no promise is shared between
 * requests, which the runtime does not allow across request contexts. A load that throws fails its
 * event with the module's error.
 */
async function handlers(): Promise<Handlers> {
  loaded ??= (await import("./handlers")).default;
  return loaded;
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
