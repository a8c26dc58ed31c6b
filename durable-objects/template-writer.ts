import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../src/env";
import { SerialQueue } from "../src/pkg/serial";
import { randomIds } from "../src/platform/services";
import type { TemplateOperation, WriterContext, WriterResult } from "../src/templates/writer";

/**
 * Serialises the writes of ONE template (one object per template id: `work:<id>` or
 * `activity:<id>`). A Durable Object lets other calls in while it awaits D1, so the object keeps its
 * own queue: each write starts only when the previous one has finished. It stores nothing; D1 holds
 * the templates, and every batch is guarded on its own (src/templates/revisions.ts), so an evicted or
 * duplicated object can never corrupt a template, at worst make a write retry or answer 412.
 */
export class TemplateWriter extends DurableObject<Bindings> {
  private readonly queue = new SerialQueue();

  async write(context: WriterContext, operation: TemplateOperation): Promise<WriterResult> {
    // Ids come from the same IdGenerator as every other writer's (src/platform/services.ts).
    // The templates' writer is loaded when first used, not while the Worker starts (src/index.ts).
    const { executeTemplateOperation } = await import("../src/templates/writer");
    return this.queue.run(() => executeTemplateOperation(this.env.DB, context, operation, randomIds));
  }
}
