/**
 * The orphan sweep (minute cron). Objects are written before the row that names them and deleted
 * after it stops naming them, so a crash or failed request in between leaves objects no row names.
 * Each run lists one page of each prefix, continuing where the last run stopped (the position is
 * kept in a small object of the same bucket) and wrapping around at the end, so the whole bucket is
 * covered over successive runs at a bounded cost per run. An object is deleted when it is older than
 * an hour (an upload in flight is never touched) and no row names it.
 */
import type { Database } from "../db/statements";
import type { Bindings } from "../env";
import type { Logger } from "../pkg/logger";
import { referencedInstructionImageKeys } from "./instruction-image-store";
import { INSTRUCTION_IMAGE_PREFIX, MEDIA_PREFIX, mediaIdOfKey } from "./storage";
import { existingMediaIds } from "./store";

export const ORPHAN_MIN_AGE_MS = 60 * 60 * 1000;
const PAGE = 1000;
const CURSOR_PREFIX = "sweep-cursors/";

interface SweptPrefix {
  prefix: string;
  /** The keys of `keys` that something still names. */
  named(db: Database, keys: string[]): Promise<Set<string>>;
}

const PREFIXES: SweptPrefix[] = [
  {
    prefix: MEDIA_PREFIX,
    named: async (db, keys) => {
      const ids = [...new Set(keys.map(mediaIdOfKey).filter((id): id is string => id !== undefined))];
      const existing = await existingMediaIds(db, ids);
      return new Set(keys.filter((k) => existing.has(mediaIdOfKey(k) ?? "")));
    },
  },
  { prefix: INSTRUCTION_IMAGE_PREFIX, named: referencedInstructionImageKeys },
];

export interface SweepResult {
  listed: number;
  deleted: string[];
}

async function sweepPage(env: Bindings, swept: SweptPrefix, now: Date): Promise<SweepResult> {
  const cursorKey = `${CURSOR_PREFIX}${swept.prefix.replace(/\/$/, "")}`;
  const cursor = await env.MEDIA.get(cursorKey);
  const startAfter = cursor ? await cursor.text() : undefined;
  const page = await env.MEDIA.list({ prefix: swept.prefix, limit: PAGE, ...(startAfter ? { startAfter } : {}) });
  const old = page.objects.filter((o) => now.getTime() - o.uploaded.getTime() >= ORPHAN_MIN_AGE_MS).map((o) => o.key);
  const named = old.length > 0 ? await swept.named(env.DB, old) : new Set<string>();
  const orphans = old.filter((k) => !named.has(k));
  if (orphans.length > 0) await env.MEDIA.delete(orphans);
  const last = page.objects.at(-1)?.key;
  // At the end of the prefix, start again from the beginning next time.
  if (page.truncated && last) await env.MEDIA.put(cursorKey, last);
  else if (cursor) await env.MEDIA.delete(cursorKey);
  return { listed: page.objects.length, deleted: orphans };
}

/** One page of each prefix; returns what it deleted (also logged). */
export async function sweepMediaOrphans(env: Bindings, now: Date, log: Logger): Promise<SweepResult[]> {
  const results: SweepResult[] = [];
  for (const swept of PREFIXES) {
    const result = await sweepPage(env, swept, now);
    if (result.deleted.length > 0)
      log.warn("orphaned media objects deleted", { prefix: swept.prefix, count: result.deleted.length, keys: result.deleted.slice(0, 20) });
    results.push(result);
  }
  return results;
}
