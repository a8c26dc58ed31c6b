/**
 * The clock of the alarm tests (issue 33): the platform's Clock seam, driven forward by the test (never
 * a sleep), and the minute cron fired through the Worker's scheduled handler at the same time, as the
 * vitest-pool-workers helpers do it. The alarm timers are a fixed every-minute schedule of the minute
 * dispatcher: the first tick of a file registers it, and each later tick runs it once a minute has passed.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, expect } from "vitest";
import worker from "../../src/index";
import { replacePlatform } from "../../src/platform/services";

export const MINUTE = 60_000;

let now = 0;
let lastTick = 0;

/** The test's time, as the platform (requests, the loop, the cron) sees it. */
export const at = () => new Date(now);
export const iso = (offset = 0) => new Date(now + offset).toISOString();

/** Moves the clock forward by `ms`. */
export function advance(ms: number): void {
  now += ms;
}

/** Fires the minute cron now (at least a minute after the previous tick, or the dispatcher has nothing due). */
export async function tick(): Promise<void> {
  expect(now - lastTick, "the alarm timers run once a minute: advance the clock a minute between ticks").toBeGreaterThanOrEqual(MINUTE);
  lastTick = now;
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: now }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** Installs the test clock for a file: a second after a minute boundary, the timers' schedule registered by a first tick. */
export function useAlarmClock(): void {
  let restore: () => void = () => undefined;
  beforeAll(async () => {
    now = Math.ceil(Date.now() / MINUTE) * MINUTE + 1_000;
    lastTick = now - MINUTE;
    restore = replacePlatform({ clock: { now: () => new Date(now) } });
    await tick();
  });
  afterAll(() => restore());
}
