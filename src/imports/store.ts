/**
 * Imports in D1: the owner of `imports`, `import_rows` and `import_problems`. An import row carries
 * its status and counts; each chunk's progress is one guarded update (`chunks_done = n` -> `n + 1`),
 * so a chunk run twice counts once. A written row's `import_rows` entry goes into the same batch as
 * the entity it wrote (the entity's own write), so a row is written exactly when its entry is.
 */
import { importProblems, importRows, imports } from "../db/schema";
import { tableStatements, type Database, type Row } from "../db/statements";
import { outboxStatements, type EventContext } from "../events/outbox";
import { newEtagToken } from "../pkg/db";
import { notFound } from "../pkg/errors";
import type { Versioned } from "../pkg/resource";
import type { ImportResource } from "./schema";
import type { RowProblem } from "./kinds/kind";

const importTable = tableStatements(imports);
const rowTable = tableStatements(importRows);
const problemTable = tableStatements(importProblems);

export type ImportRow = Row<typeof imports>;
export const IMPORT_KIND = "import";

export function toImport(row: ImportRow): Versioned<ImportResource> {
  return {
    value: {
      id: row.id,
      kind: row.kind as ImportResource["kind"],
      status: row.status as ImportResource["status"],
      dryRun: row.dryRun,
      fileName: row.fileName,
      format: row.format as ImportResource["format"],
      fileId: row.fileId,
      importKey: row.importKey,
      rowKey: row.rowKeyColumn,
      mapping: Object.fromEntries(storedMapping(row)),
      total: row.total,
      processed: row.processed,
      created: row.created,
      skipped: row.skipped,
      failed: row.failed,
      problem: row.problem === null ? null : (JSON.parse(row.problem) as { rule: string; message: string }),
      createdBy: row.createdBy === null ? null : { id: row.createdBy, name: row.createdByName },
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      finishedAt: row.finishedAt,
    },
    etag: row.etag,
  };
}

/** The file's headers in order, each with its target (stored as pairs: a record would reorder numeric headers). */
export function storedMapping(row: Pick<ImportRow, "mapping">): [string, string | null][] {
  return JSON.parse(row.mapping) as [string, string | null][];
}

export async function findImport(db: Database, id: string): Promise<ImportRow | null> {
  const raw = await db
    .prepare(`SELECT ${importTable.columns} FROM imports WHERE id = ?1`)
    .bind(id.toLowerCase())
    .first<Record<string, unknown>>();
  return raw ? importTable.row(raw) : null;
}

export async function getImport(db: Database, id: string): Promise<ImportRow> {
  const row = await findImport(db, id);
  if (!row) throw notFound("Import", id);
  return row;
}

export type NewImport = Pick<
  ImportRow,
  | "id"
  | "kind"
  | "dryRun"
  | "format"
  | "fileName"
  | "fileId"
  | "sourceKey"
  | "importKey"
  | "rowKeyColumn"
  | "mapping"
  | "createdBy"
  | "createdByName"
>;

