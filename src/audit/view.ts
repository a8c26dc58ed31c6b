/**
 * How the API shows an audit record: who, when, what, why, the state before and after, and what
 * changed between them as field paths (RFC 6901 JSON Pointers) with both values.
 */
import { z } from "@hono/zod-openapi";
import type { AuditRow } from "./chain";
import { CSV_OPTIONS } from "../export/writers";
import { formatCsv } from "@cj-tech-master/excelts/csv";

export const AuditChangeSchema = z
  .object({
    path: z.string().openapi({ description: "The field, as a JSON Pointer (RFC 6901).", example: "/description" }),
    before: z.unknown().optional().openapi({ description: "Its value before (absent: the field did not exist)." }),
    after: z.unknown().optional().openapi({ description: "Its value after (absent: the field no longer exists)." }),
  })
  .openapi("AuditChange");

export const AuditEntrySchema = z
  .object({
    sequence: z.string().openapi({ description: "The record's place in the trail (its hash chain runs in this order).", example: "4711" }),
    occurredAt: z.string().openapi({ example: "2026-11-03T09:15:00.000Z" }),
    entityKind: z.string().openapi({ example: "deviation" }),
    entityId: z.string(),
    action: z.string().openapi({ example: "updated" }),
    etag: z.string().nullable().openapi({ description: "The entity's ETag after the change (null after a deletion)." }),
    actor: z
      .object({
        type: z.enum(["user", "client", "service"]).openapi({
          description: "user: a person's token; client: a machine client's token (client credentials); service: the service itself.",
        }),
        id: z.string().nullable(),
        name: z.string().nullable(),
        cause: z.string().nullable().openapi({ description: "For the service: what it was doing (e.g. `monitoring loop`)." }),
      })
      .openapi("AuditActor"),
    requestId: z.string().nullable(),
    reason: z.string().nullable().openapi({ description: "The Audit-Reason the caller sent with the write." }),
    changes: z.array(AuditChangeSchema).openapi({ description: "The fields whose value differs between before and after." }),
    before: z.unknown().openapi({ description: "The entity before (null before a creation; secrets redacted)." }),
    after: z.unknown().openapi({ description: "The entity after (null after a deletion; secrets redacted)." }),
  })
  .openapi("AuditEntry");

export type AuditEntry = z.infer<typeof AuditEntrySchema>;

const pointer = (parts: readonly string[]) => parts.map((p) => `/${p.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The fields that differ, objects walked field by field, anything else (arrays included) compared whole. */
type Change = { path: string; before?: unknown; after?: unknown };

export function changesBetween(before: unknown, after: unknown, at: string[] = []): Change[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key): Change[] => {
      if (!(key in after)) return [{ path: pointer([...at, key]), before: before[key] }];
      if (!(key in before)) return [{ path: pointer([...at, key]), after: after[key] }];
      return changesBetween(before[key], after[key], [...at, key]);
    });
  }
  if (same(before, after)) return [];
  return [{ path: pointer(at), before: before ?? null, after: after ?? null }];
}

const parsed = (text: string | null): unknown => (text === null ? null : (JSON.parse(text) as unknown));

export function toAuditEntry(row: AuditRow): AuditEntry {
  const before = parsed(row.before);
  const after = parsed(row.after);
  return {
    sequence: String(row.seq),
    occurredAt: row.occurred_at,
    entityKind: row.entity_kind,
    entityId: row.entity_id,
    action: row.action,
    etag: row.etag === null ? null : `"${row.etag}"`,
    actor: { type: row.actor_type as "user" | "client" | "service", id: row.actor_id, name: row.actor_name, cause: row.cause },
    requestId: row.request_id,
    reason: row.reason,
    // A creation shows every field it set; a deletion none (the state before is the record).
    changes: row.action === "deleted" ? [] : changesBetween(before ?? {}, after ?? {}),
    before,
    after,
  };
}

const CSV_COLUMNS = [
  "sequence",
  "occurredAt",
  "entityKind",
  "entityId",
  "action",
  "etag",
  "actorType",
  "actorId",
  "actorName",
  "cause",
  "requestId",
  "reason",
  "changes",
  "before",
  "after",
] as const;

const csvCell = (value: unknown) =>
  value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);

export const CSV_HEADER = `${CSV_COLUMNS.join(",")}\r\n`;

/**
 * One CSV line of an entry (RFC 4180, by the export's CSV library; objects as JSON). A text that
 * could start a formula (`=`, `+`, `-`, `@`...) gets a leading quote, as in every export (src/export/writers.ts).
 */
export function csvLine(entry: AuditEntry): string {
  const flat: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    ...entry,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    actorName: entry.actor.name,
    cause: entry.actor.cause,
  };
  return formatCsv([CSV_COLUMNS.map((column) => csvCell(flat[column]))], CSV_OPTIONS);
}
