/**
 * Running a queued import (the IMPORTS queue, src/index.ts). Two kinds of step, each safe to run again:
 *   - split: the file is read once, streamed, into chunks of CHUNK_ROWS rows stored in R2
 *     (imports/<id>/chunks/<n>.json); the import learns its total and turns running;
 *   - chunk n: the rows of chunk n (CHUNK_ROWS rows), then a message for the next (STEP_MS); the
 *     minute cron hands a stalled import on again.
 * A chunk counts once (store.recordChunk); a row is written once (import_rows). An interrupted step is
 * redelivered by the queue and finds the rows it wrote already written (skipped). The last chunk ends
 * the import (its `updated` event, which webhooks hear) and removes the chunks.
 */
import type { Bindings } from "../env";
import type { WriteContext } from "../pkg/db";
import { errorFields, type Logger } from "../pkg/logger";
import { nowMs, platform } from "../platform/services";
import { FileProblem, sheetRows, type SheetFormat, type SheetRow } from "./read";
import { processRows } from "./rows";
import { headersOf, opener, readLimits, rowsJob, sourceKeyOf, type ImportMessage } from "./service";
import { finishImport, findImport, markSplit, recordChunk, storedMapping, type ImportRow } from "./store";
import { ApiError } from "../pkg/errors";

/** Rows per chunk object. */
export const CHUNK_ROWS = 100;
/**
 * How long one step works through chunks before it hands on to a message for the next: 0, one chunk
 * per step. Under Miniflare a message a step sent after several chunks was never delivered (and the
 * queue stalled) while one sent after each chunk was (docs/benchmarks.md, "Spreadsheet imports").
 */
const STEP_MS = 0;

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
 * Chunks in turn from `from`, each counted once, while the step's time (STEP_MS) lasts; then a message
 * for the next chunk (or the end). Each chunk is its own reads and batches, so requests are served
 * between and during them.
 */
async function runChunks(env: Bindings, first: ImportRow, from: number, log: Logger): Promise<ImportMessage | null> {
  const started = nowMs();
  const headersObject = await env.UPLOADS.get(headersKey(first.id));
  if (!headersObject) throw new Error(`import ${first.id}: its headers are not stored`);
  const headers = (await headersObject.json()) as string[];
  const job = rowsJob(first.id, first.kind, first.importKey, first.dryRun, headers, storedMapping(first), first.rowKeyColumn);
  for (let chunk = from; ; chunk++) {
    const row = await findImport(env.DB, first.id);
    // Counted already (a message delivered twice), or the import ended: nothing to do.
    if (!row || row.status !== "running" || row.chunks === null || row.chunksDone !== chunk) return null;
    const object = await env.UPLOADS.get(chunkKey(row.id, chunk));
    if (!object) throw new Error(`import ${row.id}: chunk ${chunk} is not stored`);
    const rows = (await object.json()) as SheetRow[];
    const write = writeContextOf(env, row);
    const outcome = await processRows(env.DB, write, job, rows);
    await recordChunk(env.DB, row.id, chunk, outcome.counts, outcome.problems, write.now);
    if (chunk + 1 >= row.chunks) {
      await finish(env, row);
      log.info("import completed", { importId: row.id, chunks: row.chunks });
      return null;
    }
    if (nowMs() - started >= STEP_MS) return { importId: row.id, step: "chunk", chunk: chunk + 1 };
  }
}

/** Imports not moved on for this long are handed to the queue again by the minute cron. */
const STALLED_MS = 30_000;

/**
 * The minute cron's safety net: an import whose step message was lost (or whose step died without a
 * retry) and that has not moved on for STALLED_MS gets the message of the step it needs. A step that
 * is in fact still running finds its chunk counted and does nothing.
 */
export async function resumeStalledImports(env: Bindings, now: Date): Promise<number> {
  const before = new Date(now.getTime() - STALLED_MS).toISOString();
  const { results } = await env.DB.prepare(
    "SELECT id, status, chunks, chunks_done FROM imports WHERE status IN ('queued', 'running') AND updated_at < ?1 " +
      "ORDER BY updated_at LIMIT 50",
  )
    .bind(before)
    .all<{ id: string; status: string; chunks: number | null; chunks_done: number }>();
  const messages = results.map((r): ImportMessage =>
    r.chunks === null ? { importId: r.id, step: "split" } : { importId: r.id, step: "chunk", chunk: r.chunks_done },
  );
  if (messages.length > 0) await env.IMPORTS.sendBatch(messages.map((body) => ({ body })));
  return messages.length;
}

/**
 * Runs one step of an import; answers the message of the step after it (null: none). A file that turns
 * out unreadable fails the import (its problem says why).
 */
export async function runImportStep(env: Bindings, message: ImportMessage, log: Logger): Promise<ImportMessage | null> {
  const row = await findImport(env.DB, message.importId);
  if (!row || row.status === "completed" || row.status === "failed") return null;
  try {
    if (message.step === "split") return row.status === "queued" || row.chunks === null ? await split(env, row) : null;
    return await runChunks(env, row, message.chunk, log);
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

/**
 * The IMPORTS queue's consumer: each message one step; a failing step is retried by the queue. The next
 * step's message is sent once this invocation has answered (waitUntil): under Miniflare a consumer that
 * sent to its own queue while its batch was in flight could stall the queue; a lost message is handed
 * on by the minute cron (resumeStalledImports).
 */
export async function consumeImports(batch: MessageBatch<ImportMessage>, env: Bindings, log: Logger, ctx: ExecutionContext): Promise<void> {
  for (const message of batch.messages) {
    try {
      const next = await runImportStep(env, message.body, log);
      message.ack();
      if (next)
        ctx.waitUntil(env.IMPORTS.send(next).catch((error: unknown) => log.warn("import step not handed on", { ...errorFields(error) })));
    } catch (error) {
      log.warn("import step will be retried", { importId: message.body.importId, attempts: message.attempts, ...errorFields(error) });
      message.retry({ delaySeconds: 2 });
    }
  }
}

/** The dead-letter queue's consumer: a step given up on fails its import. */
export async function consumeImportDeadLetters(batch: MessageBatch<ImportMessage>, env: Bindings): Promise<void> {
  for (const message of batch.messages) {
    const row = await findImport(env.DB, message.body.importId);
    if (row)
      await fail(env, row, {
        rule: "failed",
        message: "A step of the import failed again and again; the rows written so far stay (commit it again to finish it).",
      });
    message.ack();
  }
}
