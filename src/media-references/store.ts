/**
 * Media references (the original product's `MediaReferences`, original-client.md): a named pointer to
 * a media, linked to activities with `POST /Activities/{id}/MediaReferences/{mediaReferenceId}`.
 * Deleting a reference removes its links; deleting an activity removes its links; a media that is
 * referenced cannot be deleted (409 naming how many references use it).
 */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { updateBodyOf, assertVersion, retryWrite } from "../pkg/resource";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import { isForeignKeyViolation, newEtagToken, type WriteContext } from "../pkg/db";
import { ApiError, invalid, notFound } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import {
  compileListQuery,
  csvInList,
  defineList,
  inList,
  listQueryShape,
  noProperties,
  parseUuidList,
  runListQuery,
  type Condition,
} from "../pkg/query";

export const MEDIA_REFERENCE_KIND = "mediaReference";

export interface MediaReferenceRow {
  id: string;
  media_id: string;
  display_name: string | null;
  description: string | null;
  owner_id: string;
  owner_name: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  media_name?: string | null;
  media_type?: string | null;
}

export const MediaReferenceSchema = z
  .object({
    id: z.uuid(),
    mediaId: z.uuid().openapi({ description: "The referenced media (GET /Medias/{id}, /Medias/{id}/Data)." }),
    media: z.object({ id: z.uuid(), name: z.string().nullable(), type: z.string().nullable() }),
    displayName: z.string().nullable(),
    description: z.string().nullable(),
    objectOwner: z.object({ id: z.string(), name: z.string().nullable() }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("MediaReference");

const fields = {
  mediaId: z.uuid().openapi({ description: "An existing media." }),
  displayName: z.string().trim().max(200).nullable().optional(),
  description: z.string().max(4000).nullable().optional(),
};
export const CreateMediaReferenceSchema = z.object(fields).strict().openapi("CreateMediaReference");
export const UpdateMediaReferenceSchema = updateBodyOf(MediaReferenceSchema, fields, "UpdateMediaReference");

const SELECT =
  "SELECT r.*, md.name AS media_name, md.declared_type AS media_type FROM media_references r LEFT JOIN medias md ON md.id = r.media_id";

export function toMediaReference(row: MediaReferenceRow) {
  return {
    id: row.id,
    mediaId: row.media_id,
    media: { id: row.media_id, name: row.media_name ?? null, type: row.media_type ?? null },
    displayName: row.display_name,
    description: row.description,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Whether an id names a media reference, a media, or neither (to explain a media id given as a reference). */
export async function whatIdNames(db: Database, id: string): Promise<{ reference: boolean; media: boolean }> {
  const found = await db
    .prepare("SELECT (SELECT 1 FROM media_references WHERE id = ?1) AS reference, (SELECT 1 FROM medias WHERE id = ?1) AS media")
    .bind(id)
    .first<{ reference: number | null; media: number | null }>();
  return { reference: Boolean(found?.reference), media: Boolean(found?.media) };
}

export async function getMediaReference(db: Database, id: string): Promise<MediaReferenceRow> {
  const row = await db.prepare(`${SELECT} WHERE r.id = ?1`).bind(id).first<MediaReferenceRow>();
  if (!row) throw notFound("Media reference", id);
  return row;
}

async function assertMedia(db: Database, mediaId: string): Promise<void> {
  const found = await db.prepare("SELECT 1 AS x FROM medias WHERE id = ?1").bind(mediaId).first();
  if (!found) throw invalid("body.mediaId", "exists", `There is no media ${mediaId} (upload it with POST /Medias).`);
}

export async function createMediaReference(
  ctx: WriteContext,
  input: z.infer<typeof CreateMediaReferenceSchema>,
): Promise<MediaReferenceRow> {
  await assertMedia(ctx.db, input.mediaId);
  const id = ctx.uuid();
  const etag = newEtagToken();
  try {
    await ctx.db.batch([
      ctx.db
        .prepare(
          "INSERT INTO media_references (id, media_id, display_name, description, owner_id, owner_name, etag, created_at, " +
            "updated_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?5)",
        )
        .bind(
          id,
          input.mediaId,
          input.displayName ?? null,
          input.description ?? null,
          ctx.actorId ?? "unknown",
          ctx.actorName,
          etag,
          ctx.now,
        ),
      ...outboxStatements(ctx.db, ctx, {
        entityKind: MEDIA_REFERENCE_KIND,
        entityId: id,
        action: "created",
        payload: { id, mediaId: input.mediaId },
      }),
    ]);
  } catch (error) {
    // The media was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw invalid("body.mediaId", "exists", `There is no media ${input.mediaId}.`);
    throw error;
  }
  return getMediaReference(ctx.db, id);
}

export async function updateMediaReference(
  ctx: WriteContext,
  input: z.infer<typeof UpdateMediaReferenceSchema>,
): Promise<MediaReferenceRow> {
  return retryWrite(ctx, async () => {
    const current = await getMediaReference(ctx.db, input.id);
    assertVersion(ctx, current.etag);
    if (input.mediaId !== current.media_id) await assertMedia(ctx.db, input.mediaId);
    const etag = newEtagToken();
    const [updated] = await ctx.db.batch([
      ctx.db
        .prepare(
          "UPDATE media_references SET media_id = ?2, display_name = ?3, description = ?4, etag = ?5, updated_at = ?6 " +
            "WHERE id = ?1 AND etag = ?7",
        )
        .bind(input.id, input.mediaId, input.displayName ?? null, input.description ?? null, etag, ctx.now, current.etag),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        {
          entityKind: MEDIA_REFERENCE_KIND,
          entityId: input.id,
          action: "updated",
          payload: { id: input.id, mediaId: input.mediaId },
          partial: true,
        },
        { table: "media_references", etag },
      ),
    ]);
    if (updated!.meta.changes === 0) throw preconditionFailed();
    return getMediaReference(ctx.db, input.id);
  });
}

export async function deleteMediaReference(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getMediaReference(ctx.db, id);
    assertVersion(ctx, current.etag);
    const [, deleted] = await ctx.db.batch([
      ctx.db
        .prepare(
          "DELETE FROM activity_media_references WHERE media_reference_id = ?1 AND EXISTS (SELECT 1 FROM media_references " +
            "WHERE id = ?1 AND etag = ?2)",
        )
        .bind(id, current.etag),
      ctx.db.prepare("DELETE FROM media_references WHERE id = ?1 AND etag = ?2").bind(id, current.etag),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: MEDIA_REFERENCE_KIND, entityId: id, action: "deleted", payload: null },
        "previousChanged",
      ),
    ]);
    if (deleted!.meta.changes === 0) throw preconditionFailed();
  });
}

