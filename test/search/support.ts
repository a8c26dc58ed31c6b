/** Helpers of the search tests: events fed to the indexer, synchronisations awaited, searches. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { DomainEvent, EntityKind } from "../../src/events/outbox";
import { createLogger } from "../../src/pkg/logger";
import { indexEvent } from "../../src/search/sync";
import { call, type TestUser } from "../support/http";

const log = createLogger("error", { test: "search" });
let lastSeq = 0;

/** Runs the indexer over every outbox event not yet fed (the queue also does, in its own time). */
export async function indexPendingEvents(): Promise<void> {
  const { results } = await env.DB.prepare(
    "SELECT seq, id, entity_kind, entity_id, action, payload, occurred_at FROM outbox WHERE seq > ?1 ORDER BY seq",
  )
    .bind(lastSeq)
    .all<{
      seq: number;
      id: string;
      entity_kind: EntityKind;
      entity_id: string;
      action: DomainEvent["action"];
      payload: string;
      occurred_at: string;
    }>();
  for (const r of results) {
    await indexEvent(
      {
        id: r.id,
        entityKind: r.entity_kind,
        entityId: r.entity_id,
        action: r.action,
        occurredAt: r.occurred_at,
        actorId: null,
        requestId: null,
        payload: JSON.parse(r.payload),
      },
      env,
      log,
    );
    lastSeq = r.seq;
  }
}

export const STANDARD = {
  deviations: "00000000-0000-4000-8000-000000000002",
  equipment: "00000000-0000-4000-8000-000000000003",
  risks: "00000000-0000-4000-8000-000000000001",
  workItems: "00000000-0000-4000-8000-000000000006",
  activities: "00000000-0000-4000-8000-00000000000a",
  textInputs: "00000000-0000-4000-8000-00000000000d",
};

/** Waits until an index's synchronisation (after `since`, ISO) ended, and returns the index. */
export async function awaitSync(id: string, since = "", user?: Partial<TestUser>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(`/Indices/${id}`, { user });
    expect(res.status, res.text).toBe(200);
    const last = res.body.lastSynchronization;
    if (res.body.status !== "Synchronizing" && res.body.status !== "Pending" && last && last.endedAt >= since) return res.body;
    if (Date.now() > deadline) throw new Error(`index ${id} did not synchronise: ${res.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function resync(id: string, user?: Partial<TestUser>) {
  const since = new Date(Date.now() - 1).toISOString();
  const res = await call(`/Indices/${id}/Resynchronization`, { method: "PUT", user });
  expect(res.status, res.text).toBe(202);
  return awaitSync(id, since, user);
}

export async function search(id: string, request: Record<string, unknown>, user?: Partial<TestUser>) {
  return call(`/Indices/${id}/Search`, { method: "POST", body: request, user });
}

export function libraryForm(fields: Record<string, string>, source?: string, fileName = "library.js"): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (source !== undefined) form.append("File", new File([source], fileName, { type: "text/javascript" }));
  return form;
}