/** Inserts a queued import with its created event. */
export async function insertImport(db: Database, ctx: EventContext, values: NewImport): Promise<Versioned<ImportResource>> {
  const row: ImportRow = {
    ...values,
    status: "queued",
    total: null,
    processed: 0,
    created: 0,
    skipped: 0,
    failed: 0,
    chunks: null,
    chunksDone: 0,
    problem: null,
    finishedAt: null,
    etag: newEtagToken(),
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  const created = toImport(row);
  await db.batch([
    importTable.insert(db, row),
    ...outboxStatements(db, ctx, { entityKind: IMPORT_KIND, entityId: row.id, action: "created", payload: created.value, etag: row.etag }),
  ]);
  return created;
}

/** The file was split: its row count and chunk count (only while it still runs: a split run twice counts once). */
export async function markSplit(db: Database, id: string, total: number, chunks: number, now: string): Promise<void> {
  await db
    .prepare(
      "UPDATE imports SET status = 'running', total = ?2, chunks = ?3, updated_at = ?4, etag = ?5 " +
        "WHERE id = ?1 AND status IN ('queued', 'running')",
    )
    .bind(id, total, chunks, now, newEtagToken())
    .run();
}

export interface ChunkCounts {
  processed: number;
  created: number;
  skipped: number;
  failed: number;
}

/**
 * A chunk's progress and its rows' problems, counted once: only while the import has done exactly
 * `chunk` chunks (a chunk run again after it was counted changes nothing). Answers whether it counted.
 */
export async function recordChunk(
  db: Database,
  id: string,
  chunk: number,
  counts: ChunkCounts,
  problems: readonly { rowNumber: number; cells: Record<string, string>; problems: RowProblem[] }[],
  now: string,
): Promise<boolean> {
  const [update] = await db.batch([
    db
      .prepare(
        `UPDATE imports SET processed = processed + ?3, created = created + ?4, skipped = skipped + ?5, failed = failed + ?6,
           chunks_done = ?2 + 1, updated_at = ?7, etag = ?8 WHERE id = ?1 AND chunks_done = ?2 AND status = 'running'`,
      )
      .bind(id, chunk, counts.processed, counts.created, counts.skipped, counts.failed, now, newEtagToken()),
    ...problemTable.insertMany(
      db,
      problems.map((p) => ({ importId: id, rowNumber: p.rowNumber, cells: JSON.stringify(p.cells), problems: JSON.stringify(p.problems) })),
      { orIgnore: true },
    ),
  ]);
  return (update?.meta.changes ?? 0) > 0;
}

/** Ends an import (completed, or failed with a per-file problem) with its `updated` event, once. */
export async function finishImport(
  db: Database,
  ctx: EventContext,
  id: string,
  status: "completed" | "failed",
  problem: { rule: string; message: string } | null,
): Promise<void> {
  const current = await getImport(db, id);
  if (current.status === "completed" || current.status === "failed") return;
  const row: ImportRow = {
    ...current,
    status,
    problem: problem === null ? null : JSON.stringify(problem),
    finishedAt: ctx.now,
    updatedAt: ctx.now,
    etag: newEtagToken(),
  };
  const done = toImport(row);
  await db.batch([
    db
      .prepare("UPDATE imports SET status = ?2, problem = ?3, finished_at = ?4, updated_at = ?4, etag = ?5 WHERE id = ?1 AND etag = ?6")
      .bind(id, status, row.problem, ctx.now, row.etag, current.etag),
    ...outboxStatements(
      db,
      ctx,
      { entityKind: IMPORT_KIND, entityId: id, action: "updated", payload: done.value, etag: row.etag },
      {
        table: "imports",
        etag: row.etag,
      },
    ),
  ]);
}

/** The row keys of `keys` already written under `importKey`, with the entity each became. */
export async function writtenRows(db: Database, importKey: string, keys: readonly string[]): Promise<Map<string, WrittenRow>> {
  if (keys.length === 0) return new Map();
  const { results } = await db
    .prepare(
      "SELECT row_key, entity_id, import_id, row_number FROM import_rows " +
        "WHERE import_key = ?1 AND row_key IN (SELECT value FROM json_each(?2))",
    )
    .bind(importKey, JSON.stringify(keys))
    .all<{ row_key: string; entity_id: string; import_id: string; row_number: number }>();
  return new Map(results.map((r) => [r.row_key, { entityId: r.entity_id, importId: r.import_id, rowNumber: r.row_number }]));
}

/** A row key's entry: the record it wrote, and which import wrote it from which row. */
export interface WrittenRow {
  entityId: string;
  importId: string;
  rowNumber: number;
}

/** The entry of a written row, for the batch of the entity's own write (a second entry for the key fails it). */
export function importRowStatement(
  db: Database,
  values: { importKey: string; rowKey: string; entityId: string; importId: string; rowNumber: number },
): D1PreparedStatement {
  return rowTable.insert(db, values);
}

export interface StoredProblem {
  rowNumber: number;
  cells: Record<string, string>;
  problems: RowProblem[];
}

/** A page of an import's row problems, in row order, after `afterRow`. */
export async function problemsPage(db: Database, id: string, afterRow: number, limit: number): Promise<StoredProblem[]> {
  const { results } = await db
    .prepare(
      "SELECT row_number, cells, problems FROM import_problems WHERE import_id = ?1 AND row_number > ?2 ORDER BY row_number LIMIT ?3",
    )
    .bind(id, afterRow, limit)
    .all<{ row_number: number; cells: string; problems: string }>();
  return results.map((r) => ({
    rowNumber: r.row_number,
    cells: JSON.parse(r.cells) as Record<string, string>,
    problems: JSON.parse(r.problems) as RowProblem[],
  }));
}

/** A page of the rows an import wrote, in row order, after `afterRow`. */
export async function writtenPage(db: Database, id: string, afterRow: number, limit: number) {
  const { results } = await db
    .prepare("SELECT row_number, row_key, entity_id FROM import_rows WHERE import_id = ?1 AND row_number > ?2 ORDER BY row_number LIMIT ?3")
    .bind(id, afterRow, limit)
    .all<{ row_number: number; row_key: string; entity_id: string }>();
  return results.map((r) => ({ row: r.row_number, rowKey: r.row_key, entityId: r.entity_id }));
}
