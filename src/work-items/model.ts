/** Work items as stored (work_items and their satellite tables) and as the API shows them. */
import type { Database } from "../db/statements";
import { readDesignations } from "../assets/designations";
import { parseJson } from "../pkg/db";
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