// --- Links to activities ---------------------------------------------------------------------------

/** Deletes the activity links `where` selects (trusted SQL over activity_media_references, binding its own values). */
export function deleteActivityLinksStatement(db: Database, where: { sql: string; bindings: readonly unknown[] }): D1PreparedStatement {
  return db.prepare(`DELETE FROM activity_media_references WHERE ${where.sql}`).bind(...where.bindings);
}

async function assertActivity(db: Database, activityId: string): Promise<void> {
  if (!(await db.prepare("SELECT 1 AS x FROM activities WHERE id = ?1").bind(activityId).first())) throw notFound("Activity", activityId);
}

export async function activityMediaReferences(db: Database, activityId: string): Promise<MediaReferenceRow[]> {
  await assertActivity(db, activityId);
  const { results } = await db
    .prepare(
      `${SELECT} JOIN activity_media_references l ON l.media_reference_id = r.id WHERE l.activity_id = ?1 ORDER BY l.created_at, r.id`,
    )
    .bind(activityId)
    .all<MediaReferenceRow>();
  return results;
}

/** Links a reference to an activity; linking it again changes nothing (and is no error). */
export async function linkMediaReference(
  ctx: WriteContext,
  activityId: string,
  referenceId: string,
): Promise<{ row: MediaReferenceRow; created: boolean }> {
  await assertActivity(ctx.db, activityId);
  const row = await getMediaReference(ctx.db, referenceId);
  let inserted: D1Result | undefined;
  try {
    [inserted] = await ctx.db.batch([
      ctx.db
        .prepare(
          "INSERT OR IGNORE INTO activity_media_references (activity_id, media_reference_id, created_at, created_by) " +
            "VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(activityId, referenceId, ctx.now, ctx.actorId),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        {
          entityKind: "activity",
          entityId: activityId,
          action: "updated",
          payload: { mediaReferenceLinked: referenceId },
          link: { field: "mediaReferenceIds", id: referenceId, linked: true },
        },
        "previousChanged",
      ),
    ]);
  } catch (error) {
    if (isForeignKeyViolation(error)) throw new ApiError("NotFound", "The activity or the media reference was deleted meanwhile.");
    throw error;
  }
  return { row, created: (inserted?.meta.changes ?? 0) > 0 };
}

