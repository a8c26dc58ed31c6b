/**
 * Running a committed (or large dry-run) import, one step at a time, by the import's own Durable Object
 * (ImportRunner, durable-objects/import-runner.ts: one alarm, one step). Two kinds of step, each safe to
 * run again:
 *   - split: the file is read once, streamed, into chunks of CHUNK_ROWS rows stored in R2
 *     (imports/<id>/chunks/<n>.json); the import learns its total and turns running;
 *   - chunk n: the rows of chunk n (CHUNK_ROWS rows); the runner's next alarm runs chunk n + 1, and the
 *     minute cron pokes the runner of a stalled import.
 * A chunk counts once (store.recordChunk); a row is written once (import_rows). An interrupted step is
 * run again (the alarm's retry, or the cron's poke) and finds the rows it wrote already written
 * (skipped). The last chunk ends the import (its `updated` event, which webhooks hear) and removes the
 * chunks.
 */
import type { Bindings } from "../env";
import type { WriteContext } from "../pkg/db";
import { errorFields, type Logger } from "../pkg/logger";
import { platform } from "../platform/services";
import { FileProblem, sheetRows, type SheetFormat, type SheetRow } from "./read";
import { processRows } from "./rows";
import type { Carry } from "./kinds/kind";
import { driveImport, headersOf, opener, readLimits, rowsJob, sourceKeyOf, type ImportMessage } from "./service";
import { finishImport, findImport, markSplit, recordChunk, storedMapping, type ImportRow } from "./store";
import { ApiError } from "../pkg/errors";

/** Rows per chunk object: one step's work. */
export const CHUNK_ROWS = 100;
/**
 * Failures of the same step in a row after which the import fails (with GIVEN_UP): the runtime's alarm
 * retries and the cron's pokes both count.
 */
export const MAX_STEP_ATTEMPTS = 6;

const chunkKey = (id: string, chunk: number) => `imports/${id}/chunks/${chunk}.json`;
const headersKey = (id: string) => `imports/${id}/headers.json`;

/** Who a background step writes as: the person who committed the import. */
function writeContextOf(env: Bindings, row: ImportRow): WriteContext {
  const { clock, ids } = platform();
  return {
    db: env.DB,
    now: clock.now().toISOString(),
    actorId: row.createdBy,
    actorName: row.createdByName,
    actorType: "user",
    cause: `import ${row.id}`,
    requestId: null,
    uuid: () => ids.uuid(),
    expectedEtag: undefined,
  };
}

async function fail(env: Bindings, row: ImportRow, problem: { rule: string; message: string }): Promise<void> {
  await finishImport(env.DB, writeContextOf(env, row), row.id, "failed", problem);
}

async function split(env: Bindings, row: ImportRow): Promise<ImportMessage | null> {
  let headers: string[] | null = null;
  let chunk: SheetRow[] = [];
  let chunks = 0;
  let total = 0;
  const flush = async () => {
    if (chunk.length === 0) return;
    await env.UPLOADS.put(chunkKey(row.id, chunks), JSON.stringify(chunk));
    chunks++;
    chunk = [];
  };
  let header: SheetRow | undefined;
  for await (const batch of sheetRows(row.format as SheetFormat, opener(env.UPLOADS, row.sourceKey), readLimits(env))) {
    for (const sheetRow of batch) {
      if (!header) {
        header = sheetRow;
        continue;
      }
      chunk.push(sheetRow);
      total++;
      if (chunk.length >= CHUNK_ROWS) await flush();
    }
  }
  await flush();
  headers = headersOf(header, "file");
  await env.UPLOADS.put(headersKey(row.id), JSON.stringify(headers));
  await markSplit(env.DB, row.id, total, chunks, platform().clock.now().toISOString());
  if (chunks > 0) return { importId: row.id, step: "chunk", chunk: 0 };
  await finish(env, row);
  return null;
}

async function finish(env: Bindings, row: ImportRow): Promise<void> {
  await finishImport(env.DB, writeContextOf(env, row), row.id, "completed", null);
  const keys: string[] = [];
  for (let n = 0; n < (row.chunks ?? 0); n++) keys.push(chunkKey(row.id, n));
  keys.push(headersKey(row.id));
  for (let at = 0; at < keys.length; at += 1000) await env.UPLOADS.delete(keys.slice(at, at + 1000));
  if (row.fileId === null && row.sourceKey === sourceKeyOf(row.id)) await env.UPLOADS.delete(row.sourceKey);
}

/**
 * Chunk `chunk` of the import `row` (as read at the start of this step), counted once; answers the step
 * after it (null: the import ended, or the chunk was counted already).
 */
