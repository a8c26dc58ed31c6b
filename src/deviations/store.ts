/**
 * Deviations as stored: the owner of deviations, deviation_relationships and deviation_work_items.
 * Reading: rows plus their type name, asset reference, linked properties, relationships and work item
 * links. A page is hydrated in one batch; a single read is one statement with its parts as columns,
 * so each costs one D1 round trip (test/contract/read-round-trips.test.ts). Writing: the statements
 * write.ts, the work item links and the monitoring loop compose into their own batches.
 */
import { jsonRowStatements, tableStatements, type Database, type Insert } from "../db/statements";
import { deviations, deviationWorkItems } from "../db/schema";
import { newEtagToken } from "../pkg/db";
import { nameKey } from "../pkg/unicode";
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
    // Origins stored before a field existed show it as null.
    origin: { ...INSPECTION_ORIGIN, ...(parseJson<Partial<DeviationOrigin>>(row.origin) ?? {}) },
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

async function readDeviation(db: Database, id: string): Promise<{ row: DeviationRow; current: Versioned<Deviation> } | null> {
  const found = await db.prepare(READ_ONE).bind(id.toLowerCase(), DEVIATION_KIND, DEVIATION_RULE).first<ReadOneRow>();
  if (!found) return null;
  // The row is what is left once the parts' columns are taken out.
  const { part_typeName, part_assets, part_linkedNames, part_values, part_relationships, part_workItems, ...row } = found;
  const parts: DeviationParts = {
    typeName: part_typeName ?? "",
    assets: designationsFromJson(row.id, part_assets),
    properties: linkedPropertiesFromJson(part_linkedNames, part_values, row.id),
    relationships: sortRelationships(
      (JSON.parse(part_relationships ?? "[]") as [string, string][]).map(([relatedId, referenceId]) => ({
        id: relatedId,
        referenceId,
      })),
    ),
    workItemIds: JSON.parse(part_workItems ?? "[]") as string[],
  };
  return { row, current: await composeDeviation(row, parts) };
}

export async function getDeviation(db: Database, id: string): Promise<Versioned<Deviation>> {
  const found = await readDeviation(db, id);
  if (!found) throw notFound("Deviation", id);
  return found.current;
}

/** The id of the deviation with this referenceId (ignoring case, as its uniqueness does), or null. */
export async function deviationIdByReference(db: Database, referenceId: string): Promise<string | null> {
  const found = await db.prepare("SELECT id FROM deviations WHERE reference_key = ?1").bind(nameKey(referenceId)).first<{ id: string }>();
  return found?.id ?? null;
}

/** A row with its representation, for writes that check If-Match against what the client read. */
export async function readForWrite(db: Database, id: string): Promise<{ row: DeviationRow; current: Versioned<Deviation> }> {
  const found = await readDeviation(db, id);
  if (!found) throw notFound("Deviation", id);
  return found;
}

// --- Statements ------------------------------------------------------------------------------------

const deviationTable = tableStatements(deviations);
const linkTable = tableStatements(deviationWorkItems);

/** A deviation's row as written: its reference key derives from its referenceId. */
export type DeviationValues = Omit<Insert<typeof deviations>, "referenceKey">;

/** The values of a row as read, for a create by `createdBy` (the monitoring loop: with its monitor). */
export function deviationValues(row: DeviationRow, createdBy: string | null, originMonitorRef: string | null = null): DeviationValues {
  return {
    id: row.id,
    referenceId: row.reference_id,
    description: row.description,
    status: row.status,
    typeId: row.type_id,
    ownerId: row.owner_id,
    ownerName: row.owner_name,
    riskId: row.risk_id,
    riskName: row.risk_name,
    metadata: row.metadata,
    origin: row.origin,
    originMonitorRef,
    etag: row.etag,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy,
  };
}

/** Inserts deviations (one, or the many a monitoring evaluation raises at once). */
export function insertDeviationsStatements(db: Database, rows: readonly DeviationValues[]): D1PreparedStatement[] {
  return deviationTable.insertMany(
    db,
    rows.map((row) => ({ ...row, referenceKey: nameKey(row.referenceId) })),
  );
}

/** Replaces a deviation's own fields (its batch asserts the version read first); its origin stays. */
export function updateDeviationStatement(db: Database, row: DeviationRow): D1PreparedStatement {
  const {
    id,
    origin: _origin,
    originMonitorRef: _originMonitorRef,
    createdAt: _createdAt,
    createdBy: _createdBy,
    ...changed
  } = deviationValues(row, null);
  return deviationTable.update(db, { ...changed, referenceKey: nameKey(row.reference_id) }, { id });
}

/**
 * The statements that delete a deviation's row with its relationships (both directions) and work
 * item links; the row's delete comes last, so a guarded event after it sees its change.
 */
