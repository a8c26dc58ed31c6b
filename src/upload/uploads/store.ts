/**
 * Resumable uploads in D1. Starting one inserts the file row in state `uploading` (invisible to
 * every read) and a file_uploads row; parts are recorded in upload_parts; completion turns the file
 * `ready` with its created event in one batch. The upload row stays until it expires, so a repeated
 * completion finds the same file.
 */
import type { Database } from "../../db/statements";
import { guardedOutboxStatement } from "../../events/outbox";
import { newEtagToken, type WriteContext } from "../../pkg/db";
import { JOINS, SELECT_COLUMNS, toFile, type FileRow, type StoredFile } from "../files/store";

export interface UploadRow {
  id: string;
  file_id: string;
  r2_upload_id: string;
  r2_key: string;
  part_size: number;
  owner_id: string;
  created_at: string;
  expires_at: string;
}

export interface PartRow {
  part_number: number;
  etag: string;
  size: number;
  /** SHA-256 (hex) of the part, taken while it streamed to R2; null for parts recorded before that. */
  checksum: string | null;
  uploaded_at: string;
}

/** An upload with its file row (in any state); null when either is gone. */
export async function findUpload(db: Database, id: string): Promise<{ upload: UploadRow; file: FileRow } | null> {
  const upload = await db.prepare("SELECT * FROM file_uploads WHERE id = ?1").bind(id).first<UploadRow>();
  if (!upload) return null;
  const file = await db
    .prepare(`SELECT ${SELECT_COLUMNS} FROM files f ${JOINS.join(" ")} WHERE f.id = ?1`)
    .bind(upload.file_id)
    .first<FileRow>();
  return file ? { upload, file } : null;
}

export async function listParts(db: Database, uploadId: string): Promise<PartRow[]> {
  const { results } = await db
    .prepare("SELECT part_number, etag, size, checksum, uploaded_at FROM upload_parts WHERE upload_id = ?1 ORDER BY part_number")
    .bind(uploadId)
    .all<PartRow>();
  return results;
}

export interface NewUpload {
  uploadId: string;
  fileId: string;
  r2UploadId: string;
  r2Key: string;
  partSize: number;
  name: string;
  dataTypeId: string;
  declaredSize: number | null;
  contentType: string;
  owner: { id: string; name: string | null };
  expiresAt: string;
}

/** The invisible file row and the upload row, in one batch. No event: nothing is visible yet. */
export async function insertUpload(ctx: WriteContext, upload: NewUpload): Promise<void> {
  await ctx.db.batch([
    ctx.db
      .prepare(
        `INSERT INTO files (id, name, data_type_id, size, content_type, checksum, r2_key, state, status, owner_id, owner_name,
        etag, created_at, updated_at, created_by)
         VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, 'uploading', 'none', ?7, ?8, ?9, ?10, ?10, ?11)`,
      )
      .bind(
        upload.fileId,
        upload.name,
        upload.dataTypeId,
        // 0 stands for "not declared": a multipart upload has at least one byte.
        upload.declaredSize ?? 0,
        upload.contentType,
        upload.r2Key,
        upload.owner.id,
        upload.owner.name,
        newEtagToken(),
        ctx.now,
        ctx.actorId,
      ),
    ctx.db
      .prepare(
        "INSERT INTO file_uploads (id, file_id, r2_upload_id, r2_key, part_size, owner_id, created_at, expires_at) " +
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
      )
      .bind(upload.uploadId, upload.fileId, upload.r2UploadId, upload.r2Key, upload.partSize, ctx.actorId, ctx.now, upload.expiresAt),
  ]);
}

/** Records a part (a re-sent part replaces the earlier one) and extends the upload's life. */
export async function recordPart(
  db: Database,
  uploadId: string,
  part: { partNumber: number; etag: string; size: number; checksum: string },
  now: string,
  expiresAt: string,
) {
  await db.batch([
    db
      .prepare(
        `INSERT INTO upload_parts (upload_id, part_number, etag, size, checksum, uploaded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (upload_id, part_number) DO UPDATE SET etag = excluded.etag, size = excluded.size, checksum =
         excluded.checksum, uploaded_at = excluded.uploaded_at`,
      )
      .bind(uploadId, part.partNumber, part.etag, part.size, part.checksum, now),
    db.prepare("UPDATE file_uploads SET expires_at = max(expires_at, ?2) WHERE id = ?1").bind(uploadId, expiresAt),
  ]);
}

/**
 * Turns the file ready (its object now complete in R2) with its created event, drops the parts and
 * keeps the upload row until `keepUntil` for repeated completions. Returns null when another
 * completion got there first.
 */
export async function markCompleted(
  ctx: WriteContext,
  upload: UploadRow,
  file: FileRow,
  stored: { size: number; checksum: string },
  keepUntil: string,
): Promise<StoredFile | null> {
  const etag = newEtagToken();
  const ready = toFile({
    ...file,
    state: "ready",
    size: stored.size,
    checksum: stored.checksum,
    etag,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  const [update] = await ctx.db.batch([
    ctx.db
      .prepare(
        "UPDATE files SET state = 'ready', size = ?1, checksum = ?2, etag = ?3, created_at = ?4, updated_at = ?4 WHERE " +
          "id = ?5 AND state = 'uploading'",
      )
      .bind(stored.size, stored.checksum, etag, ctx.now, file.id),
    guardedOutboxStatement(
      ctx.db,
      ctx,
      { entityKind: "file", entityId: file.id, action: "created", payload: ready.value },
      { table: "files", etag },
    ),
    ctx.db.prepare("DELETE FROM upload_parts WHERE upload_id = ?1").bind(upload.id),
    ctx.db.prepare("UPDATE file_uploads SET expires_at = ?2 WHERE id = ?1").bind(upload.id, keepUntil),
  ]);
  return update?.meta.changes === 1 ? ready : null;
}

/** Removes an unfinished upload: its parts, the upload row and the invisible file row. */
export async function removeUpload(db: Database, upload: UploadRow): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM upload_parts WHERE upload_id = ?1").bind(upload.id),
    db.prepare("DELETE FROM file_uploads WHERE id = ?1").bind(upload.id),
    db.prepare("DELETE FROM files WHERE id = ?1 AND state = 'uploading'").bind(upload.file_id),
  ]);
}
