/**
 * Reading deviations: rows plus their type name, asset reference, linked properties, relationships
 * and work item links. A page is hydrated in one batch; a single read is one statement with its
 * parts as columns, so each costs one D1 round trip (test/contract/read-round-trips.test.ts).
 */
import type { Database } from "../db/statements";
import {
  designationsFrom,
  designationsFromJson,
  designationsJsonColumn,
  designationsStatement,
  type AssetRef,
} from "../assets/designations";
import { notFound } from "../pkg/errors";
import { parseJson } from "../pkg/db";
import type { Versioned } from "../pkg/resource";
import type { LinkedProperty } from "../properties/values";
import { toAssetReference } from "./asset-reference";
import {
  linkedPropertiesFrom,
  linkedPropertiesFromJson,
  linkedPropertiesJsonColumns,
  linkedPropertiesStatements,
} from "./linked-properties";
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

export const DEVIATION_COLUMNS =
  "id, reference_id, description, status, type_id, owner_id, owner_name, risk_id, risk_name, metadata, origin, " +
  "etag, created_at, updated_at";

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

/**
 * The statements that read everything a set of deviations shows besides their rows, all keyed by the
 * deviations' ids, for ONE batch: the type names, relationships, work item links, designations, the
 * linked definitions of the types and the stored values. With `typeIds` the type-dependent
 * statements take those ids; without, they read each deviation's type from its row inside the same
 * statement (a read whose row is fetched in the same batch). Results go to {@link partsFrom}.
 */
