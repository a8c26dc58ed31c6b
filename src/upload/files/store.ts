/**
 * Files in D1. A row names an R2 object (`r2_key`) and is inserted (or turned `ready`) only after the
 * object exists, so a client never sees a row without its bytes; objects without a ready row are
 * removed by the cleanup (../cleanup.ts).
 */
import { tableStatements } from "../../db/statements";
import { files } from "../../db/schema";
import type { Database } from "../../db/statements";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { ApiError, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { newEtagToken, type WriteContext } from "../../pkg/db";
import { isPersonal, maySee, type Viewer } from "./access";
import type { FileDefinition, FileStatus, ObjectType } from "./schema";
import { assertVersion, commitVersioned, retryWrite } from "../../pkg/resource";

export interface FileRow {
  id: string;
  name: string;
  data_type_id: string;
  data_type_name: string;
  size: number;
  content_type: string;
  checksum: string | null;
  r2_key: string;
  state: string;
  status: string;
  owner_id: string;
  owner_name: string | null;
  object_type: string | null;
  object_id: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
}

export const KIND = "file";

export const SELECT_COLUMNS =
  "f.id, f.name, f.data_type_id, dt.name AS data_type_name, f.size, f.content_type, f.checksum, f.r2_key, f.state, f.status, " +
  "f.owner_id, f.owner_name, f.object_type, f.object_id, f.etag, f.created_at, f.updated_at, f.created_by";
export const JOINS = ["JOIN data_types dt ON dt.id = f.data_type_id"] as const;

export interface StoredFile {
  value: FileDefinition;
  etag: string;
  row: FileRow;
}

export function toFile(row: FileRow): StoredFile {
  return {
    value: {
      id: row.id,
      name: row.name,
      dataType: { id: row.data_type_id, name: row.data_type_name },
      size: row.size,
      contentType: row.content_type,
      checksum: row.checksum ?? "",
      objectOwner: { id: row.owner_id, name: row.owner_name },
      status: row.status as FileStatus,
      metadata: row.object_type ? { objectType: row.object_type as ObjectType, objectId: row.object_id ?? "" } : null,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: row.etag,
    row,
  };
}

const accessFacts = (row: FileRow) => ({
  state: row.state,
  ownerId: row.owner_id,
  createdBy: row.created_by,
  objectType: row.object_type,
  objectId: row.object_id,
});

/** The row in any state, without an access check (uploads and the cleanup use it). */
export async function findFileRow(db: Database, id: string): Promise<FileRow | null> {
  return db
    .prepare(`SELECT ${SELECT_COLUMNS} FROM files f ${JOINS.join(" ")} WHERE f.id = ?1`)
    .bind(id)
    .first<FileRow>();
}

/** A file the viewer may see, or 404. */
export async function getVisibleFile(db: Database, viewer: Viewer, id: string): Promise<StoredFile> {
  const row = await findFileRow(db, id);
  if (!row || !maySee(viewer, accessFacts(row))) throw notFound("File", id);
  return toFile(row);
}

export interface NewFile {
  id: string;
  name: string;
  dataType: { id: string; name: string };
  size: number;
  contentType: string;
  checksum: string;
  r2Key: string;
  owner: { id: string; name: string | null };
}

/** Inserts a ready file (its object already stored) with its created event, in one batch. */
export async function insertReadyFile(ctx: WriteContext, file: NewFile): Promise<StoredFile> {
  const etag = newEtagToken();
  const row: FileRow = {
    id: file.id,
    name: file.name,
    data_type_id: file.dataType.id,
    data_type_name: file.dataType.name,
    size: file.size,
    content_type: file.contentType,
    checksum: file.checksum,
    r2_key: file.r2Key,
    state: "ready",
    status: "none",
    owner_id: file.owner.id,
    owner_name: file.owner.name,
    object_type: null,
    object_id: null,
    etag,
    created_at: ctx.now,
    updated_at: ctx.now,
    created_by: ctx.actorId,
  };
  const stored = toFile(row);
  await ctx.db.batch([
    insertFileStatement(ctx.db, row),
    ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: row.id, action: "created", payload: stored.value, etag: stored.etag }),
  ]);
  return stored;
}

