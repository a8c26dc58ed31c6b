/**
 * The revision engine of work and activity templates (spec section 3, design "Revisions").
 *
 * A template is one row per revision; `is_latest` marks the one reads return. A revision is "in use"
 * (frozen) once something was created from it. A write on the latest revision either changes it in
 * place (not in use) or copies it with every dependent row (ids kept) as revision + 1, moves
 * `is_latest` and applies the change to the copy. Either way the whole write is ONE db.batch(),
 * guarded at its start by an assertion, so a failure or a lost race leaves nothing behind:
 * - in place: the revision is still the latest, still carries the etag that was read, and is still
 *   not in use (an instantiation that committed meanwhile makes this write retry as a copy);
 * - copy: the revision read is still the latest with the etag read, and revision + 1 does not exist.
 *
 * The module is pure (it only builds statements), so the work-items module can reuse the in-use SQL.
 */
import type { Database } from "../db/statements";
import { assertStatement } from "../pkg/db";

/**
 * SQL that is true when the work template revision (`idSql`, `revisionSql`: SQL expressions, e.g.
 * `?1`, `t.revision`) is in use: a work item is based on it (work_item_templates).
 */
export function isWorkTemplateRevisionInUseSql(idSql: string, revisionSql: string): string {
  return `EXISTS (SELECT 1 FROM work_item_templates WHERE work_template_id = ${idSql} AND work_template_revision = ${revisionSql})`;
}

/**
 * SQL that is true when the activity template revision is in use: an activity is based on it, or a
 * work item used it (work_item_activity_templates).
 */
export function isActivityTemplateRevisionInUseSql(idSql: string, revisionSql: string): string {
  return (
    `(EXISTS (SELECT 1 FROM activities WHERE based_on_id = ${idSql} AND based_on_revision = ${revisionSql})` +
    ` OR EXISTS (SELECT 1 FROM work_item_activity_templates WHERE activity_template_id = ${idSql} AND ` +
    `activity_template_revision = ${revisionSql}))`
  );
}

export type SqlValue = string | number | null;

/** A table of revision dependents: its foreign key to the revision and the columns a copy carries over. */
export interface DependentTable {
  table: string;
  templateIdColumn: string;
  revisionColumn: string;
  /** Every other column (the dependent's own `id` included). */
  columns: readonly string[];
}

export interface RevisionedKind {
  /** The outbox entity kind. */
  entityKind: "workTemplate" | "activityTemplate";
  table: "work_templates" | "activity_templates";
  /** Every column but id, revision and is_latest. */
  columns: readonly string[];
  dependents: readonly DependentTable[];
  inUseSql(idSql: string, revisionSql: string): string;
}

export const WORK_TEMPLATE_KIND: RevisionedKind = {
  entityKind: "workTemplate",
  table: "work_templates",
  columns: [
    "display_name",
    "reference_id",
    "status",
    "type_id",
    "owner_id",
    "owner_name",
    "tags",
    "properties",
    "metadata",
    "etag",
    "created_at",
    "updated_at",
    "created_by",
  ],
  dependents: [
    {
      table: "section_templates",
      templateIdColumn: "work_template_id",
      revisionColumn: "work_template_revision",
      columns: ["id", "display_name", "description", "position", "metadata"],
    },
    {
      table: "work_template_activity_templates",
      templateIdColumn: "work_template_id",
      revisionColumn: "work_template_revision",
      columns: ["id", "activity_template_id", "section_template_id", "position", "metadata"],
    },
  ],
  inUseSql: isWorkTemplateRevisionInUseSql,
};

export const ACTIVITY_TEMPLATE_KIND: RevisionedKind = {
  entityKind: "activityTemplate",
  table: "activity_templates",
  columns: [
    "display_name",
    "reference_id",
    "status",
    "owner_id",
    "owner_name",
    "activity_type_id",
    "template_type",
    "description",
    "metadata",
    "etag",
    "created_at",
    "updated_at",
    "created_by",
  ],
  dependents: [
    {
      table: "input_templates",
      templateIdColumn: "activity_template_id",
      revisionColumn: "activity_template_revision",
      columns: ["id", "name", "display_name", "format", "required", "position", "metadata", "reading"],
    },
  ],
  inUseSql: isActivityTemplateRevisionInUseSql,
};

/** The revision a write starts from, as it was read. */
export interface ReadRevision {
  id: string;
  revision: number;
  /** The etag column as read (not the representation ETag). */
  etag: string;
  inUse: boolean;
}

/**
 * One write: the whole new header row (every column of `kind.columns`; etag, updated_at and, for a
 * copy, created_at already set by the caller), the changes to dependents of the target revision, and
 * statements that do not depend on the revision (property values, tags, the outbox event).
 */
