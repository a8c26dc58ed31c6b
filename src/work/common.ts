/**
 * Fields every work-management entity shares: the object owner, the status, tags and free metadata.
 * One place, so deviations, templates, activities and work items read and validate them alike.
 */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import type { Principal } from "../pkg/auth";
import { ApiError } from "../pkg/errors";
import { splitCsv, withProbe, type Condition } from "../pkg/query";

/** A person: object owner, responsible. Users live in the identity provider, so both parts are stored. */
export const PersonSchema = z
  .object({
    id: z.string().trim().min(1).max(200).openapi({ description: "The user id (the token's `sub`).", example: "auth0|5f1e" }),
    name: z.string().trim().max(200).nullable().default(null).openapi({ description: "Display name.", example: "Ada Inspector" }),
  })
  .strict()
  .openapi("Person");

export type Person = { id: string; name: string | null };

/** The owner a write stores: the one given, else the logged-in user. */
export function ownerOrCaller(given: Person | null | undefined, principal: Pick<Principal, "id" | "name"> | null | undefined): Person {
  if (given) return { id: given.id, name: given.name ?? null };
  if (!principal) throw new ApiError("Unauthorized", "No logged-in user to own the entity.");
  return { id: principal.id, name: principal.name ?? null };
}

export function toPerson(id: string | null, name: string | null): Person | null {
  return id === null ? null : { id, name };
}

/** The status every entity starts in when none is given (a system status). */
export const DEFAULT_STATUS = "new";

export const StatusSchema = z.string().trim().min(1).max(100).openapi({
  description: "A system status name (GET /SystemStatuses, e.g. new, active) or the id of a user status (GET /UserStatuses). Default: new.",
  example: "active",
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Checks a status: a system status name (exact) or a user status id. Returns the stored form
 * (a user status id lower-cased) or throws ValidationFailed on `field`.
 */
export async function checkStatus(db: Database, status: string, field = "body.status"): Promise<string> {
  if (UUID.test(status)) {
    const id = status.toLowerCase();
    const found = await db.prepare("SELECT id FROM user_statuses WHERE id = ?1").bind(id).first();
    if (found) return id;
  } else {
    const found = await db.prepare("SELECT name FROM system_statuses WHERE name = ?1").bind(status).first();
    if (found) return status;
  }
  const message = `'${status}' is neither a system status (GET /SystemStatuses) nor the id of a user status (GET /UserStatuses).`;
  throw new ApiError("ValidationFailed", message, { errors: [{ field, rule: "exists", message }] });
}

/** The statuses filter: user status ids compared lower-case, system names exactly. */
export function statusesCondition(column: string, raw: string | undefined): Condition[] {
  const items = splitCsv(raw).map((item) => (UUID.test(item) ? item.toLowerCase() : item));
  return items.length === 0 ? [] : [(values) => values.oneOf(column, items)];
}

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 100;

export const TagsSchema = z
  .array(z.string().trim().min(1).max(MAX_TAG_LENGTH))
  .max(MAX_TAGS)
  .default([])
  .openapi({
    description:
      `Free strings for categorisation; duplicates are removed, order kept. At most ${MAX_TAGS} of ${MAX_TAG_LENGTH} ` + `characters.`,
    example: ["pump", "annual"],
  });

/** Tags without duplicates (exact), in first-seen order. */
export function normaliseTags(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}

/**
 * The statements that replace an entity's rows in entity_tags (entity_kind workItem or workTemplate),
 * for the entity's write batch. The tags travel as one JSON parameter.
 */
export function replaceTagsStatements(db: Database, entityKind: string, entityId: string, tags: readonly string[]): D1PreparedStatement[] {
  const statements = [db.prepare("DELETE FROM entity_tags WHERE entity_kind = ?1 AND entity_id = ?2").bind(entityKind, entityId)];
  if (tags.length > 0) {
    statements.push(
      db
        .prepare("INSERT OR IGNORE INTO entity_tags (entity_kind, entity_id, tag) SELECT ?1, ?2, value FROM json_each(?3)")
        .bind(entityKind, entityId, JSON.stringify(tags)),
    );
  }
  return statements;
}

/**
 * The tags filter: entities carrying any of the given tags (exact match), on entity_tags' index.
 * A tag is usually carried by many entities, so the condition has a probe (the primary key of
 * entity_tags) for lists that walk their order index instead of reading every tagged entity.
 */
export function tagsCondition(entityKind: string, idExpression: string, raw: string | undefined): Condition[] {
  const tags = splitCsv(raw);
  if (tags.length === 0) return [];
  return [
    withProbe(
      (values) =>
        `${idExpression} IN (SELECT entity_id FROM entity_tags WHERE ${values.oneOf("tag", tags)} AND entity_kind = ` +
        `${values.value(entityKind)})`,
      (values) =>
        `EXISTS (SELECT 1 FROM entity_tags pt WHERE pt.entity_kind = ${values.value(entityKind)} AND pt.entity_id = ` +
        `${idExpression} AND ${values.oneOf("pt.tag", tags)})`,
    ),
  ];
}
