/**
 * Time for tests of background work: the platform's clock (src/platform/services.ts) moved ahead,
 * which queue consumers, the cron, Durable Objects and requests all read, instead of a sleep.
 */
import { replacePlatform } from "../../src/platform/services";

/** Moves the clock `ms` ahead of the system's until the returned function puts it back. */
export function clockAhead(ms: number): () => void {
  return replacePlatform({ clock: { now: () => new Date(Date.now() + ms) } });
}

/** Runs `work` with the clock `ms` ahead. */
export async function withClockAhead<T>(ms: number, work: () => Promise<T>): Promise<T> {
  const restore = clockAhead(ms);
  try {
    return await work();
  } finally {
    restore();
  }
}
