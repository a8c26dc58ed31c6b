/**
 * file_references rows of one owner (a work item, or a work template: a template's references belong
 * to its id, not to one revision, so they are never copied with a revision): list, read one, link,
 * unlink. The owner of file_references: its owners' writes (a work item's instantiation copies a
 * template's, a delete removes an owner's) compose the statements below.
 */
import { tableStatements, type Database } from "../db/statements";
import { fileReferences } from "../db/schema";
import { guardedOutboxStatements } from "../events/outbox";
import { notFound } from "../pkg/errors";
import type { WriteContext } from "../pkg/db";
import type { Viewer } from "../upload/files/access";
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
  kind: "workItem" | "workTemplate";
  /** Trusted SQL, true while the owner whose id is the given parameter (e.g. `?1`) exists. */
  exists: (idParameter: string) => string;
  what: string;
}

export const WORK_ITEM_OWNER: FileReferenceOwner = {
  kind: "workItem",
  exists: (id) => `EXISTS (SELECT 1 FROM work_items WHERE id = ${id})`,
  what: "Work item",
};
export const WORK_TEMPLATE_OWNER: FileReferenceOwner = {
  kind: "workTemplate",
  exists: (id) => `EXISTS (SELECT 1 FROM work_templates WHERE id = ${id} AND is_latest = 1)`,
  what: "Work template",
};

async function assertOwner(db: Database, owner: FileReferenceOwner, ownerId: string): Promise<void> {
  const found = await db
    .prepare(`SELECT ${owner.exists("?1")} AS found`)
    .bind(ownerId)
    .first<{ found: number }>();
  if (!found?.found) throw notFound(owner.what, ownerId);
}

export async function listFileReferences(db: Database, owner: FileReferenceOwner, ownerId: string): Promise<FileReference[]> {
  await assertOwner(db, owner, ownerId);
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 ORDER BY created_at, id`)
    .bind(owner.kind, ownerId)
    .all<FileReferenceRow>();
  return results.map(toFileReference);
}

export async function getFileReference(db: Database, owner: FileReferenceOwner, ownerId: string, id: string): Promise<FileReference> {
  await assertOwner(db, owner, ownerId);
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 AND id = ?3`)
    .bind(owner.kind, ownerId, id)
    .first<FileReferenceRow>();
  if (!row) throw notFound("File reference", id);
  return toFileReference(row);
}

export async function createFileReference(
  ctx: WriteContext,
  viewer: Viewer,
  owner: FileReferenceOwner,
  ownerId: string,
  input: FileReferenceInput,
): Promise<FileReference> {
  await assertOwner(ctx.db, owner, ownerId);
  const checked = await checkFileReference(ctx.db, viewer, input);
  const row: FileReferenceRow = {
    id: ctx.uuid(),
    location: checked.location,
    platform_file_id: checked.platformFileId,
    url: checked.url,
    name: checked.name,
    inherited_from: null,
    created_at: ctx.now,
  };
  const reference = toFileReference(row);
  const [inserted] = await ctx.db.batch([
    // Written only while the owner exists (it may be deleted between the check and this batch).
    ctx.db
      .prepare(
        `INSERT INTO file_references (id, owner_kind, owner_id, location, platform_file_id, url, name, created_at, created_by)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE ${owner.exists("?3")}`,
      )
      .bind(row.id, owner.kind, ownerId, row.location, row.platform_file_id, row.url, row.name, ctx.now, ctx.actorId),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: KIND, entityId: row.id, action: "created", payload: { ...reference, ownerKind: owner.kind, ownerId } },
      "previousChanged",
    ),
  ]);
  if (inserted?.meta.changes !== 1) throw notFound(owner.what, ownerId);
  return reference;
}

const referenceTable = tableStatements(fileReferences);

/** Deletes every file reference of an owner (for the owner's own delete batch). */
export function deleteFileReferencesOfStatement(db: Database, owner: FileReferenceOwner, ownerId: string): D1PreparedStatement {
  return referenceTable.delete(db, { ownerKind: owner.kind, ownerId });
}

/** Inserts references of an owner (a work item's copies of its templates' references), in its caller's batch. */
export function insertFileReferencesStatements(
  db: Database,
  owner: FileReferenceOwner,
  ownerId: string,
  references: readonly {
    id: string;
    location: string;
    platformFileId: string | null;
    url: string | null;
    name: string | null;
    inheritedFrom: string | null;
  }[],
  by: { now: string; actorId: string | null },
): D1PreparedStatement[] {
  return referenceTable.insertMany(
    db,
    references.map((r) => ({ ...r, ownerKind: owner.kind, ownerId, createdAt: by.now, createdBy: by.actorId })),
  );
}

export async function deleteFileReference(ctx: WriteContext, owner: FileReferenceOwner, ownerId: string, id: string): Promise<void> {
  await assertOwner(ctx.db, owner, ownerId);
  const [removed] = await ctx.db.batch([
    ctx.db.prepare("DELETE FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 AND id = ?3").bind(owner.kind, ownerId, id),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: KIND, entityId: id, action: "deleted", payload: { ownerKind: owner.kind, ownerId } },
      "previousChanged",
    ),
  ]);
  if (removed?.meta.changes !== 1) throw notFound("File reference", id);
}
