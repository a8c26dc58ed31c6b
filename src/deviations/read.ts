/**
 * Reading deviations: rows plus their type name, asset reference, linked properties, relationships
 * and work item links, hydrated for a whole page in one round of parallel reads.
 */
import { readDesignations, type AssetRef } from "../assets/designations";
import { notFound } from "../pkg/errors";
import { parseJson } from "../pkg/db";
import type { Versioned } from "../pkg/resource";
import type { LinkedProperty } from "../properties/values";
import { toAssetReference } from "./asset-reference";
import { readLinkedProperties } from "./linked-properties";
import { INSPECTION_ORIGIN, type Deviation, type DeviationOrigin } from "./schema";

export const DEVIATION_KIND = "deviation";
/** The rule of the definitions a deviation's properties use. */
export const DEVIATION_RULE = "Deviation";

export interface DeviationRow {
  id: string;
  reference_id: string;
  description: string | null;
  status: string;
  type_id: string;
  owner_id: string;
  owner_name: string | null;
  risk_id: string | null;
  risk_name: string | null;
  metadata: string | null;
  /** JSON of a monitoring origin; NULL for a deviation made through the API. */
  origin: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

export const DEVIATION_COLUMNS = "id, reference_id, description, status, type_id, owner_id, owner_name, risk_id, risk_name, metadata, origin, etag, created_at, updated_at";

export interface Relationship {
  id: string;
  referenceId: string;
}

/** Everything a deviation shows besides its own row. */
export interface DeviationParts {
  typeName: string;
  assets: readonly AssetRef[];
  properties: LinkedProperty[];
  relationships: Relationship[];
  workItemIds: string[];
}

/** Binary order by referenceId then id: the order relationships are always shown in. */
export function sortRelationships(list: Relationship[]): Relationship[] {
  const key = (r: Relationship) => `${r.referenceId}\u0000${r.id}`;
  return list.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * The API shape and its ETag. The ETag hashes the row's token with the whole representation, so
 * it also changes when something the deviation shows changes elsewhere (a renamed type or asset).
 */
export async function composeDeviation(row: DeviationRow, parts: DeviationParts): Promise<Versioned<Deviation>> {
  const value: Deviation = {
    id: row.id,
    referenceId: row.reference_id,
    description: row.description,
    status: row.status,
    type: { id: row.type_id, name: parts.typeName },
    objectOwner: { id: row.owner_id, name: row.owner_name },
    risk: row.risk_id === null ? null : { id: row.risk_id, name: row.risk_name },
    assetReference: toAssetReference(parts.assets),
    properties: parts.properties,
    relationships: parts.relationships,
    workItemIds: parts.workItemIds,
    metadata: parseJson<Record<string, unknown>>(row.metadata),
    origin: parseJson<DeviationOrigin>(row.origin) ?? INSPECTION_ORIGIN,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${row.etag}|${JSON.stringify(value)}`));
  const etag = [...new Uint8Array(digest).slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { value, etag };
}

/** Hydrates rows (in their order). */
export async function hydrateDeviations(db: D1Database, rows: readonly DeviationRow[]): Promise<Versioned<Deviation>[]> {
  if (rows.length === 0) return [];
  const ids = JSON.stringify(rows.map((r) => r.id));
  const typeIds = JSON.stringify([...new Set(rows.map((r) => r.type_id))]);
  const [types, relationships, links] = await db.batch<Record<string, string>>([
    db.prepare("SELECT id, name FROM entity_types WHERE id IN (SELECT value FROM json_each(?1))").bind(typeIds),
    db
      .prepare(
        `SELECT r.deviation_id, r.related_id, d.reference_id FROM deviation_relationships r JOIN deviations d ON d.id = r.related_id
          WHERE r.deviation_id IN (SELECT value FROM json_each(?1))`,
      )
      .bind(ids),
    db.prepare("SELECT deviation_id, work_item_id FROM deviation_work_items WHERE deviation_id IN (SELECT value FROM json_each(?1)) ORDER BY work_item_id").bind(ids),
  ]);
  const [designations, properties] = await Promise.all([
    readDesignations(
      db,
      DEVIATION_KIND,
      rows.map((r) => r.id),
    ),
    readLinkedProperties(
      db,
      DEVIATION_KIND,
      DEVIATION_RULE,
      rows.map((r) => ({ id: r.id, typeId: r.type_id })),
    ),
  ]);
  const typeNames = new Map((types?.results ?? []).map((t) => [t.id!, t.name!]));
  const related = new Map<string, Relationship[]>();
  for (const r of relationships?.results ?? []) {
    const list = related.get(r.deviation_id!) ?? [];
    list.push({ id: r.related_id!, referenceId: r.reference_id! });
    related.set(r.deviation_id!, list);
  }
  const workItems = new Map<string, string[]>();
  for (const l of links?.results ?? []) workItems.set(l.deviation_id!, [...(workItems.get(l.deviation_id!) ?? []), l.work_item_id!]);
  return Promise.all(
    rows.map((row) =>
      composeDeviation(row, {
        typeName: typeNames.get(row.type_id) ?? "",
        assets: designations.get(row.id) ?? [],
        properties: properties.get(row.id) ?? [],
        relationships: sortRelationships(related.get(row.id) ?? []),
        workItemIds: workItems.get(row.id) ?? [],
      }),
    ),
  );
}

export async function findDeviationRow(db: D1Database, id: string): Promise<DeviationRow | null> {
  return db.prepare(`SELECT ${DEVIATION_COLUMNS} FROM deviations WHERE id = ?1`).bind(id.toLowerCase()).first<DeviationRow>();
}

export async function getDeviation(db: D1Database, id: string): Promise<Versioned<Deviation>> {
  const row = await findDeviationRow(db, id);
  if (!row) throw notFound("Deviation", id);
  const [found] = await hydrateDeviations(db, [row]);
  return found!;
}

/** A row with its representation, for writes that check If-Match against what the client read. */
export async function readForWrite(db: D1Database, id: string): Promise<{ row: DeviationRow; current: Versioned<Deviation> }> {
  const row = await findDeviationRow(db, id);
  if (!row) throw notFound("Deviation", id);
  const [current] = await hydrateDeviations(db, [row]);
  return { row, current: current! };
}
