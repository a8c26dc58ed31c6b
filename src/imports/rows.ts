/**
 * The rows of an import, checked and (unless a dry run) written, one chunk at a time: what the
 * inline dry run and each queued chunk share. A row is first checked as a spreadsheet cell (a formula,
 * an over-long cell, a malformed quote), then made into its single request's body and checked (or
 * written) by that request's own code (the kind's module, ./kinds/).
 */
import type { Database } from "../db/statements";
import type { WriteContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { rowContext, type Carry, type Column, type ImportKind, type RowProblem } from "./kinds/kind";
import { problemsOfError } from "./kinds/mapping";
import { rowContextOf } from "./kinds/batches";
import type { SheetRow } from "./read";
import { importRowStatement, writtenRows, type ChunkCounts, type WrittenRow } from "./store";

/** Excel's own limit of one cell; a longer cell is a problem of its row. */
export const MAX_CELL_CHARS = 32_767;

/** Rows of a chunk checked or written at once. */
const ROWS_AT_ONCE = 6;

/** What an import's rows need to know about it. */
export interface RowsJob {
  id: string;
  /** What each row becomes. */
  kind: ImportKind;
  importKey: string;
  dryRun: boolean;
  headers: readonly string[];
  columns: readonly Column[];
  /** The row key column's index, or null: the row number is the key. */
  rowKeyIndex: number | null;
}

export interface RowsOutcome {
  counts: ChunkCounts;
  problems: { rowNumber: number; cells: Record<string, string>; problems: RowProblem[] }[];
}

/** A cell as its text: the export's escape of a leading formula character (`'=`) taken off. */
const unescape = (cell: string) => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);

/** Problems of the row's cells themselves (before they mean anything). */
function cellProblems(row: SheetRow, job: RowsJob): RowProblem[] {
  const problems: RowProblem[] = [];
  if (row.error) problems.push({ column: null, field: "row", rule: "format", message: `The row could not be read as CSV: ${row.error}.` });
  for (const column of job.columns) {
    const cell = row.cells[column.index] ?? "";
    if (row.formulas.includes(column.index) || (column.target !== null && cell.startsWith("="))) {
      problems.push({
        column: column.header,
        field: "row",
        rule: "formula",
        message: "Formulas are not imported: give the value itself (a text starting with = is written '=).",
      });
    } else if (cell.length > MAX_CELL_CHARS) {
      problems.push({
        column: column.header,
        field: "row",
        rule: "maxLength",
        message: `The cell holds ${cell.length} characters; a cell holds at most ${MAX_CELL_CHARS}.`,
      });
    }
  }
  return problems;
}

function cellsByHeader(row: SheetRow, headers: readonly string[]): Record<string, string> {
  const cells: Record<string, string> = {};
  headers.forEach((header, index) => {
    if (header !== "") cells[header] = row.cells[index] ?? "";
  });
  return cells;
}

/**
 * Checks (and in a commit, writes) `rows`. A row already written under the import key is skipped. A
 * row's write and its import_rows entry are in one batch (or, for a kind whose records live outside D1,
 * the entry follows the record's idempotent write); a row whose entry another run wrote first fails its
 * write and counts as skipped.
 */
