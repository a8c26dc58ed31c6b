/**
 * Small platform seams: the time and the ids. A request carries them in its context (src/app.ts);
 * background work (queue consumers, the cron, Durable Objects) reads {@link platform}. Nothing else
 * in src/ reads the system clock or mints a random UUID (test/conventions/seams.test.ts), so tests
 * drive time and ids instead of sleeping or matching whatever came out.
 */
export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  uuid(): string;
}

export interface Platform {
  clock: Clock;
  ids: IdGenerator;
}

export const systemClock: Clock = { now: () => new Date() };

export const randomIds: IdGenerator = { uuid: () => crypto.randomUUID() };

let current: Platform = { clock: systemClock, ids: randomIds };

/** The clock and the id generator of this isolate: the system's, unless a test replaced them. */
export function platform(): Platform {
  return current;
}

/** The current time in milliseconds since the epoch, from the platform's clock. */
export function nowMs(): number {
  return current.clock.now().getTime();
}

/**
 * Tests: background work (and requests of an app made without its own clock) reads `replacement`
 * until the returned function puts the previous seams back. Tests share the isolate with the Worker
 * (vitest-pool-workers), so this reaches the queue consumer, the cron and Durable Objects alike.
 */
export function replacePlatform(replacement: Partial<Platform>): () => void {
  const previous = current;
  current = { ...current, ...replacement };
  return () => {
    current = previous;
  };
}
