/** Reads of the audit trail for tests: the records of one entity, oldest first, as stored. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../support/http";
import { createDeviation } from "../support/factories/work";

export interface StoredRecord {
  seq: number;
  eventId: string;
  occurredAt: string;
  action: string;
  etag: string | null;
  actorType: string;
  actorId: string | null;
  actorName: string | null;
  cause: string | null;
  requestId: string | null;
  reason: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export async function auditRecordsOf(kind: string, id: string): Promise<StoredRecord[]> {
  const { results } = await env.DB.prepare(
    "SELECT seq, event_id, occurred_at, action, etag, actor_type, actor_id, actor_name, cause, request_id, reason, before, after " +
      "FROM audit_records WHERE entity_kind = ?1 AND entity_id = ?2 ORDER BY seq",
  )
    .bind(kind, id)
    .all<Record<string, string | number | null>>();
  return results.map((r) => ({
    seq: r.seq as number,
    eventId: r.event_id as string,
    occurredAt: r.occurred_at as string,
    action: r.action as string,
    etag: r.etag as string | null,
    actorType: r.actor_type as string,
    actorId: r.actor_id as string | null,
    actorName: r.actor_name as string | null,
    cause: r.cause as string | null,
    requestId: r.request_id as string | null,
    reason: r.reason as string | null,
    before: r.before === null ? null : (JSON.parse(r.before as string) as Record<string, unknown>),
    after: r.after === null ? null : (JSON.parse(r.after as string) as Record<string, unknown>),
  }));
}

/** A deviation created, then edited `times` times the original client's way (GET, change, PUT): its id. */
export async function edited(times: number): Promise<string> {
  const deviation = await createDeviation();
  for (let i = 0; i < times; i++) {
    const read = (await call(`/Deviations/${deviation.id}`)).body;
    expect((await call("/Deviations", { method: "PUT", body: { ...read, description: `edit ${i}` } })).status).toBe(200);
  }
  return deviation.id;
}

/** GET /AuditTrail/Verification with `query`: its answer. */
export const verification = async (query = "") => (await call(`/AuditTrail/Verification${query}`)).body;