export async function unlinkMediaReference(ctx: WriteContext, activityId: string, referenceId: string): Promise<void> {
  await assertActivity(ctx.db, activityId);
  const [removed] = await ctx.db.batch([
    ctx.db
      .prepare("DELETE FROM activity_media_references WHERE activity_id = ?1 AND media_reference_id = ?2")
      .bind(activityId, referenceId),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      {
        entityKind: "activity",
        entityId: activityId,
        action: "updated",
        payload: { mediaReferenceUnlinked: referenceId },
        link: { field: "mediaReferenceIds", id: referenceId, linked: false },
      },
      "previousChanged",
    ),
  ]);
  if (removed!.meta.changes === 0) throw notFound("Media reference link", `${activityId}/${referenceId}`);
}

/** The 409 of deleting a media that media references use. */
export async function assertMediaUnreferenced(db: Database, mediaId: string): Promise<void> {
  const row = await db.prepare("SELECT count(*) AS n FROM media_references WHERE media_id = ?1").bind(mediaId).first<{ n: number }>();
  if (row && row.n > 0)
    throw new ApiError(
      "InUse",
      `Media ${mediaId} is used by ${row.n} media reference${row.n === 1 ? "" : "s"}; delete or re-point ` +
        `${row.n === 1 ? "it" : "them"} first (GET /MediaReferences?mediaIds=${mediaId}).`,
    );
}

// --- List ------------------------------------------------------------------------------------------

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

const mediaReferenceList = defineList({
  table: "media_references",
  alias: "r",
  entityKind: MEDIA_REFERENCE_KIND,
  idColumn: "id",
  fields: {
    displayName: { column: "lower(r.display_name)", displayColumn: "r.display_name" },
    "objectOwner.name": { column: "lower(r.owner_name)" },
    createdAt: { column: "r.created_at", type: "datetime" },
    updatedAt: { column: "r.updated_at", type: "datetime" },
  },
  searchColumns: ["r.display_name", "r.description"],
  defaultOrder: "createdAt desc",
  select:
    "r.*, (SELECT name FROM medias WHERE id = r.media_id) AS media_name, (SELECT declared_type FROM medias WHERE id " +
    "= r.media_id) AS media_type",
});

export const MediaReferenceListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the display name or description." }),
  mediaIds: z.string().optional().openapi({ description: "Only references to these media (comma-separated ids)." }),
  activityIds: z.string().optional().openapi({ description: "Only references linked to any of these activities (comma-separated ids)." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over displayName, objectOwner.name, createdAt, updatedAt. Default: createdAt desc.",
  }),
  skip,
  take,
  includeTotal,
});

export async function listMediaReferences(db: Database, query: z.infer<typeof MediaReferenceListQuery>) {
  const conditions: Condition[] = [];
  const media = parseUuidList(query.mediaIds, "query.mediaIds");
  if (media.length > 0) conditions.push(inList("r.media_id", media));
  const activityIds = parseUuidList(query.activityIds, "query.activityIds");
  if (activityIds.length > 0)
    conditions.push(
      (values) => `r.id IN (SELECT media_reference_id FROM activity_media_references WHERE activity_id IN ${values.list(activityIds)})`,
    );
  conditions.push(...csvInList("r.owner_id", query.objectOwnerIds));
  return runListQuery<MediaReferenceRow>(db, await compileListQuery(mediaReferenceList, query, noProperties, conditions));
}
