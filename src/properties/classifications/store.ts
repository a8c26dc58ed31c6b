/**
 * Classifications in D1: one row in classifications plus one row per element in
 * classification_elements. Every write of a classification (row, whole element tree, event) is one
 * db.batch(), so a reader never sees half a tree.
 */
import { tableStatements, type Database, type Insert } from "../../db/statements";
import { classifications } from "../../db/schema";
import { nameKey } from "../../pkg/unicode";
import { guardedOutboxStatements } from "../../events/outbox";
import { ApiError, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { conflict, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import type { Versioned } from "../../pkg/resource";
import type { Classification, ClassificationInput } from "./schema";
import { buildTree, flattenTree, type ElementRow } from "./tree";
import { elementsInUse } from "./usage";
import { assertVersion, commitVersioned, retryWrite } from "../../pkg/resource";

export interface ClassificationRow {
  id: string;
  name: string;
  format: string;
  description: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

interface ElementDbRow {
  id: string;
  classification_id: string;
  parent_id: string | null;
  position: number;
  name: string;
  display_name: string | null;
  code: string | null;
  applier_code: string | null;
  color: string | null;
  sort_order: number | null;
  grade: number | null;
}

export const CLASSIFICATION_COLUMNS = "id, name, format, description, etag, created_at, updated_at";
const ELEMENT_COLUMNS = "id, classification_id, parent_id, position, name, display_name, code, applier_code, color, sort_order, grade";
const KIND = "classification";
/** Bound parameters per element row; ?1 (classification id) and ?2 (guard etag) are shared. */
const PARAMS_PER_ELEMENT = 10;
/** D1 allows 100 bound parameters per statement: 2 shared + 9 rows of 10. */
const ELEMENTS_PER_INSERT = Math.floor((100 - 2) / PARAMS_PER_ELEMENT);

function toElementRow(row: ElementDbRow): ElementRow {
  return {
    id: row.id,
    parentId: row.parent_id,
    position: row.position,
    name: row.name,
    displayName: row.display_name,
    code: row.code,
    applierCode: row.applier_code,
    color: row.color,
    order: row.sort_order,
    grade: row.grade,
  };
}

export function toClassification(row: ClassificationRow, elements: readonly ElementRow[]): Versioned<Classification> {
  return {
    value: {
      id: row.id,
      name: row.name,
      format: row.format as Classification["format"],
      description: row.description,
      elements: buildTree(elements),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: row.etag,
  };
}

/** Element rows of several classifications, grouped by classification id (for list pages). */
export async function loadElementRowsOf(db: Database, classificationIds: readonly string[]): Promise<Map<string, ElementRow[]>> {
  const grouped = new Map<string, ElementRow[]>(classificationIds.map((id) => [id, []]));
  if (classificationIds.length === 0) return grouped;
  // The ids travel as one JSON parameter, so any page size stays within D1's parameter limit.
  const { results } = await db
    .prepare(`SELECT ${ELEMENT_COLUMNS} FROM classification_elements WHERE classification_id IN (SELECT value FROM json_each(?1))`)
    .bind(JSON.stringify(classificationIds))
    .all<ElementDbRow>();
  for (const row of results) grouped.get(row.classification_id)?.push(toElementRow(row));
  return grouped;
}

/** The classification row and its element rows, read together in one round trip (one snapshot). */
export async function readClassification(db: Database, id: string): Promise<{ row: ClassificationRow; elements: ElementRow[] } | null> {
  const [head, elements] = await db.batch([
    db.prepare(`SELECT ${CLASSIFICATION_COLUMNS} FROM classifications WHERE id = ?1`).bind(id),
    db.prepare(`SELECT ${ELEMENT_COLUMNS} FROM classification_elements WHERE classification_id = ?1`).bind(id),
  ]);
  const row = (head?.results as ClassificationRow[] | undefined)?.[0];
  if (!row) return null;
  return { row, elements: ((elements?.results ?? []) as ElementDbRow[]).map(toElementRow) };
}

export async function findClassification(db: Database, id: string): Promise<Versioned<Classification> | null> {
  const found = await readClassification(db, id);
  return found ? toClassification(found.row, found.elements) : null;
}

export async function getClassification(db: Database, id: string): Promise<Versioned<Classification>> {
  const found = await findClassification(db, id);
  if (!found) throw notFound("Classification", id);
  return found;
}

const nameTaken = (name: string) =>
  conflict(`A classification named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used." },
  ]);

/** What an event carries: the classification without its (possibly large) tree; readers fetch it. */
function eventPayload(classification: Classification, elementCount: number) {
  const { elements: _elements, ...rest } = classification;
  return { ...rest, elementCount };
}

/**
 * The element inserts, chunked to D1's parameter limit. Each applies only while the classification
 * carries `etag`, the token this batch set, so a batch whose guarded update lost a race writes nothing.
 */
function elementInserts(db: Database, classificationId: string, etag: string, rows: readonly ElementRow[]): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let start = 0; start < rows.length; start += ELEMENTS_PER_INSERT) {
    const chunk = rows.slice(start, start + ELEMENTS_PER_INSERT);
    const tuples = chunk.map((_, i) => {
      const first = 3 + i * PARAMS_PER_ELEMENT;
      return `(${Array.from({ length: PARAMS_PER_ELEMENT }, (_, k) => `?${first + k}`).join(", ")})`;
    });
    const values = chunk.flatMap((r) => [
      r.id,
      r.parentId,
      r.position,
      r.name,
      r.displayName,
      r.code,
      r.applierCode,
      r.color,
      r.order,
      r.grade,
    ]);
    statements.push(
      db
        .prepare(
          `INSERT INTO classification_elements (${ELEMENT_COLUMNS})
           SELECT column1, ?1, column2, column3, column4, column5, column6, column7, column8, column9, column10
           FROM (VALUES ${tuples.join(", ")})
           WHERE EXISTS (SELECT 1 FROM classifications WHERE id = ?1 AND etag = ?2)`,
        )
        .bind(classificationId, etag, ...values),
    );
  }
  return statements;
}

const classificationTable = tableStatements(classifications);

/** The statements that insert a classification (its name key derived from its name) with its element tree. */
export function insertClassificationStatements(
  db: Database,
  values: Omit<Insert<typeof classifications>, "nameKey">,
  elements: readonly ElementRow[],
): D1PreparedStatement[] {
  return [
    classificationTable.insert(db, { ...values, nameKey: nameKey(values.name) }),
    ...elementInserts(db, values.id, values.etag, elements),
  ];
}

export async function createClassification(ctx: WriteContext, input: ClassificationInput): Promise<Versioned<Classification>> {
  const id = ctx.uuid();
  const etag = newEtagToken();
  const rows = flattenTree(input.elements, () => ctx.uuid());
  const classification: Classification = {
    id,
    name: input.name,
    format: input.format,
    description: input.description,
    elements: buildTree(rows),
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  await runBatch(
    ctx.db,
    [
      ...insertClassificationStatements(
        ctx.db,
        {
          id,
          name: input.name,
          format: input.format,
          description: input.description,
          etag,
          createdAt: ctx.now,
          updatedAt: ctx.now,
          createdBy: ctx.actorId,
        },
        rows,
      ),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: KIND, entityId: id, action: "created", payload: eventPayload(classification, rows.length) },
        { table: "classifications", etag },
      ),
    ],
    () => nameTaken(input.name),
  );
  return { value: classification, etag };
}

/**
 * Replaces the classification and its whole tree. Element names are the stored values of
 * classification properties, so an element that disappears (removed or renamed) while a value or a
 * definition's default still names it is refused with 409 InUse.
 */
export async function updateClassification(
  ctx: WriteContext,
  input: ClassificationInput & { id: string },
): Promise<Versioned<Classification>> {
  return retryWrite(ctx, async () => {
    const found = await readClassification(ctx.db, input.id);
    if (!found) throw notFound("Classification", input.id);
    const current = toClassification(found.row, found.elements);
    assertVersion(ctx, current.etag);
    const rows = flattenTree(input.elements, () => ctx.uuid());
    const kept = new Set(rows.map((r) => r.name));
    const dropped = found.elements.map((r) => r.name).filter((name) => !kept.has(name));
    if (dropped.length > 0) await refuseIfInUse(ctx.db, input.id, dropped);

    const etag = newEtagToken();
    const classification: Classification = {
      ...current.value,
      name: input.name,
      format: input.format,
      description: input.description,
      elements: buildTree(rows),
      updatedAt: ctx.now,
    };
    await commitVersioned(
      ctx,
      [
        // Applies only to the version read above: a concurrent write in between makes this a 412.
        ctx.db
          .prepare(
            "UPDATE classifications SET name = ?1, name_key = ?8, format = ?2, description = ?3, etag = ?4, updated_at = ?5 " +
              "WHERE id = ?6 AND etag = ?7",
          )
          .bind(input.name, input.format, input.description, etag, ctx.now, input.id, current.etag, nameKey(input.name)),
        ctx.db
          .prepare(
            "DELETE FROM classification_elements WHERE classification_id = ?1 AND EXISTS (SELECT 1 FROM classifications " +
              "WHERE id = ?1 AND etag = ?2)",
          )
          .bind(input.id, etag),
        ...elementInserts(ctx.db, input.id, etag, rows),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: input.id, action: "updated", payload: eventPayload(classification, rows.length) },
          { table: "classifications", etag },
        ),
      ],
      () => nameTaken(input.name),
    );
    return { value: classification, etag };
  });
}

async function refuseIfInUse(db: Database, classificationId: string, dropped: readonly string[]): Promise<void> {
  const uses = await elementsInUse(db, classificationId, dropped);
  if (uses.length === 0) return;
  const errors = uses.map((use) => ({ field: "body.elements", rule: "inUse", message: use.message }));
  const names = uses.map((use) => `'${use.element}'`).join(", ");
  throw new ApiError(
    "InUse",
    `The element(s) ${names} cannot be removed or renamed: they are in use. ${errors.map((e) => e.message).join(" ")}`,
    {
      errors,
    },
  );
}

/** Refuses with 409 InUse while a property definition takes its values from the classification. */
async function refuseIfReferenced(db: Database, id: string): Promise<void> {
  const { results } = await db
    .prepare("SELECT name FROM property_definitions WHERE classification_id = ?1 ORDER BY name LIMIT 6")
    .bind(id)
    .all<{ name: string }>();
  if (results.length === 0) return;
  const names =
    results
      .slice(0, 5)
      .map((r) => `'${r.name}'`)
      .join(", ") + (results.length > 5 ? ", ..." : "");
  throw new ApiError("InUse", `The classification is used by the property definition(s) ${names}.`);
}

export async function deleteClassification(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getClassification(ctx.db, id);
    assertVersion(ctx, current.etag);
    await refuseIfReferenced(ctx.db, id);
    // Guarded so a definition that started to reference the classification since the check keeps it.
    const guard = "id = ?1 AND etag = ?2 AND NOT EXISTS (SELECT 1 FROM property_definitions WHERE classification_id = ?1)";
    const [, removed] = await ctx.db.batch([
      // The elements go first, so the classification's own delete counts exactly one change (D1 also
      // counts rows removed by a cascade).
      ctx.db
        .prepare(
          `DELETE FROM classification_elements WHERE classification_id = ?1 AND EXISTS (SELECT 1 FROM classifications WHERE ${guard})`,
        )
        .bind(id, current.etag),
      ctx.db.prepare(`DELETE FROM classifications WHERE ${guard}`).bind(id, current.etag),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1) {
      // Lost a race: either a definition now references it, or it changed since it was read.
      await refuseIfReferenced(ctx.db, id);
      throw preconditionFailed();
    }
  });
}
