/** Output types in D1: a name and an optional JSON Schema, checked when saved (./json-schema.ts). */
import type { Database } from "../db/statements";
import { nameKey } from "../pkg/unicode";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import { conflict, newEtagToken, parseJson, runBatch, type WriteContext } from "../pkg/db";
import { ApiError, notFound } from "../pkg/errors";
import type { OutputTypeRecord } from "./contract";
import { schemaProblems } from "./json-schema";
import type { OutputType } from "./schema";
import { assertVersion, commitVersioned, retryWrite } from "../pkg/resource";

export interface OutputTypeRow {
  id: string;
  name: string;
  schema: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

const KIND = "outputType";
export const toOutputType = (row: OutputTypeRow): OutputType => ({
  id: row.id,
  name: row.name,
  schema: parseJson(row.schema),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});
const nameTaken = (name: string) =>
  conflict(`An output type named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used." },
  ]);

function checkSchema(schema: unknown): void {
  if (schema === null) return;
  const problems = schemaProblems(schema);
  if (problems.length > 0) {
    throw new ApiError("ValidationFailed", `body.schema is not a valid JSON Schema: ${problems.map((p) => p.message).join("; ")}.`, {
      // A pattern's field is its place in the schema: body.schema.properties.code.pattern.
      errors: problems.map(({ pointer, rule, message }) => ({
        field: `body.schema${pointer
          .split("/")
          .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
          .join(".")}`,
        rule,
        message,
      })),
    });
  }
}

export async function getOutputType(db: Database, id: string): Promise<{ value: OutputType; etag: string }> {
  const row = await db.prepare("SELECT * FROM output_types WHERE id = ?1").bind(id).first<OutputTypeRow>();
  if (!row) throw notFound("Output type", id);
  return { value: toOutputType(row), etag: row.etag };
}

/** The output type as outputs are validated against it, or null. */
export async function loadOutputType(db: Database, id: string): Promise<OutputTypeRecord | null> {
  const row = await db.prepare("SELECT id, name, schema FROM output_types WHERE id = ?1").bind(id).first<OutputTypeRow>();
  return row ? { id: row.id, name: row.name, schema: parseJson(row.schema) } : null;
}

export async function createOutputType(
  ctx: WriteContext,
  input: { name: string; schema: unknown },
): Promise<{ value: OutputType; etag: string }> {
  checkSchema(input.schema);
  const id = ctx.uuid();
  const etag = newEtagToken();
  const schema = input.schema === null ? null : JSON.stringify(input.schema);
  await runBatch(
    ctx.db,
    [
      ctx.db
        .prepare(
          "INSERT INTO output_types (id, name, schema, etag, created_at, updated_at, created_by, name_key) VALUES (?1, " +
            "?2, ?3, ?4, ?5, ?5, ?6, ?7)",
        )
        .bind(id, input.name, schema, etag, ctx.now, ctx.actorId, nameKey(input.name)),
      ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: { id, name: input.name } }),
    ],
    () => nameTaken(input.name),
  );
  return getOutputType(ctx.db, id);
}

export async function updateOutputType(
  ctx: WriteContext,
  input: { id: string; name: string; schema: unknown },
): Promise<{ value: OutputType; etag: string }> {
  return retryWrite(ctx, async () => {
    const current = await getOutputType(ctx.db, input.id);
    assertVersion(ctx, current.etag);
    checkSchema(input.schema);
    const etag = newEtagToken();
    await commitVersioned(
      ctx,
      [
        ctx.db
          .prepare("UPDATE output_types SET name = ?1, name_key = ?7, schema = ?2, etag = ?3, updated_at = ?4 WHERE id = ?5 AND etag = ?6")
          .bind(
            input.name,
            input.schema === null ? null : JSON.stringify(input.schema),
            etag,
            ctx.now,
            input.id,
            current.etag,
            nameKey(input.name),
          ),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: input.id, action: "updated", payload: { id: input.id, name: input.name } },
          { table: "output_types", etag },
        ),
      ],
      () => nameTaken(input.name),
    );
    return getOutputType(ctx.db, input.id);
  });
}

export async function deleteOutputType(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getOutputType(ctx.db, id);
    assertVersion(ctx, current.etag);
    const used = await ctx.db
      .prepare("SELECT name FROM job_configurations WHERE output_type_id = ?1 LIMIT 1")
      .bind(id)
      .first<{ name: string }>();
    if (used) throw new ApiError("InUse", `Job configuration '${used.name}' uses this output type.`);
    const [removed] = await ctx.db.batch([
      ctx.db
        .prepare(
          "DELETE FROM output_types WHERE id = ?1 AND etag = ?2 " +
            "AND NOT EXISTS (SELECT 1 FROM job_configurations WHERE output_type_id = ?1)",
        )
        .bind(id, current.etag),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1) throw new ApiError("Conflict", "The output type changed while it was being deleted; read it again.");
  });
}
