/**
 * Media references (the original product's `MediaReferences`, original-client.md): a named pointer to
 * a media, linked to activities with `POST /Activities/{id}/MediaReferences/{mediaReferenceId}`.
 * Deleting a reference removes its links; deleting an activity removes its links; a media that is
 * referenced cannot be deleted (409 naming how many references use it).
 */
import type { z } from "@hono/zod-openapi";
import type { Database } from "../db/statements";
import { assertVersion, retryWrite } from "../pkg/resource";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import { isForeignKeyViolation, newEtagToken, type WriteContext } from "../pkg/db";
import { ApiError, invalid, notFound } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import { MEDIA_REFERENCE_KIND, type CreateMediaReferenceSchema, type MediaReferenceRow, type UpdateMediaReferenceSchema } from "./schema";

const SELECT =
  "SELECT r.*, md.name AS media_name, md.declared_type AS media_type FROM media_references r LEFT JOIN medias md ON md.id = r.media_id";

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
