/**
 * SQL helpers of the work items module: rows that travel as one JSON parameter (so an insert of many
 * activities or inputs never nears D1's 100 bound parameters), outbox events for many entities in one
 * statement, and the UTC date-time form of dueDate and dateOfActivity.
 */
import type { Database } from "../db/statements";
import type { EventContext, EventInput } from "../events/outbox";
import { invalid } from "../pkg/errors";
import { formatDateValue, parseDateValue } from "../pkg/query";

/** Bytes of JSON one statement carries; D1 allows 2 MB per value, this leaves a wide margin. */
const MAX_JSON_BYTES = 256 * 1024;

/** Splits rows into chunks whose JSON stays under {@link MAX_JSON_BYTES} (one statement each). */
export function jsonChunks<T>(rows: readonly T[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let bytes = 2;
  for (const row of rows) {
    const text = JSON.stringify(row);
    if (current.length > 0 && bytes + text.length + 1 > MAX_JSON_BYTES) {
      chunks.push(`[${current.join(",")}]`);
      current = [];
      bytes = 2;
    }
    current.push(text);
    bytes += text.length + 1;
  }
  if (current.length > 0) chunks.push(`[${current.join(",")}]`);
  return chunks;
}

/**
 * One statement per chunk: `sqlWithJson` reads the rows from `json_each(?1)` (and may bind `extra`
 * as ?2, ?3, ...).
 */
export function jsonRowStatements<T>(db: Database, sqlWithJson: string, rows: readonly T[], ...extra: unknown[]): D1PreparedStatement[] {
  return jsonChunks(rows).map((json) => db.prepare(sqlWithJson).bind(json, ...extra));
}

/** Outbox rows for many events in as few statements as their payloads allow. */
export function outboxManyStatements(db: Database, ctx: EventContext, events: readonly EventInput[]): D1PreparedStatement[] {
  const rows = events.map((e) => ({
    id: crypto.randomUUID(),
    kind: e.entityKind,
    entity: e.entityId,
    action: e.action,
    payload: JSON.stringify(e.payload ?? null),
  }));
  return jsonRowStatements(
    db,
    `INSERT INTO outbox (id, entity_kind, entity_id, action, payload, occurred_at, actor_id, request_id)
     SELECT json_extract(value, '$.id'), json_extract(value, '$.kind'), json_extract(value, '$.entity'), json_extract(value, '$.action'),
            json_extract(value, '$.payload'), ?2, ?3, ?4 FROM json_each(?1)`,
    rows,
    ctx.now,
    ctx.actorId,
    ctx.requestId,
  );
}

/**
 * A date-time as stored and returned: ISO 8601 UTC with milliseconds, so text order is time order
 * and the day filters are range conditions on the index. Accepts what date properties accept
 * (ISO 8601 with or without zone, read as UTC without one; the interface's slash form).
 */
export function toUtcDateTime(value: string | null | undefined, field: string): string | null {
  if (value === null || value === undefined) return null;
  const epoch = parseDateValue(value);
  if (epoch === undefined) throw invalid(field, "format", `'${value}' is not a date-time (ISO 8601, e.g. 2026-11-22T10:00:00Z).`);
  return formatDateValue(epoch);
}
