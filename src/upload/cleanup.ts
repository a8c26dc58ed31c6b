/**
 * The upload area's part of the minute cron:
 *
 * 1. Expired uploads: an unfinished one is aborted in R2 and its rows (the invisible file row
 *    included) removed; a completed one only loses its upload row (kept for repeated completions).
 * 2. Orphan objects: an object under `files/` older than an hour whose file has no ready row and no
 *    upload row is deleted. They come from a failure between the object write and the row insert
 *    (POST /Files), a crash between R2's completion and the row update, or a row delete whose
 *    object delete failed. The sweep walks the bucket one page per run, resuming after the last key
 *    it saw (kept in the object SWEEP_CURSOR_KEY), so each minute costs one list call however many
 *    files there are.
 */
import type { Bindings } from "../env";
import type { Logger } from "../pkg/logger";
import { fileIdOfKey, FILES_PREFIX } from "./storage";
import { abortInR2 } from "./uploads/service";
import { removeUploadStatements, type UploadRow } from "./uploads/store";

/** An object younger than this may still be waiting for its row (a POST in flight). */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;
export const SWEEP_CURSOR_KEY = "_system/orphan-sweep-cursor";
const SWEEP_PAGE = 1000;
const EXPIRED_PER_RUN = 50;
const R2_ABANDON_MS = 7 * 24 * 60 * 60 * 1000;

export interface CleanupResult {
  expiredUploads: number;
  orphansDeleted: number;
}

export async function cleanUpUploads(env: Bindings, now: Date, log: Logger): Promise<CleanupResult> {
  const expiredUploads = await removeExpiredUploads(env, now, log);
  const orphansDeleted = await sweepOrphans(env, now, log);
  if (expiredUploads + orphansDeleted > 0) log.info("upload cleanup", { expiredUploads, orphansDeleted });
  return { expiredUploads, orphansDeleted };
}

async function removeExpiredUploads(env: Bindings, now: Date, log: Logger): Promise<number> {
  const { results } = await env.DB.prepare(
    `SELECT u.*, f.state AS file_state FROM file_uploads u LEFT JOIN files f ON f.id = u.file_id
     WHERE u.expires_at < ?1 ORDER BY u.expires_at LIMIT ?2`,
  )
    .bind(now.toISOString(), EXPIRED_PER_RUN)
    .all<UploadRow & { file_state: string | null }>();
  let removed = 0;
  for (const upload of results) {
    try {
      if (upload.file_state !== "uploading") {
        // Completed (or its file since deleted): the R2 upload is finished; only the row is left.
        await env.DB.batch(removeUploadStatements(env.DB, upload, { withFile: false }));
      } else {
        await abortInR2(env.UPLOADS, upload).catch((error: unknown) => {
          // R2 aborts incomplete uploads itself after 7 days; past that, an abort that keeps failing
          // must not keep the rows forever.
          if (now.getTime() - Date.parse(upload.created_at) < R2_ABANDON_MS) throw error;
        });
        await env.DB.batch(removeUploadStatements(env.DB, upload, { withFile: true }));
      }
      removed++;
    } catch (error) {
      // One bad upload must not block the others; it is tried again next minute.
      log.warn("expired upload not removed", { uploadId: upload.id, error: String(error) });
    }
  }
  return removed;
}

async function sweepOrphans(env: Bindings, now: Date, log: Logger): Promise<number> {
  const cursorObject = await env.UPLOADS.get(SWEEP_CURSOR_KEY);
  const startAfter = cursorObject ? await cursorObject.text() : undefined;
  const page = await env.UPLOADS.list({ prefix: FILES_PREFIX, limit: SWEEP_PAGE, ...(startAfter ? { startAfter } : {}) });
  const cutoff = now.getTime() - ORPHAN_GRACE_MS;
  const old = page.objects.filter((o) => o.uploaded.getTime() < cutoff);

  const orphans: string[] = [];
  if (old.length > 0) {
    const keysByFile = new Map<string, string[]>();
    for (const object of old) {
      const fileId = fileIdOfKey(object.key);
      // A key we did not generate is not ours to judge; leave it.
      if (!fileId) continue;
      keysByFile.set(fileId, [...(keysByFile.get(fileId) ?? []), object.key]);
    }
    const ids = JSON.stringify([...keysByFile.keys()]);
    const [files, uploads] = await env.DB.batch<{ r2_key: string }>([
      env.DB.prepare("SELECT r2_key FROM files WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'ready'").bind(ids),
      env.DB.prepare("SELECT r2_key FROM file_uploads WHERE file_id IN (SELECT value FROM json_each(?1))").bind(ids),
    ]);
    const kept = new Set([...(files?.results ?? []), ...(uploads?.results ?? [])].map((r) => r.r2_key));
    for (const keys of keysByFile.values()) for (const key of keys) if (!kept.has(key)) orphans.push(key);
    if (orphans.length > 0) {
      await env.UPLOADS.delete(orphans);
      log.warn("orphan upload objects deleted", { count: orphans.length, sample: orphans.slice(0, 5) });
    }
  }

  // Resume after this page next minute; at the end of the bucket, start over.
  const last = page.objects[page.objects.length - 1]?.key;
  if (page.truncated && last) await env.UPLOADS.put(SWEEP_CURSOR_KEY, last);
  else if (cursorObject) await env.UPLOADS.delete(SWEEP_CURSOR_KEY);
  return orphans.length;
}
