/**
 * Small platform seams passed in per request, so tests can pin time and ids without mocking globals.
 */
export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  uuid(): string;
}

export const systemClock: Clock = { now: () => new Date() };

export const randomIds: IdGenerator = { uuid: () => crypto.randomUUID() };
