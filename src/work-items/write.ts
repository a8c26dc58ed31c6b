/**
 * The write loop shared by work items and activities. Each write is one db.batch() that starts with
 * assertions (the entity and every template revision read are still as read); when one fails the
 * whole batch rolls back and the write starts over from fresh reads, at most {@link MAX_ATTEMPTS}
 * times. A first use of an activity template recorded meanwhile by another request (a primary key
 * clash in work_item_activity_templates / work_item_templates) is retried the same way.
 */
import type { Database } from "../db/statements";
import { ApiError } from "../pkg/errors";
import { assertStatement, isAssertionFailure, isUniqueViolation } from "../pkg/db";

export const MAX_ATTEMPTS = 3;

/** Test seam: runs between the reads of an attempt and its batch (e.g. to change a template meanwhile). */
export interface WriteHooks {
  beforeWrite?: (attempt: number) => Promise<void>;
}

/** Runs `attempt` until it returns a value; `undefined` means "a guard failed, read again". */
export async function retrying<T>(what: string, attempt: (n: number) => Promise<T | undefined>): Promise<T> {
  for (let n = 1; n <= MAX_ATTEMPTS; n++) {
    const done = await attempt(n);
    if (done !== undefined) return done;
  }
  throw new ApiError(
    "Conflict",
    `The ${what} or the templates it is based on kept changing while it was written (${MAX_ATTEMPTS} attempts); try again.`,
  );
}

/** Runs a guarded batch; undefined when a guard failed (the batch changed nothing). */
export async function runGuarded(db: Database, statements: D1PreparedStatement[]): Promise<D1Result[] | undefined> {
  try {
    return await db.batch(statements);
  } catch (error) {
    if (isAssertionFailure(error) || isUniqueViolation(error)) return undefined;
    throw error;
  }
}

/** Asserts that a row of `table` (our constant) still carries the etag that was read. */
export function etagAssertion(db: Database, table: "work_items" | "activities", id: string, etag: string): D1PreparedStatement {
  return assertStatement(db, `EXISTS (SELECT 1 FROM ${table} WHERE id = ?1 AND etag = ?2)`, id, etag);
}