function partsStatements(db: Database, ids: readonly string[], typeIds: readonly string[] | undefined): D1PreparedStatement[] {
  const idList = JSON.stringify(ids);
  const types =
    typeIds === undefined
      ? db
          .prepare(
            "SELECT id, name FROM entity_types WHERE id IN (SELECT type_id FROM deviations WHERE id IN (SELECT value FROM json_each(?1)))",
          )
          .bind(idList)
      : db.prepare("SELECT id, name FROM entity_types WHERE id IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(typeIds));
  return [
    types,
    db
      .prepare(
        `SELECT r.deviation_id, r.related_id, d.reference_id FROM deviation_relationships r JOIN deviations d ON d.id = r.related_id
          WHERE r.deviation_id IN (SELECT value FROM json_each(?1))`,
      )
      .bind(idList),
    db
      .prepare(
        "SELECT deviation_id, work_item_id FROM deviation_work_items WHERE deviation_id IN (SELECT value FROM " +
          "json_each(?1)) ORDER BY work_item_id",
      )
      .bind(idList),
    designationsStatement(db, DEVIATION_KIND, ids),
    ...linkedPropertiesStatements(
      db,
      DEVIATION_KIND,
      DEVIATION_RULE,
      ids,
      typeIds === undefined ? { typesOf: { table: "deviations", typeColumn: "type_id" } } : { typeIds },
    ),
  ];
}

/** Each row's parts (in the rows' order) from the results of {@link partsStatements}. */
function partsFrom(rows: readonly DeviationRow[], results: readonly D1Result<unknown>[]): DeviationParts[] {
  const [types, relationships, links, designationResult, ...linkedResults] = results as D1Result<Record<string, string>>[];
  const ids = rows.map((r) => r.id);
  const designations = designationsFrom(ids, designationResult);
  const properties = linkedPropertiesFrom(
    rows.map((r) => ({ id: r.id, typeId: r.type_id })),
    linkedResults,
  );
  const typeNames = new Map((types?.results ?? []).map((t) => [t.id!, t.name!]));
  const related = new Map<string, Relationship[]>();
  for (const r of relationships?.results ?? []) {
    const list = related.get(r.deviation_id!) ?? [];
    list.push({ id: r.related_id!, referenceId: r.reference_id! });
    related.set(r.deviation_id!, list);
  }
  const workItems = new Map<string, string[]>();
  for (const l of links?.results ?? []) workItems.set(l.deviation_id!, [...(workItems.get(l.deviation_id!) ?? []), l.work_item_id!]);
  return rows.map((row) => ({
    typeName: typeNames.get(row.type_id) ?? "",
    assets: designations.get(row.id) ?? [],
    properties: properties.get(row.id) ?? [],
    relationships: sortRelationships(related.get(row.id) ?? []),
    workItemIds: workItems.get(row.id) ?? [],
  }));
}

/** Hydrates rows (in their order): one D1 round trip (a batch) whatever the number of rows. */
export async function hydrateDeviations(db: Database, rows: readonly DeviationRow[]): Promise<Versioned<Deviation>[]> {
  if (rows.length === 0) return [];
  const results = await db.batch(
    partsStatements(
      db,
      rows.map((r) => r.id),
      [...new Set(rows.map((r) => r.type_id))],
    ),
  );
  const parts = partsFrom(rows, results);
  return Promise.all(rows.map((row, i) => composeDeviation(row, parts[i]!)));
}

function rowStatement(db: Database, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${DEVIATION_COLUMNS} FROM deviations WHERE id = ?1`).bind(id);
}

export async function findDeviationRow(db: Database, id: string): Promise<DeviationRow | null> {
  return rowStatement(db, id.toLowerCase()).first<DeviationRow>();
}

/**
 * One deviation, row and parts, in ONE statement: each part a column of the row (a JSON array built
 * by a correlated subquery keyed by the id, with the part's own ORDER BY), read back by the same
 * mappers as a page's batch. One statement rather than a batch of seven, because each statement has
 * its own cost in D1 (on the local D1 about 50 µs of CPU each, most of what a deviation read cost
 * beyond a job read; docs/benchmarks.md, "Reads (issue 22)").
 */
const LINKED = linkedPropertiesJsonColumns("?2", "?3", "d.id", "d.type_id");
const PARTS = {
  typeName: "(SELECT tj.name FROM entity_types tj WHERE tj.id = d.type_id)",
  relationships: `(SELECT json_group_array(json_array(rj.related_id, oj.reference_id))
     FROM deviation_relationships rj JOIN deviations oj ON oj.id = rj.related_id WHERE rj.deviation_id = d.id)`,
  workItems:
    "(SELECT json_group_array(wj.work_item_id ORDER BY wj.work_item_id) FROM deviation_work_items wj WHERE wj.deviation_id = d.id)",
  assets: designationsJsonColumn("?2", "d.id"),
  linkedNames: LINKED.names,
  values: LINKED.values,
};
const READ_ONE = `SELECT ${DEVIATION_COLUMNS.split(", ")
  .map((column) => `d.${column}`)
  .join(", ")}, ${Object.entries(PARTS)
  .map(([name, sql]) => `${sql} AS part_${name}`)
  .join(", ")} FROM deviations d WHERE d.id = ?1`;

type ReadOneRow = DeviationRow & { [K in keyof typeof PARTS as `part_${K}`]: string | null };

const COLUMN_NAMES = DEVIATION_COLUMNS.split(", ") as (keyof DeviationRow)[];

async function readDeviation(db: Database, id: string): Promise<{ row: DeviationRow; current: Versioned<Deviation> } | null> {
  const found = await db.prepare(READ_ONE).bind(id.toLowerCase(), DEVIATION_KIND, DEVIATION_RULE).first<ReadOneRow>();
  if (!found) return null;
  const row = Object.fromEntries(COLUMN_NAMES.map((column) => [column, found[column]])) as unknown as DeviationRow;
  const parts: DeviationParts = {
    typeName: found.part_typeName ?? "",
    assets: designationsFromJson(row.id, found.part_assets),
    properties: linkedPropertiesFromJson(found.part_linkedNames, found.part_values, row.id),
    relationships: sortRelationships(
      (JSON.parse(found.part_relationships ?? "[]") as [string, string][]).map(([relatedId, referenceId]) => ({
        id: relatedId,
        referenceId,
      })),
    ),
    workItemIds: JSON.parse(found.part_workItems ?? "[]") as string[],
  };
  return { row, current: await composeDeviation(row, parts) };
}

export async function getDeviation(db: Database, id: string): Promise<Versioned<Deviation>> {
  const found = await readDeviation(db, id);
  if (!found) throw notFound("Deviation", id);
  return found.current;
}

/** A row with its representation, for writes that check If-Match against what the client read. */
export async function readForWrite(db: Database, id: string): Promise<{ row: DeviationRow; current: Versioned<Deviation> }> {
  const found = await readDeviation(db, id);
  if (!found) throw notFound("Deviation", id);
  return found;
}
