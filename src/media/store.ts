/**
 * Media rows in D1. A row is inserted only after every R2 object it names was written (one batch
 * with its outbox event), so a client never sees a row without its bytes.
 */
import { tableStatements, type Database } from "../db/statements";
import { medias } from "../db/schema";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import { ApiError, notFound } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import { newEtagToken, runBatch, type WriteContext } from "../pkg/db";
import { MEDIA_SIZES, type Media, type MediaSize, type MediaSizeEntry, type MediaType, type Recognition } from "./schema";

/** One stored R2 object of a media: the original or a resized version. */
export interface StoredVersion {
  size: MediaSize;
  key: string;
  bytes: number;
  contentType: string;
  width: number | null;
  height: number | null;
  /** R2's etag of the object (the HTTP ETag of its bytes). */
  etag: string;
}

export interface MediaRecord {
  media: Media;
  versions: StoredVersion[];
  etag: string;
}

export interface MediaRow {
  id: string;
  name: string;
  content_type: string;
  size: number;
  checksum: string;
  declared_type: string;
  is_image: number;
  image_format: string | null;
  width: number | null;
  height: number | null;
  variants: string;
  recognition: string;
  owner_id: string;
  owner_name: string | null;
  etag: string;
  created_at: string;
}

export const COLUMNS =
  "id, name, content_type, size, checksum, declared_type, is_image, image_format, width, height, variants, " +
  "recognition, owner_id, owner_name, etag, created_at";
export const KIND = "media";

/** How a requested size is served: by its own object, or by the original (see `servedVersion`). */
export interface Served {
  version: StoredVersion;
  /** The size asked for does not exist (the image could not be resized) and the original stands in. */
  fallback: boolean;
}

/**
 * Which object answers `size`. A size with its own object answers itself. An image that decoded
 * (integrity passed) but is already within a size has no object for it: the original IS that
 * size. Any other missing size (corrupt image, format not decoded, past the pixel limits) falls
 * back to the original, and the response says so.
 */
export function servedVersion(record: MediaRecord, size: MediaSize): Served {
  const original = record.versions.find((v) => v.size === "Original")!;
  const own = record.versions.find((v) => v.size === size);
  if (own) return { version: own, fallback: false };
  return { version: original, fallback: record.media.recognition.integrity !== "passed" };
}

/** The sizes that exist: stored ones, plus those a decoded image's original already satisfies. */
export function sizeEntries(isImage: boolean, integrity: Recognition["integrity"], versions: StoredVersion[]): MediaSizeEntry[] {
  const original = versions.find((v) => v.size === "Original")!;
  const entries: MediaSizeEntry[] = [];
  for (const name of MEDIA_SIZES) {
    const own = versions.find((v) => v.size === name);
    const version = own ?? (isImage && integrity === "passed" ? original : undefined);
    if (!version) continue;
    entries.push({
      name,
      width: version.width,
      height: version.height,
      contentType: version.contentType,
      size: version.bytes,
      isOriginal: version === original,
    });
  }
  return entries;
}

export function toRecord(row: MediaRow): MediaRecord {
  const versions = JSON.parse(row.variants) as StoredVersion[];
  const recognition = JSON.parse(row.recognition) as Recognition;
  const isImage = row.is_image === 1;
  return {
    media: {
      id: row.id,
      name: row.name,
      type: row.declared_type as MediaType,
      contentType: row.content_type,
      size: row.size,
      checksum: row.checksum,
      isImage,
      width: row.width,
      height: row.height,
      sizes: sizeEntries(isImage, recognition.integrity, versions),
      recognition,
      owner: { id: row.owner_id, name: row.owner_name },
      createdAt: row.created_at,
    },
    versions,
    etag: row.etag,
  };
}

export async function findMedia(db: Database, id: string): Promise<MediaRecord | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM medias WHERE id = ?1`).bind(id).first<MediaRow>();
  return row ? toRecord(row) : null;
}

export async function getMedia(db: Database, id: string): Promise<MediaRecord> {
  const found = await findMedia(db, id);
  if (!found) throw notFound("Media", id);
  return found;
}

/** Inserts the row and its event in one batch; the caller has written every object in `versions`. */
const mediaTable = tableStatements(medias);

export async function insertMedia(ctx: WriteContext, media: Media, versions: StoredVersion[], imageFormat: string | null): Promise<string> {
  const etag = newEtagToken();
  await runBatch(ctx.db, [
    mediaTable.insert(ctx.db, {
      id: media.id,
      name: media.name,
      contentType: media.contentType,
      size: media.size,
      checksum: media.checksum,
      declaredType: media.type,
      isImage: media.isImage,
      imageFormat,
      width: media.width,
      height: media.height,
      variants: JSON.stringify(versions),
      recognition: JSON.stringify(media.recognition),
      ownerId: media.owner.id,
      ownerName: media.owner.name,
      etag,
      createdAt: media.createdAt,
      updatedAt: media.createdAt,
      createdBy: ctx.actorId,
    }),
    ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: media.id, action: "created", payload: media }),
  ]);
  return etag;
}

/** Deletes the row (guarded by the ETag read) with its event; returns the versions whose objects to remove. */
export async function deleteMediaRow(ctx: WriteContext, current: MediaRecord): Promise<void> {
  const id = current.media.id;
  const [removed] = await ctx.db.batch([
    mediaTable.delete(ctx.db, { id, etag: current.etag }),
    ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: { id } }, "previousChanged"),
  ]);
  if (removed?.meta.changes !== 1) {
    if (!(await findMedia(ctx.db, id))) throw notFound("Media", id);
    throw preconditionFailed();
  }
}

/** Of `ids`, those that have a media row (chunked: D1 binds at most 100 parameters). */
export async function existingMediaIds(db: Database, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 100) {
    const chunk = ids.slice(i, i + 100);
    const { results } = await db
      .prepare(`SELECT id FROM medias WHERE id IN (${chunk.map((_, j) => `?${j + 1}`).join(", ")})`)
      .bind(...chunk)
      .all<{ id: string }>();
    for (const row of results) found.add(row.id);
  }
  return found;
}

export function forbiddenToDelete(): ApiError {
  return new ApiError("Forbidden", "Only the media's owner or a holder of media_write may delete it.");
}