export function deleteDeviationStatements(db: Database, id: string): D1PreparedStatement[] {
  return [
    db.prepare("DELETE FROM deviation_relationships WHERE deviation_id = ?1 OR related_id = ?1").bind(id),
    linkTable.delete(db, { deviationId: id }),
    deviationTable.delete(db, { id }),
  ];
}

/**
 * The statements that make `relatedIds` the relationships of `id`, both directions, keeping rows
 * that stay (and their createdAt); `previousIds` are the related ids before the write, so both the
 * gained and the lost deviations get a new etag.
 */
export function replaceRelationshipsStatements(
  db: Database,
  id: string,
  relatedIds: readonly string[],
  previousIds: readonly string[],
  now: string,
): D1PreparedStatement[] {
  const list = JSON.stringify(relatedIds);
  const touched = [...new Set([...relatedIds, ...previousIds])].filter(
    (other) => !(relatedIds.includes(other) && previousIds.includes(other)),
  );
  const statements = [
    db
      .prepare(
        `DELETE FROM deviation_relationships
          WHERE (deviation_id = ?1 AND related_id NOT IN (SELECT value FROM json_each(?2)))
             OR (related_id = ?1 AND deviation_id NOT IN (SELECT value FROM json_each(?2)))`,
      )
      .bind(id, list),
  ];
  if (relatedIds.length > 0) {
    statements.push(
      db
        .prepare(
          "INSERT OR IGNORE INTO deviation_relationships (deviation_id, related_id, created_at) SELECT ?1, value, ?3 FROM json_each(?2)",
        )
        .bind(id, list, now),
      db
        .prepare(
          "INSERT OR IGNORE INTO deviation_relationships (deviation_id, related_id, created_at) SELECT value, ?1, ?3 FROM json_each(?2)",
        )
        .bind(id, list, now),
    );
  }
  if (touched.length > 0) statements.push(touchDeviationsStatement(db, touched));
  return statements;
}

/** Gives deviations a new etag token (their representation changed through another entity). */
export function touchDeviationsStatement(db: Database, ids: readonly string[]): D1PreparedStatement {
  return db
    .prepare("UPDATE deviations SET etag = ?1 WHERE id IN (SELECT value FROM json_each(?2))")
    .bind(newEtagToken(), JSON.stringify(ids));
}

/** A new etag for one deviation, only when the statement before it changed a row (its representation changed with it). */
export function newDeviationVersionIfChangedStatement(db: Database, id: string): D1PreparedStatement {
  return db.prepare("UPDATE deviations SET etag = ?1 WHERE id = ?2 AND changes() > 0").bind(newEtagToken(), id);
}

/**
 * A status change the monitoring loop makes when an alarm is left (onLeave.deviationStatus), for
 * deviations whose version is still the one the loop read; `when` (trusted SQL over the JSON row
 * `j.value`, binding ?2...) adds the loop's own condition. Rows: `{ id, status, etag, previous }`.
 */
export function setStatusesStatements(
  db: Database,
  rows: readonly { id: string; status: string; etag: string; previous: string }[],
  now: string,
  when: { sql: string; bindings: readonly unknown[] },
): D1PreparedStatement[] {
  return jsonRowStatements(
    db,
    `UPDATE deviations
        SET status = (SELECT json_extract(j.value, '$.status') FROM json_each(?1) j WHERE json_extract(j.value, '$.id') = deviations.id),
            etag = (SELECT json_extract(j.value, '$.etag') FROM json_each(?1) j WHERE json_extract(j.value, '$.id') = deviations.id),
            updated_at = ?${when.bindings.length + 2}
      WHERE id IN (SELECT json_extract(j.value, '$.id') FROM json_each(?1) j
                    WHERE json_extract(j.value, '$.previous') = deviations.etag AND (${when.sql}))`,
    rows,
    ...when.bindings,
    now,
  );
}

// --- Work item links -------------------------------------------------------------------------------

/** Links a deviation and a work item; linking twice changes nothing (check changes() to tell). */
export function linkWorkItemStatement(
  db: Database,
  link: { deviationId: string; workItemId: string; now: string; by: string | null },
): D1PreparedStatement {
  const { deviationId, workItemId } = link;
  return linkTable.insertOrIgnore(db, { deviationId, workItemId, createdAt: link.now, createdBy: link.by });
}

/** Links many (the monitoring loop: each deviation it raises with the work item raised with it). */
export function linkWorkItemsStatements(
  db: Database,
  links: readonly { deviationId: string; workItemId: string }[],
  now: string,
  by: string | null,
): D1PreparedStatement[] {
  return linkTable.insertMany(
    db,
    links.map((l) => ({ ...l, createdAt: now, createdBy: by })),
  );
}

export function unlinkStatement(db: Database, deviationId: string, workItemId: string): D1PreparedStatement {
  return linkTable.delete(db, { deviationId, workItemId });
}

/** Removes a work item's links (for the work item's own delete). */
export function unlinkWorkItemStatement(db: Database, workItemId: string): D1PreparedStatement {
  return linkTable.delete(db, { workItemId });
}
