/**
 * Work items as stored: the owner of work_items, work_item_templates (basedOn) and
 * work_item_activity_templates (the activity template revisions a work item used first). It reads
 * them, maps rows to what the API shows, and builds the statements others compose into their own
 * batches (write.ts, instantiate.ts, activities, deviation links, the monitoring loop).
 */
import { tableStatements, type Database, type Insert } from "../db/statements";
import { workItemActivityTemplates, workItems, workItemTemplates } from "../db/schema";
import { readDesignations } from "../assets/designations";
import { parseJson } from "../pkg/db";
import { notFound } from "../pkg/errors";
import type { Versioned } from "../pkg/resource";
import { readPropertyValues } from "../properties/values";
import type { WorkItem } from "./schema";

export interface WorkItemRow {
  id: string;
  display_name: string;
  reference_id: string | null;
  status: string;
  due_date: string | null;
  type_id: string;
  owner_id: string;
  owner_name: string | null;
  tags: string;
  metadata: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

export const WORK_ITEM_COLUMNS =
  "id, display_name, reference_id, status, due_date, type_id, owner_id, owner_name, tags, metadata, etag, created_at, updated_at";
export const KIND = "workItem";

export async function findWorkItemRow(db: Database, id: string): Promise<WorkItemRow | null> {
  return db.prepare(`SELECT ${WORK_ITEM_COLUMNS} FROM work_items WHERE id = ?1`).bind(id).first<WorkItemRow>();
}

/** The work items of the rows, with properties, designations, basedOn and deviation links, in the rows' order. */
export async function toWorkItems(db: Database, rows: readonly WorkItemRow[]): Promise<WorkItem[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const json = JSON.stringify(ids);
  const [properties, designations, links] = await Promise.all([
    readPropertyValues(db, KIND, ids),
    readDesignations(db, KIND, ids),
    db.batch<{ owner: string; id: string; revision: number | null }>([
      db
        .prepare(
          "SELECT work_item_id AS owner, work_template_id AS id, work_template_revision AS revision FROM " +
            "work_item_templates WHERE work_item_id IN (SELECT value FROM json_each(?1)) ORDER BY work_item_id, position",
        )
        .bind(json),
      db
        .prepare(
          "SELECT work_item_id AS owner, deviation_id AS id, NULL AS revision FROM deviation_work_items WHERE " +
            "work_item_id IN (SELECT value FROM json_each(?1)) ORDER BY work_item_id, created_at, deviation_id",
        )
        .bind(json),
    ]),
  ]);
  const group = (result: D1Result<{ owner: string; id: string; revision: number | null }> | undefined) => {
    const map = new Map<string, { id: string; revision: number | null }[]>();
    for (const r of result?.results ?? []) map.set(r.owner, [...(map.get(r.owner) ?? []), { id: r.id, revision: r.revision }]);
    return map;
  };
  const basedOn = group(links[0]);
  const deviations = group(links[1]);
  return rows.map((row) => ({
    id: row.id,
    displayName: row.display_name,
    referenceId: row.reference_id,
    status: row.status,
    dueDate: row.due_date,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    typeId: row.type_id,
    tags: JSON.parse(row.tags) as string[],
    properties: properties.get(row.id) ?? [],
    basedOn: (basedOn.get(row.id) ?? []).map((b) => ({ id: b.id, revision: b.revision ?? 0 })),
    designations: designations.get(row.id) ?? [],
    deviationIds: (deviations.get(row.id) ?? []).map((d) => d.id),
    metadata: parseJson<Record<string, unknown>>(row.metadata),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}

export async function toWorkItem(db: Database, row: WorkItemRow): Promise<WorkItem> {
  return (await toWorkItems(db, [row]))[0]!;
}

export async function getWorkItem(db: Database, id: string): Promise<Versioned<WorkItem>> {
  const row = await findWorkItemRow(db, id);
  if (!row) throw notFound("Work item", id);
  return { value: await toWorkItem(db, row), etag: row.etag };
}

/** 404 unless the work item exists (one indexed read, for routes that list what belongs to it). */
export async function assertWorkItemExists(db: Database, id: string): Promise<void> {
  const exists = await db.prepare("SELECT 1 AS found FROM work_items WHERE id = ?1").bind(id).first();
  if (!exists) throw notFound("Work item", id);
}

// --- Statements ------------------------------------------------------------------------------------

const workItemTable = tableStatements(workItems);
const basedOnTable = tableStatements(workItemTemplates);
const usedRevisionTable = tableStatements(workItemActivityTemplates);

/** A work item's row as written. */
export type WorkItemValues = Insert<typeof workItems>;

/** The values of a row as read (its author, on a create). */
export function workItemValues(row: WorkItemRow, createdBy: string | null): WorkItemValues {
  return {
    id: row.id,
    displayName: row.display_name,
    referenceId: row.reference_id,
    status: row.status,
    dueDate: row.due_date,
    typeId: row.type_id,
    ownerId: row.owner_id,
    ownerName: row.owner_name,
    tags: row.tags,
    metadata: row.metadata,
    etag: row.etag,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy,
  };
}

export function insertWorkItemStatement(db: Database, row: WorkItemRow, createdBy: string | null): D1PreparedStatement {
  return workItemTable.insert(db, workItemValues(row, createdBy));
}

/** Replaces the work item's own fields (its batch asserts the version read first). */
export function updateWorkItemStatement(db: Database, row: WorkItemRow): D1PreparedStatement {
  const { id, createdAt: _createdAt, createdBy: _createdBy, ...changed } = workItemValues(row, null);
  return workItemTable.update(db, changed, { id });
}

/** Deletes the work item's row with its basedOn and used-revision rows (what else belongs to it, its owners delete). */
export function deleteWorkItemStatements(db: Database, id: string): D1PreparedStatement[] {
  return [basedOnTable.delete(db, { workItemId: id }), usedRevisionTable.delete(db, { workItemId: id }), workItemTable.delete(db, { id })];
}

/**
 * A new version (etag) for the work items `where` selects (trusted SQL over the work item as
 * `work_items`, binding its own values): their representation shows something another table
 * changed, such as a deviation link. `onlyIfChanged`: only when the statement before it changed a row.
 */
export function newWorkItemVersionsStatement(
  db: Database,
  where: { sql: string; bindings: readonly unknown[] },
  etag: string,
  onlyIfChanged = false,
): D1PreparedStatement {
  const n = where.bindings.length;
  return db
    .prepare(`UPDATE work_items SET etag = ?${n + 1} WHERE (${where.sql})${onlyIfChanged ? " AND changes() > 0" : ""}`)
    .bind(...where.bindings, etag);
}

/** The work templates a work item is based on, at positions from `first`. */
export function basedOnStatements(
  db: Database,
  workItemId: string,
  basedOn: readonly { id: string; revision: number }[],
  first: number,
  now: string,
): D1PreparedStatement[] {
  return basedOnTable.insertMany(
    db,
    basedOn.map((b, i) => ({ workItemId, workTemplateId: b.id, workTemplateRevision: b.revision, position: first + i, createdAt: now })),
  );
}

/**
 * The activity template revisions a work item uses from now on. A plain INSERT: a first use recorded
 * meanwhile by another request fails the batch, which is then retried (write.ts).
 */
export function firstUseStatements(
  db: Database,
  workItemId: string,
  uses: readonly { id: string; revision: number }[],
  now: string,
): D1PreparedStatement[] {
  return usedRevisionTable.insertMany(
    db,
    uses.map((u) => ({ workItemId, activityTemplateId: u.id, activityTemplateRevision: u.revision, createdAt: now })),
  );
}
