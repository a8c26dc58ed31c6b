/**
 * Capped counts remembered per isolate for a minute. They only steer the choice of plan (every plan
 * returns the same rows), so a stale count costs at worst a slower plan, while a list that is paged
 * through or refreshed skips the round trip the counts cost (the counts do not depend on skip and
 * take). Bounded: at most MAX_ENTRIES keys of at most MAX_KEY_LENGTH characters (a filter with a
 * long `in` list is simply counted every time).
 */
import { nowMs } from "../../platform/services";
export const ESTIMATE_TTL_MS = 60_000;
const MAX_ENTRIES = 500;
const MAX_KEY_LENGTH = 4000;

const entries = new Map<string, { counts: number[]; expires: number }>();

export function cachedCounts(key: string, now = nowMs()): number[] | undefined {
  const entry = entries.get(key);
  if (!entry) return undefined;
  if (entry.expires <= now) {
    entries.delete(key);
    return undefined;
  }
  return entry.counts;
}

export function rememberCounts(key: string, counts: number[], now = nowMs()): void {
  if (key.length > MAX_KEY_LENGTH) return;
  entries.delete(key);
  entries.set(key, { counts, expires: now + ESTIMATE_TTL_MS });
  // Maps iterate in insertion order: the first key is the oldest.
  for (const oldest of entries.keys()) {
    if (entries.size <= MAX_ENTRIES) break;
    entries.delete(oldest);
  }
}