export async function processRows(
  db: Database,
  write: WriteContext,
  job: RowsJob,
  rows: readonly SheetRow[],
  carry?: Carry,
): Promise<RowsOutcome> {
  const counts: ChunkCounts = { processed: 0, created: 0, skipped: 0, failed: 0 };
  const keyOf = (row: SheetRow) => (job.rowKeyIndex === null ? `row:${row.number}` : (row.cells[job.rowKeyIndex] ?? "").trim());
  const written = job.dryRun
    ? new Map<string, WrittenRow>()
    : await writtenRows(
        db,
        job.importKey,
        rows.map(keyOf).filter((k) => k !== ""),
      );
  const seen = new Set<string>();
  const dryRunCarry = job.dryRun ? carry : undefined;
  const context = rowContext(db, dryRunCarry);
  /**
   * A key an earlier chunk of this import's file had, at another row: in a commit, its entry names this
   * import and that row (the same row is this chunk run again: skipped); in a dry run, its carry has it.
   */
  const keyOfEarlierChunk = (key: string, rowNumber: number): boolean => {
    const earlier = dryRunCarry ? (dryRunCarry.byId(`rowKey:${key}`) as number | undefined) : written.get(key)?.rowNumber;
    const sameImport = dryRunCarry !== undefined || written.get(key)?.importId === job.id;
    return earlier !== undefined && sameImport && earlier !== rowNumber;
  };
  const byRow = new Map<number, RowsOutcome["problems"][number]>();
  const fail = (row: SheetRow, list: RowProblem[]) => {
    counts.failed++;
    byRow.set(row.number, { rowNumber: row.number, cells: cellsByHeader(row, job.headers), problems: list });
  };
  // First, in file order: the cells themselves and the row keys (a key seen before is a duplicate).
  const ready: { row: SheetRow; key: string }[] = [];
  for (const row of rows) {
    counts.processed++;
    const early = cellProblems(row, job);
    const key = keyOf(row);
    const keyColumn = job.rowKeyIndex === null ? null : (job.headers[job.rowKeyIndex] ?? null);
    if (key === "")
      early.push({ column: keyColumn, field: "row", rule: "required", message: "The row key column is empty: every row needs its key." });
    else if (seen.has(key) || keyOfEarlierChunk(key, row.number))
      early.push({ column: keyColumn, field: "row", rule: "duplicate", message: `Another row of the file has the row key '${key}'.` });
    seen.add(key);
    if (dryRunCarry && job.rowKeyIndex !== null && key !== "") dryRunCarry.add(`rowKey:${key}`, [], row.number);
    if (early.length > 0) fail(row, early);
    else if (written.has(key)) counts.skipped++;
    else ready.push({ row, key });
  }
  // Then each row as its single request, a few at once (their reads overlap). A kind that writes many rows
  // together (writeMany) gets the chunk's planned rows at once, in file order; the others write row by row.
  const together = !job.dryRun && job.kind.writeMany !== undefined && job.kind.inOrder !== true;
  const planned: { row: SheetRow; key: string; plan: unknown; id: string }[] = [];
  const entry = (key: string, row: SheetRow, entityId: string) =>
    importRowStatement(db, { importKey: job.importKey, rowKey: key, entityId, importId: job.id, rowNumber: row.number });
  /** What a row's write did not do: another run wrote it first (skipped), or the row's own problem. */
  const refused = async (row: SheetRow, key: string, plan: unknown, error: unknown) => {
    if (!job.dryRun && error instanceof ApiError && error.code === "Conflict" && (await writtenRows(db, job.importKey, [key])).has(key)) {
      counts.skipped++;
      return;
    }
    const listed = problemsOfError(error, job.columns, job.kind.propertiesOf(plan));
    if (!listed) throw error;
    fail(row, listed);
  };
  const one = async ({ row, key }: { row: SheetRow; key: string }) => {
    const made = await job.kind.plan(context, job.columns, row.cells.map(unescape));
    if (!made.plan) return fail(row, made.problems);
    const plan = made.plan;
    if (job.kind.unchanged?.(plan)) {
      // Nothing to write: valid in a dry run, skipped in a commit.
      if (job.dryRun) counts.created++;
      else counts.skipped++;
      return;
    }
    const existing = job.kind.existingId(plan);
    const id = existing ?? write.uuid();
    if (together) {
      planned.push({ row, key, plan, id });
      return;
    }
    try {
      if (job.dryRun) await job.kind.check(db, plan, id);
      else await job.kind.write(rowContextOf(write, id, existing !== null), plan, [entry(key, row, id)]);
      counts.created++;
    } catch (error) {
      await refused(row, key, plan, error);
    }
  };
  let next = 0;
  const worker = async () => {
    while (next < ready.length) await one(ready[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(job.kind.inOrder ? 1 : ROWS_AT_ONCE, ready.length) }, worker));
  if (planned.length > 0) {
    planned.sort((a, b) => a.row.number - b.row.number);
    const answers = await job.kind.writeMany!(
      write,
      planned.map((p) => ({ plan: p.plan, id: p.id, extra: [entry(p.key, p.row, p.id)] })),
    );
    for (const [at, p] of planned.entries()) {
      const answer = answers[at];
      if (answer instanceof Error) await refused(p.row, p.key, p.plan, answer);
      else counts.created++;
    }
  }
  const problems = [...byRow.values()].sort((a, b) => a.rowNumber - b.rowNumber);
  return { counts, problems };
}