export interface RevisionWrite {
  header: Record<string, SqlValue>;
  dependentChanges(targetRevision: number): D1PreparedStatement[];
  sideEffects(targetRevision: number): D1PreparedStatement[];
}

/** A row's values of `kind.columns`: the header a revision write takes (a column it lacks is refused). */
export function headerOf(kind: RevisionedKind, row: object): Record<string, SqlValue> {
  const values = new Map<string, unknown>(Object.entries(row));
  return Object.fromEntries(
    kind.columns.map((column) => {
      const value = values.get(column);
      if (value !== null && typeof value !== "string" && typeof value !== "number") {
        throw new Error(`revision write: column ${column} of ${kind.table} is ${value === undefined ? "missing" : typeof value}`);
      }
      return [column, value];
    }),
  );
}

/** Whether the write copies, and the revision it lands on. */
export function targetOf(read: ReadRevision): { copies: boolean; revision: number } {
  return read.inUse ? { copies: true, revision: read.revision + 1 } : { copies: false, revision: read.revision };
}

function headerValues(kind: RevisionedKind, header: Record<string, SqlValue>): SqlValue[] {
  return kind.columns.map((column) => {
    const value = header[column];
    if (value === undefined) throw new Error(`revision write: column ${column} of ${kind.table} is missing`);
    return value;
  });
}

/**
 * The statements of one write, in batch order: the guard, the header (update in place, or retire
 * the old latest and insert the copy), the copy of every dependent, the change, the side effects.
 */
export function revisionWriteStatements(
  db: Database,
  kind: RevisionedKind,
  read: ReadRevision,
  write: RevisionWrite,
): D1PreparedStatement[] {
  const { copies, revision } = targetOf(read);
  headerValues(kind, write.header); // every column present, or the write is refused before it is built
  const isLatestWithEtag = `EXISTS (SELECT 1 FROM ${kind.table} WHERE id = ?1 AND revision = ?2 AND is_latest = 1 AND etag = ?3)`;
  const statements: D1PreparedStatement[] = [];
  if (!copies) {
    statements.push(assertStatement(db, `${isLatestWithEtag} AND NOT ${kind.inUseSql("?1", "?2")}`, read.id, read.revision, read.etag));
    statements.push(updateRevisionHeaderStatement(db, kind, read.id, read.revision, write.header));
  } else {
    statements.push(
      assertStatement(
        db,
        `${isLatestWithEtag} AND NOT EXISTS (SELECT 1 FROM ${kind.table} WHERE id = ?1 AND revision = ?4)`,
        read.id,
        read.revision,
        read.etag,
        revision,
      ),
    );
    statements.push(...copyRevisionStatements(db, kind, read.id, read.revision, write.header));
  }
  statements.push(...write.dependentChanges(revision), ...write.sideEffects(revision));
  return statements;
}

/**
 * The statements that make revision `from` + 1 the latest, a copy of revision `from` with `header`
 * (every column of `kind.columns`) and every dependent row (ids kept). The caller guards them.
 */
export function copyRevisionStatements(
  db: Database,
  kind: RevisionedKind,
  id: string,
  from: number,
  header: Record<string, SqlValue>,
): D1PreparedStatement[] {
  const to = from + 1;
  return [
    // The old latest steps down before the copy arrives: the partial unique index allows one latest per id.
    db.prepare(`UPDATE ${kind.table} SET is_latest = 0 WHERE id = ?1 AND revision = ?2`).bind(id, from),
    insertRevisionStatement(db, kind, id, to, header),
    ...kind.dependents.map((dependent) => copyDependentsStatement(db, dependent, id, from, to)),
  ];
}

/** Inserts a revision's header row as the latest (revision 1 of a new template, or a copy). */
export function insertRevisionStatement(
  db: Database,
  kind: RevisionedKind,
  id: string,
  revision: number,
  header: Record<string, SqlValue>,
): D1PreparedStatement {
  const placeholders = kind.columns.map((_, i) => `?${i + 3}`).join(", ");
  return db
    .prepare(`INSERT INTO ${kind.table} (id, revision, is_latest, ${kind.columns.join(", ")}) VALUES (?1, ?2, 1, ${placeholders})`)
    .bind(id, revision, ...headerValues(kind, header));
}

