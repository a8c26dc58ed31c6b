/**
 * Resumable uploads in D1. Starting one inserts the file row in state `uploading` (invisible to
 * every read) and a file_uploads row; parts are recorded in upload_parts; completion turns the file
 * `ready` with its created event in one batch. The upload row stays until it expires, so a repeated
 * completion finds the same file.
 */
import { tableStatements, type Database } from "../../db/statements";
import { fileUploads, uploadParts } from "../../db/schema";
import { guardedOutboxStatements } from "../../events/outbox";
import { newEtagToken, type WriteContext } from "../../pkg/db";
import {
  deleteUploadingFileStatement,
  insertFileStatement,
  JOINS,
  markFileReadyStatement,
  SELECT_COLUMNS,
  toFile,
  type FileRow,
  type StoredFile,
} from "../files/store";

const uploadTable = tableStatements(fileUploads);
const partTable = tableStatements(uploadParts);

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
  // Only its starter may send its parts (every upload route is authenticated, so there is one).
  if (ctx.actorId === null) throw new Error("an upload is started by an authenticated caller");
  await ctx.db.batch([
    insertFileStatement(ctx.db, {
      id: upload.fileId,
      name: upload.name,
      data_type_id: upload.dataTypeId,
      // 0 stands for "not declared": a multipart upload has at least one byte.
      size: upload.declaredSize ?? 0,
      content_type: upload.contentType,
      checksum: null,
      r2_key: upload.r2Key,
      state: "uploading",
      status: "none",
      owner_id: upload.owner.id,
      owner_name: upload.owner.name,
      object_type: null,
      object_id: null,
      etag: newEtagToken(),
      created_at: ctx.now,
      updated_at: ctx.now,
      created_by: ctx.actorId,
    }),
    uploadTable.insert(ctx.db, {
      id: upload.uploadId,
      fileId: upload.fileId,
      r2UploadId: upload.r2UploadId,
      r2Key: upload.r2Key,
      partSize: upload.partSize,
      ownerId: ctx.actorId,
      createdAt: ctx.now,
      expiresAt: upload.expiresAt,
    }),
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
    markFileReadyStatement(ctx.db, file.id, { size: stored.size, checksum: stored.checksum, etag, now: ctx.now }),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: "file", entityId: file.id, action: "created", payload: ready.value, etag: ready.etag },
      { table: "files", etag },
    ),
    partTable.delete(ctx.db, { uploadId: upload.id }),
    uploadTable.update(ctx.db, { expiresAt: keepUntil }, { id: upload.id }),
  ]);
  return update?.meta.changes === 1 ? ready : null;
}

/** Removes an unfinished upload: its parts, the upload row and the invisible file row. */
export async function removeUpload(db: Database, upload: UploadRow): Promise<void> {
  await db.batch(removeUploadStatements(db, upload, { withFile: true }));
}

/**
 * The statements that remove an upload's parts and row, and with `withFile` the invisible file row of
 * an upload that never completed (the cleanup composes them for expired uploads).
 */
export function removeUploadStatements(
  db: Database,
  upload: Pick<UploadRow, "id" | "file_id">,
  options: { withFile: boolean },
): D1PreparedStatement[] {
  return [
    partTable.delete(db, { uploadId: upload.id }),
    uploadTable.delete(db, { id: upload.id }),
    ...(options.withFile ? [deleteUploadingFileStatement(db, upload.file_id)] : []),
  ];
}
