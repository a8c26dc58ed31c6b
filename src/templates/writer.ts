/**
 * Every write of an existing template runs inside its TemplateWriter Durable Object (one object per
 * template id, `work:<id>` / `activity:<id>`), which runs the writes of one template one at a time.
 * That is what keeps 20 concurrent edits of a frozen revision from minting 20 copies: the second
 * edit reads the copy the first one made. The batch guards (revisions.ts) still hold on their own.
 *
 * The operation and its result cross the RPC boundary, so both are plain data: the route sends the
 * validated body, the object answers `{ ok, value, etag }` or `{ ok: false, problem }`, and the route
 * turns the problem back into the ApiError it was.
 */
import type { ActorType } from "../audit/store";
import type { Database } from "../db/statements";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError, type ErrorCode, type FieldProblem } from "../pkg/errors";
import type { WriteContext } from "../pkg/db";
import { writeContext } from "../pkg/db";
import type { IdGenerator } from "../platform/services";
import { runActivityTemplateOperation, type ActivityTemplateOperation } from "./activity/write";
import { runWorkTemplateOperation, type WorkTemplateOperation } from "./work/write";

export type TemplateOperation = WorkTemplateOperation | ActivityTemplateOperation;

/** The part of the write context that crosses the RPC boundary. */
export interface WriterContext {
  now: string;
  actorId: string | null;
  actorName: string | null;
  /** What the audit trail records of who and why (src/audit/store.ts). */
  actorType?: ActorType;
  reason?: string | null;
  requestId: string | null;
  expectedEtag: string | undefined;
}

export interface SerialisedProblem {
  code: ErrorCode;
  detail: string;
  errors?: FieldProblem[];
  headers?: Record<string, string>;
}

export type WriterResult = { ok: true; value: unknown; etag: string | null } | { ok: false; problem: SerialisedProblem };

export interface Written<T> {
  value: T;
  etag: string | null;
}

/**
 * Runs one operation against D1; an ApiError becomes a problem, anything else propagates (a 500).
 * New ids come from `ids`, the IdGenerator every writer takes its ids from (a function does not
 * cross the RPC boundary, so the object passes its own).
 */
export async function executeTemplateOperation(
  db: Database,
  context: WriterContext,
  operation: TemplateOperation,
  ids: IdGenerator,
): Promise<WriterResult> {
  const ctx: WriteContext = { ...context, db, uuid: () => ids.uuid() };
  try {
    const written =
      operation.template === "work" ? await runWorkTemplateOperation(ctx, operation) : await runActivityTemplateOperation(ctx, operation);
    return { ok: true, value: written.value, etag: written.etag };
  } catch (error) {
    if (error instanceof ApiError && error.code !== "Internal") {
      const problem: SerialisedProblem = { code: error.code, detail: error.message };
      if (error.errors) problem.errors = error.errors;
      if (error.headers) problem.headers = error.headers;
      return { ok: false, problem };
    }
    throw error;
  }
}

/** The name of the object that serialises a template's writes. */
export function writerName(operation: Pick<TemplateOperation, "template" | "id">): string {
  return `${operation.template}:${operation.id.toLowerCase()}`;
}

/** Sends an operation to the template's writer and returns its result, or throws its ApiError. */
export async function writeTemplate<T>(c: Context<AppEnv>, operation: TemplateOperation): Promise<Written<T>> {
  const ctx = writeContext(c);
  const context: WriterContext = {
    now: ctx.now,
    actorId: ctx.actorId,
    actorName: ctx.actorName,
    ...(ctx.actorType ? { actorType: ctx.actorType } : {}),
    reason: ctx.reason ?? null,
    requestId: ctx.requestId,
    expectedEtag: ctx.expectedEtag,
  };
  const stub = c.env.TEMPLATES.get(c.env.TEMPLATES.idFromName(writerName(operation)));
  const result = (await stub.write(context, operation)) as WriterResult;
  if (!result.ok) {
    const { code, detail, errors, headers } = result.problem;
    throw new ApiError(code, detail, { ...(errors ? { errors } : {}), ...(headers ? { headers } : {}) });
  }
  return { value: result.value as T, etag: result.etag };
}