/** Changes columns of one revision's header in place (the caller guards it: not in use, as read). */
export function updateRevisionHeaderStatement(
  db: Database,
  kind: RevisionedKind,
  id: string,
  revision: number,
  changes: Record<string, SqlValue>,
): D1PreparedStatement {
  const columns = Object.keys(changes);
  for (const column of columns)
    if (!kind.columns.includes(column)) throw new Error(`revision write: ${kind.table} has no column ${column}`);
  const set = columns.map((column, i) => `${column} = ?${i + 3}`).join(", ");
  return db
    .prepare(`UPDATE ${kind.table} SET ${set} WHERE id = ?1 AND revision = ?2`)
    .bind(id, revision, ...columns.map((c) => changes[c]!));
}

/** Takes the activity templates of sections that no longer exist out of any section (a work template revision). */
export function unsectionStatement(db: Database, id: string, revision: number, sectionIds: ReadonlySet<string>): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE work_template_activity_templates SET section_template_id = NULL
        WHERE work_template_id = ?1 AND work_template_revision = ?2 AND section_template_id IS NOT NULL
          AND section_template_id NOT IN (SELECT value FROM json_each(?3))`,
    )
    .bind(id, revision, JSON.stringify([...sectionIds]));
}

/** Copies every dependent row of one revision to another, keeping their ids. */
export function copyDependentsStatement(
  db: Database,
  dependent: DependentTable,
  templateId: string,
  from: number,
  to: number,
): D1PreparedStatement {
  const columns = dependent.columns.join(", ");
  return db
    .prepare(
      `INSERT INTO ${dependent.table} (${dependent.templateIdColumn}, ${dependent.revisionColumn}, ${columns})
       SELECT ${dependent.templateIdColumn}, ?3, ${columns} FROM ${dependent.table} WHERE ${dependent.templateIdColumn} = ?1
       AND ${dependent.revisionColumn} = ?2`,
    )
    .bind(templateId, from, to);
}

/** Inserts dependent rows (objects keyed by column name) of one revision; all rows travel as one JSON parameter. */
export function insertDependentsStatements(
  db: Database,
  dependent: DependentTable,
  templateId: string,
  revision: number,
  rows: readonly Record<string, SqlValue>[],
): D1PreparedStatement[] {
  if (rows.length === 0) return [];
  const extracted = dependent.columns.map((column) => `json_extract(value, '$.${column}')`).join(", ");
  return [
    db
      .prepare(
        `INSERT INTO ${dependent.table} (${dependent.templateIdColumn}, ${dependent.revisionColumn}, ${dependent.columns.join(", ")})
         SELECT ?1, ?2, ${extracted} FROM json_each(?3)`,
      )
      .bind(templateId, revision, JSON.stringify(rows)),
  ];
}

/** Deletes dependent rows of one revision: the listed ids, or all of them. */
export function deleteDependentsStatement(
  db: Database,
  dependent: DependentTable,
  templateId: string,
  revision: number,
  ids?: readonly string[],
): D1PreparedStatement {
  const base = `DELETE FROM ${dependent.table} WHERE ${dependent.templateIdColumn} = ?1 AND ${dependent.revisionColumn} = ?2`;
  if (ids === undefined) return db.prepare(base).bind(templateId, revision);
  return db.prepare(`${base} AND id IN (SELECT value FROM json_each(?3))`).bind(templateId, revision, JSON.stringify(ids));
}

/** Replaces every dependent row of one revision. */
export function replaceDependentsStatements(
  db: Database,
  dependent: DependentTable,
  templateId: string,
  revision: number,
  rows: readonly Record<string, SqlValue>[],
): D1PreparedStatement[] {
  return [
    deleteDependentsStatement(db, dependent, templateId, revision),
    ...insertDependentsStatements(db, dependent, templateId, revision, rows),
  ];
}

/**
 * The statements that delete the latest revision (which must not be in use) and its dependents and,
 * when an older revision exists, make the newest of them the latest again.
 */
export function deleteLatestRevisionStatements(db: Database, kind: RevisionedKind, read: ReadRevision): D1PreparedStatement[] {
  return [
    assertStatement(
      db,
      `EXISTS (SELECT 1 FROM ${kind.table} WHERE id = ?1 AND revision = ?2 AND is_latest = 1 AND etag = ?3) AND NOT ` +
        `${kind.inUseSql("?1", "?2")}`,
      read.id,
      read.revision,
      read.etag,
    ),
    ...kind.dependents.map((dependent) => deleteDependentsStatement(db, dependent, read.id, read.revision)),
    db.prepare(`DELETE FROM ${kind.table} WHERE id = ?1 AND revision = ?2`).bind(read.id, read.revision),
    db
      .prepare(
        `UPDATE ${kind.table} SET is_latest = 1 WHERE id = ?1 AND revision = (SELECT max(revision) FROM ${kind.table} WHERE id = ?1)`,
      )
      .bind(read.id),
  ];
}
