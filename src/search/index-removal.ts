/**
 * Deleting a custom index: its saved queries (the queries' owner's statements, each with its event)
 * and its own rows (the indices' owner's), in one batch. The caller empties its Durable Object.
 */
import { ApiError } from "../pkg/errors";
import type { WriteContext } from "../pkg/db";
import { assertVersion } from "../pkg/resource";
import { deleteQueriesOfIndexStatements } from "./queries";
import { deleteIndexStatements, type IndexRow } from "./store";

/** Deletes a custom index with its saved queries, schedule and logs (the caller empties its Durable Object). */
export async function deleteIndex(ctx: WriteContext, row: IndexRow): Promise<void> {
  if (row.type !== "custom")
    throw new ApiError("Conflict", `'${row.name}' is a standard index; only custom indices can be deleted (spec 4.2 rule 9).`, {
      errors: [{ field: "path.id", rule: "customOnly", message: "Only a custom index can be deleted." }],
    });
  assertVersion(ctx, row.etag);
  // The queries first: each names the index (a foreign key).
  await ctx.db.batch([...(await deleteQueriesOfIndexStatements(ctx, row.id)), ...deleteIndexStatements(ctx, row)]);
}
