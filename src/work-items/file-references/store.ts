/** file_references rows of one owner kind (work items here): list, read one, link, unlink. */
import { guardedOutboxStatement } from "../../events/outbox";
import { notFound } from "../../pkg/errors";
import type { WriteContext } from "../../pkg/db";
import type { FileReference, FileReferenceInput } from "./schema";
import { checkFileReference } from "./validate";

interface FileReferenceRow {
  id: string;
  location: string;
  platform_file_id: string | null;
  url: string | null;
  name: string | null;
  inherited_from: string | null;
  created_at: string;
}

const COLUMNS = "id, location, platform_file_id, url, name, inherited_from, created_at";
const KIND = "fileReference";

function toFileReference(row: FileReferenceRow): FileReference {
  return {
    id: row.id,
    location: row.location as FileReference["location"],
    platformFile: row.platform_file_id === null ? null : { id: row.platform_file_id },
    url: row.url,
    name: row.name,
    inheritedFrom: row.inherited_from,
    createdAt: row.created_at,
  };
}

/** Where an owner lives, so a missing owner is a 404 and a link is only written while it exists. */
export interface FileReferenceOwner {
  kind: "workItem";
  table: "work_items";
  what: string;
}

export const WORK_ITEM_OWNER: FileReferenceOwner = { kind: "workItem", table: "work_items", what: "Work item" };

async function assertOwner(db: D1Database, owner: FileReferenceOwner, ownerId: string): Promise<void> {
  const found = await db.prepare(`SELECT 1 AS found FROM ${owner.table} WHERE id = ?1`).bind(ownerId).first();
  if (!found) throw notFound(owner.what, ownerId);
}

export async function listFileReferences(db: D1Database, owner: FileReferenceOwner, ownerId: string): Promise<FileReference[]> {
  await assertOwner(db, owner, ownerId);
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 ORDER BY created_at, id`)
    .bind(owner.kind, ownerId)
    .all<FileReferenceRow>();
  return results.map(toFileReference);
}

export async function getFileReference(db: D1Database, owner: FileReferenceOwner, ownerId: string, id: string): Promise<FileReference> {
  await assertOwner(db, owner, ownerId);
  const row = await db.prepare(`SELECT ${COLUMNS} FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 AND id = ?3`).bind(owner.kind, ownerId, id).first<FileReferenceRow>();
  if (!row) throw notFound("File reference", id);
  return toFileReference(row);
}

export async function createFileReference(ctx: WriteContext, owner: FileReferenceOwner, ownerId: string, input: FileReferenceInput): Promise<FileReference> {
  await assertOwner(ctx.db, owner, ownerId);
  const checked = await checkFileReference(ctx.db, input);
  const row: FileReferenceRow = { id: ctx.uuid(), location: checked.location, platform_file_id: checked.platformFileId, url: checked.url, name: checked.name, inherited_from: null, created_at: ctx.now };
  const reference = toFileReference(row);
  const [inserted] = await ctx.db.batch([
    // Written only while the owner exists (it may be deleted between the check and this batch).
    ctx.db
      .prepare(
        `INSERT INTO file_references (id, owner_kind, owner_id, location, platform_file_id, url, name, created_at, created_by)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE EXISTS (SELECT 1 FROM ${owner.table} WHERE id = ?3)`,
      )
      .bind(row.id, owner.kind, ownerId, row.location, row.platform_file_id, row.url, row.name, ctx.now, ctx.actorId),
    guardedOutboxStatement(ctx.db, ctx, { entityKind: KIND, entityId: row.id, action: "created", payload: { ...reference, ownerKind: owner.kind, ownerId } }, "previousChanged"),
  ]);
  if (inserted?.meta.changes !== 1) throw notFound(owner.what, ownerId);
  return reference;
}

export async function deleteFileReference(ctx: WriteContext, owner: FileReferenceOwner, ownerId: string, id: string): Promise<void> {
  await assertOwner(ctx.db, owner, ownerId);
  const [removed] = await ctx.db.batch([
    ctx.db.prepare("DELETE FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 AND id = ?3").bind(owner.kind, ownerId, id),
    guardedOutboxStatement(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: { ownerKind: owner.kind, ownerId } }, "previousChanged"),
  ]);
  if (removed?.meta.changes !== 1) throw notFound("File reference", id);
}
