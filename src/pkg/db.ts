/**
 * Write helpers shared by every domain: the write context (time, actor, request), optimistic
 * concurrency inside one `db.batch()`, and mapping of constraint failures to API errors.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { EventContext } from "../events/outbox";
import { ApiError, type FieldProblem } from "./errors";
import { ifMatchToken, newEtagToken } from "./etag";

export interface WriteContext extends EventContext {
  db: D1Database;
  actorName: string | null;
  uuid(): string;
  /** The If-Match token the caller sent, or undefined. */
  expectedEtag: string | undefined;
}

export function writeContext(c: Context<AppEnv>): WriteContext {
  const principal = c.get("principal");
  const ids = c.get("ids");
  return {
    db: c.env.DB,
    now: c.get("clock").now().toISOString(),
    actorId: principal?.id ?? null,
    actorName: principal?.name ?? null,
    requestId: c.get("requestId"),
    uuid: () => ids.uuid(),
    expectedEtag: ifMatchToken(c),
  };
}

export { newEtagToken };

/** True when a D1 error is a UNIQUE constraint failure. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/i.test(error.message);
}

export function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof Error && /FOREIGN KEY constraint failed/i.test(error.message);
}

export function conflict(detail: string, errors?: FieldProblem[]): ApiError {
  return new ApiError("Conflict", detail, errors ? { errors } : {});
}

/** Runs a batch and maps a unique-constraint failure to a 409 naming the field. */
export async function runBatch(
  db: D1Database,
  statements: D1PreparedStatement[],
  onUnique?: () => ApiError,
): Promise<D1Result[]> {
  try {
    return await db.batch(statements);
  } catch (error) {
    if (onUnique && isUniqueViolation(error)) throw onUnique();
    throw error;
  }
}

/** Parses a JSON column that may be null. */
export function parseJson<T>(text: string | null | undefined): T | null {
  return text === null || text === undefined ? null : (JSON.parse(text) as T);
}
