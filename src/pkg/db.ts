/**
 * Write helpers shared by every domain: the write context (time, actor, request), optimistic
 * concurrency inside one `db.batch()`, and mapping of constraint failures to API errors.
 */
import type { Database } from "../db/statements";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { EventContext } from "../events/outbox";
import { ApiError, type FieldProblem } from "./errors";
import { ifMatchToken, newEtagToken } from "./etag";
import { auditReasonOf } from "./audit-reason";

export interface WriteContext extends EventContext {
  db: Database;
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
    // A machine client (client credentials) or a scoped token of the service's own runs speaks for no person.
    actorType: principal && (principal.kind === "client" || principal.jobId || principal.monitorRef) ? "client" : "user",
    reason: auditReasonOf(c),
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
export async function runBatch(db: Database, statements: D1PreparedStatement[], onUnique?: () => ApiError): Promise<D1Result[]> {
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

/**
 * The marker a failed {@link assertStatement} raises inside D1. SQLite has no RAISE outside triggers,
 * so the assertion fails with an error whose message carries the marker: json_extract() with a
 * malformed path reports that path ("bad JSON path: 'integrity-edge-assertion'"). A real JSON error in
 * the same batch (a malformed document, another bad path) never names it, so it is not taken for a
 * refused condition (a 412) but surfaces as the error it is.
 */
const ASSERTION_MARKER = "integrity-edge-assertion";

/**
 * A statement that aborts its whole `db.batch()` unless `condition` (trusted SQL over bound
 * parameters `?1…`) holds when it runs. D1 runs a batch as one transaction, so a batch that writes
 * many rows can be guarded once, at its start, instead of guarding every statement: a failed
 * assertion rolls everything back. Catch it with {@link isAssertionFailure}.
 */
export function assertStatement(db: Database, condition: string, ...bindings: unknown[]): D1PreparedStatement {
  // CASE evaluates only the branch it takes, so the path is read (and refused) only when the condition fails.
  const statement = db.prepare(`SELECT CASE WHEN (${condition}) THEN 1 ELSE json_extract('{}', '${ASSERTION_MARKER}') END AS ok`);
  return bindings.length > 0 ? statement.bind(...bindings) : statement;
}

/** True when a batch failed because one of its {@link assertStatement}s did not hold. */
export function isAssertionFailure(error: unknown): boolean {
  return error instanceof Error && error.message.includes(`'${ASSERTION_MARKER}'`);
}
