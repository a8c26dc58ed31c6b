/**
 * Job outputs: structured results a running job posts with its own token. An output is stored only
 * when it matches its output type's schema (rule 6); a refused one creates nothing, is answered with
 * the schema errors and is recorded on the job so its owner sees why.
 */
import type { Database } from "../db/statements";
import type { Principal } from "../pkg/auth";
import { newEtagToken, type WriteContext } from "../pkg/db";
import { ApiError, notFound } from "../pkg/errors";
import { MAX_OUTPUT_BYTES, validateOutput } from "./json-schema";
import { ACTIVE_STATUSES, getJob, recordOutputRejection, type JobSpec } from "./jobs";
import { loadOutputType } from "./output-types";
import type { z } from "@hono/zod-openapi";
import { listJobOutputRows, type JobOutputListQuery } from "./list";
import type { JobOutput } from "./schema";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";

/** The outbox's entity kind of a job output: `jobOutput.created` when a job posts one, `deleted` when one is removed. */
export const JOB_OUTPUT_KIND = "jobOutput";

export interface JobOutputRow {
  id: string;
  job_id: string;
  job_output_type_id: string | null;
  output: string;
  created_at: string;
}

const toOutput = (row: JobOutputRow): JobOutput => ({
  id: row.id,
  jobId: row.job_id,
  jobOutputTypeId: row.job_output_type_id,
  output: JSON.parse(row.output),
  createdAt: row.created_at,
});

export async function createJobOutput(
  ctx: WriteContext,
  principal: Principal,
  input: { jobId: string; jobOutputTypeId: string | null; output: unknown },
): Promise<JobOutput> {
  if (principal.jobId !== undefined && principal.jobId !== input.jobId) {
    throw new ApiError("Forbidden", "A job token may post outputs of its own job only.");
  }
  const job = await getJob(ctx.db, input.jobId);
  if (!ACTIVE_STATUSES.includes(job.status))
    throw new ApiError("Conflict", `Job ${job.id} has ended (${job.status}); it takes no more outputs.`);
  const typeId = input.jobOutputTypeId ?? (JSON.parse(job.spec) as JobSpec).outputTypeId;
  const text = JSON.stringify(input.output ?? null);
  if (text.length > MAX_OUTPUT_BYTES) throw new ApiError("PayloadTooLarge", `An output is at most ${MAX_OUTPUT_BYTES} bytes of JSON.`);
  let errors: string[] = [];
  if (typeId) {
    const type = await loadOutputType(ctx.db, typeId);
    if (!type)
      throw new ApiError("ValidationFailed", `Output type ${typeId} does not exist.`, {
        errors: [{ field: "body.jobOutputTypeId", rule: "exists", message: `Output type ${typeId} does not exist.` }],
      });
    errors = validateOutput(type.schema, input.output);
  }
  if (errors.length > 0) {
    await recordOutputRejection(ctx.db, job, { at: ctx.now, jobOutputTypeId: typeId, errors });
    throw new ApiError("ValidationFailed", `The output does not match the schema of output type ${typeId}: ${errors.join("; ")}.`, {
      errors: errors.map((message) => ({ field: "body.output", rule: "schema", message })),
    });
  }
  const id = ctx.uuid();
  const created: JobOutput = { id, jobId: job.id, jobOutputTypeId: typeId, output: input.output ?? null, createdAt: ctx.now };
  await ctx.db.batch([
    ctx.db
      .prepare(
        "INSERT INTO job_outputs (id, job_id, job_output_type_id, output, etag, created_at, updated_at, created_by) " +
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
      )
      .bind(id, job.id, typeId, text, newEtagToken(), ctx.now, ctx.actorId),
    ...outboxStatements(ctx.db, ctx, { entityKind: JOB_OUTPUT_KIND, entityId: id, action: "created", payload: created }),
  ]);
  return created;
}

export async function getJobOutput(db: Database, id: string): Promise<JobOutput> {
  const row = await db.prepare("SELECT * FROM job_outputs WHERE id = ?1").bind(id).first<JobOutputRow>();
  if (!row) throw notFound("Job output", id);
  return toOutput(row);
}

/** A page of one job's outputs (GET /Jobs/{id}/Outputs): skip/take, order, includeTotal, as every list. */
export async function listJobOutputs(
  db: Database,
  jobId: string,
  query: z.infer<typeof JobOutputListQuery>,
): Promise<{ items: JobOutput[]; total: number | undefined }> {
  await getJob(db, jobId);
  const { items, total } = await listJobOutputRows(db, jobId, query);
  return { items: items.map(toOutput), total };
}

export async function deleteJobOutput(ctx: WriteContext, id: string): Promise<void> {
  const [deleted] = await ctx.db.batch([
    ctx.db.prepare("DELETE FROM job_outputs WHERE id = ?1").bind(id),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: JOB_OUTPUT_KIND, entityId: id, action: "deleted", payload: null },
      "previousChanged",
    ),
  ]);
  if (deleted!.meta.changes !== 1) throw notFound("Job output", id);
}