async function runChunk(
  env: Bindings,
  row: ImportRow,
  chunk: number,
  log: Logger,
  carryOf?: (chunk: number) => Carry,
): Promise<ImportMessage | null> {
  // Counted already (a step run twice), or the import ended: nothing to do.
  if (row.status !== "running" || row.chunks === null || row.chunksDone !== chunk) return null;
  const headersObject = await env.UPLOADS.get(headersKey(row.id));
  if (!headersObject) throw new Error(`import ${row.id}: its headers are not stored`);
  const headers = (await headersObject.json()) as string[];
  const job = rowsJob(row.id, row.kind, row.importKey, row.dryRun, headers, storedMapping(row), row.rowKeyColumn);
  const object = await env.UPLOADS.get(chunkKey(row.id, chunk));
  if (!object) throw new Error(`import ${row.id}: chunk ${chunk} is not stored`);
  const rows = (await object.json()) as SheetRow[];
  const write = writeContextOf(env, row);
  const outcome = await processRows(env.DB, write, job, rows, row.dryRun ? carryOf?.(chunk) : undefined);
  await recordChunk(env.DB, row.id, chunk, outcome.counts, outcome.problems, write.now);
  if (chunk + 1 >= row.chunks) {
    await finish(env, row);
    log.info("import completed", { importId: row.id, chunks: row.chunks });
    return null;
  }
  return { importId: row.id, step: "chunk", chunk: chunk + 1 };
}

/** The step an import needs next, from its row (null: it has ended). */
export function stepOf(row: Pick<ImportRow, "id" | "status" | "chunks" | "chunksDone">): ImportMessage | null {
  if (row.status === "completed" || row.status === "failed") return null;
  return row.chunks === null ? { importId: row.id, step: "split" } : { importId: row.id, step: "chunk", chunk: row.chunksDone };
}

/** Imports not moved on for this long get their runner poked by the minute cron. */
const STALLED_MS = 30_000;

/**
 * The minute cron's safety net: the runner of an import that has not moved on for STALLED_MS (its alarm
 * lost, or its retries spent) is poked, and runs the step the import needs. A step that is in fact still
 * running is not overlapped: the runner runs its next alarm after it.
 */
export async function resumeStalledImports(env: Bindings, now: Date): Promise<number> {
  const before = new Date(now.getTime() - STALLED_MS).toISOString();
  const { results } = await env.DB.prepare(
    "SELECT id FROM imports WHERE status IN ('queued', 'running') AND updated_at < ?1 ORDER BY updated_at LIMIT 50",
  )
    .bind(before)
    .all<{ id: string }>();
  await Promise.all(results.map((r) => driveImport(env, r.id)));
  return results.length;
}

/**
 * Runs one step of an import; answers the message of the step after it (null: none). A file that turns
 * out unreadable fails the import (its problem says why). `carryOf(chunk)`: what a dry run's earlier
 * chunks keep for chunk `chunk` (its runner's storage); without it each chunk of a dry run stands alone.
 * `read`: the import's row as the caller has just read it (its runner, which runs one step at a time),
 * so the step does not read it again; without it, the step reads it.
 */
export async function runImportStep(
  env: Bindings,
  message: ImportMessage,
  log: Logger,
  carryOf?: (chunk: number) => Carry,
  read?: ImportRow,
): Promise<ImportMessage | null> {
  const row = read?.id === message.importId ? read : await findImport(env.DB, message.importId);
  if (!row || row.status === "completed" || row.status === "failed") return null;
  try {
    if (message.step === "split") return row.status === "queued" || row.chunks === null ? await split(env, row) : null;
    return await runChunk(env, row, message.chunk, log, carryOf);
  } catch (error) {
    if (error instanceof FileProblem) await fail(env, row, { rule: error.rule, message: error.message });
    else if (error instanceof ApiError && error.status === 400)
      await fail(env, row, { rule: error.errors?.[0]?.rule ?? "file", message: error.message });
    else {
      log.error("import step failed", { importId: row.id, step: message.step, ...errorFields(error) });
      throw error;
    }
    return null;
  }
}

/** A step that failed again and again (MAX_STEP_ATTEMPTS in a row) fails its import: the rows written so far stay. */
export async function giveUpImport(env: Bindings, importId: string): Promise<void> {
  const row = await findImport(env.DB, importId);
  if (row && row.status !== "completed" && row.status !== "failed")
    await fail(env, row, {
      rule: "failed",
      message: "A step of the import failed again and again; the rows written so far stay (commit it again to finish it).",
    });
}