/** A guarded update of one visible file: If-Match, then `UPDATE ... WHERE etag = <read>` with its event. */
async function updateFile(
  ctx: WriteContext,
  current: StoredFile,
  set: { sql: string; values: unknown[] },
  next: FileRow,
): Promise<StoredFile> {
  assertVersion(ctx, current.etag);
  const etag = newEtagToken();
  const updated = toFile({ ...next, etag, updated_at: ctx.now });
  const n = set.values.length;
  await commitVersioned(ctx, [
    ctx.db
      .prepare(
        `UPDATE files SET ${set.sql}, etag = ?${n + 1}, updated_at = ?${n + 2} WHERE id = ?${n + 3} AND etag = ` +
          `?${n + 4} AND state = 'ready'`,
      )
      .bind(...set.values, etag, ctx.now, current.value.id, current.etag),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: KIND, entityId: current.value.id, action: "updated", payload: updated.value, etag: updated.etag },
      { table: "files", etag },
    ),
  ]);
  return updated;
}

export async function setFileStatus(ctx: WriteContext, viewer: Viewer, id: string, status: FileStatus): Promise<StoredFile> {
  return retryWrite(ctx, async () => {
    const current = await getVisibleFile(ctx.db, viewer, id);
    return updateFile(ctx, current, { sql: "status = ?1", values: [status] }, { ...current.row, status });
  });
}

export async function setFileMetadata(
  ctx: WriteContext,
  viewer: Viewer,
  id: string,
  metadata: { objectType: ObjectType; objectId: string },
): Promise<StoredFile> {
  return retryWrite(ctx, async () => {
    const row = await findFileRow(ctx.db, id);
    // The spec: metadata "can be set only after the file has been posted". Its uploader learns the id
    // when the upload starts, so for them an unfinished upload is a 409, for anyone else a 404.
    if (row && row.state !== "ready" && isPersonal(viewer, { ownerId: row.owner_id, createdBy: row.created_by })) {
      throw new ApiError("Conflict", `File ${id} is still being uploaded; metadata can be set once its upload is completed.`);
    }
    const current = await getVisibleFile(ctx.db, viewer, id);
    if (!isPersonal(viewer, { ownerId: current.row.owner_id, createdBy: current.row.created_by })) {
      throw new ApiError("Forbidden", "Only the file's owner or its uploader may set its metadata (it decides who may see the file).");
    }
    return updateFile(
      ctx,
      current,
      { sql: "object_type = ?1, object_id = ?2", values: [metadata.objectType, metadata.objectId] },
      { ...current.row, object_type: metadata.objectType, object_id: metadata.objectId },
    );
  });
}

/**
 * Deletes the row (with its event), then the object. A failure between the two leaves an object
 * without a row, which is invisible and removed by the orphan sweep; never the other way round.
 */
export async function deleteFile(ctx: WriteContext, bucket: R2Bucket, viewer: Viewer, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getVisibleFile(ctx.db, viewer, id);
    assertVersion(ctx, current.etag);
    const [removed] = await ctx.db.batch([
      ctx.db.prepare("DELETE FROM files WHERE id = ?1 AND etag = ?2").bind(id, current.etag),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1) throw preconditionFailed();
    await bucket.delete(current.row.r2_key).catch(() => undefined);
  });
}

// --- Statements ------------------------------------------------------------------------------------

const fileTable = tableStatements(files);

/** Inserts a file row (a ready file, or the invisible row of an upload in progress). */
export function insertFileStatement(db: Database, row: Omit<FileRow, "data_type_name">): D1PreparedStatement {
  return fileTable.insert(db, {
    id: row.id,
    name: row.name,
    dataTypeId: row.data_type_id,
    size: row.size,
    contentType: row.content_type,
    checksum: row.checksum,
    r2Key: row.r2_key,
    state: row.state,
    status: row.status,
    ownerId: row.owner_id,
    ownerName: row.owner_name,
    objectType: row.object_type,
    objectId: row.object_id,
    etag: row.etag,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy: row.created_by,
  });
}

/** Makes an upload's file ready (visible) with its size, checksum and version; no change when another completion did. */
export function markFileReadyStatement(
  db: Database,
  fileId: string,
  ready: { size: number; checksum: string; etag: string; now: string },
): D1PreparedStatement {
  return fileTable.update(
    db,
    { state: "ready", size: ready.size, checksum: ready.checksum, etag: ready.etag, createdAt: ready.now, updatedAt: ready.now },
    { id: fileId, state: "uploading" },
  );
}

/** Deletes the invisible file row of an upload that never completed (a ready file stays). */
export function deleteUploadingFileStatement(db: Database, fileId: string): D1PreparedStatement {
  return fileTable.delete(db, { id: fileId, state: "uploading" });
}
