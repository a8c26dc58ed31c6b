/**
 * Saved queries (spec 2.10): a search request for one index, owned by a user, with free metadata
 * (`metadata.action = { isVisible, order }` places it on the "My Actions" page). The request is
 * checked against the index's mapping when saved, so an unknown field is named then, not at run time.
 */
import { tableStatements, type Database } from "../db/statements";
import { searchQueries } from "../db/schema";
import { z } from "@hono/zod-openapi";
import { updateBodyOf, assertVersion, retryWrite } from "../pkg/resource";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import type { Principal } from "../pkg/auth";
import { newEtagToken, parseJson, type WriteContext } from "../pkg/db";
import { ApiError, invalid, notFound } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import { PERMISSIONS } from "../pkg/permissions";
import { planSearch, SearchRequestSchema, type SearchRequest } from "./query";
import { mappingOf, maySeeIndex, readIndexRow, type IndexRow } from "./store";

export const QUERY_KIND = "searchQuery";

export interface QueryRow {
  id: string;
  name: string;
  description: string | null;
  owner_id: string;
  owner_name: string | null;
  index_id: string;
  query_object: string;
  metadata: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
}

const Owner = z.object({ id: z.string().min(1).max(200), name: z.string().max(200).nullable().optional() });
const ActionSchema = z
  .object({ isVisible: z.boolean(), order: z.number().int() })
  .strict()
  .openapi({ description: "Place on the My Actions page." });
const MetadataSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    if (value.action !== undefined && !ActionSchema.safeParse(value.action).success) {
      ctx.addIssue({
        code: "custom",
        path: ["action"],
        message: "metadata.action must be { isVisible: boolean, order: integer } (no other keys)",
      });
    }
    if (JSON.stringify(value).length > 16_384) ctx.addIssue({ code: "custom", message: "metadata is at most 16 KiB of JSON" });
  })
  .openapi({
    description: "Free JSON; `action` must be `{ isVisible: boolean, order: integer }` when present.",
    example: { action: { isVisible: true, order: 1 } },
  });

const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(4000).nullable().optional(),
  objectOwner: Owner.optional().openapi({ description: "Defaults to the caller; another owner needs query_read_all." }),
  index: z.object({ id: z.uuid(), name: z.string().optional() }).openapi({ description: "The index the query runs on." }),
  queryObject: SearchRequestSchema,
  metadata: MetadataSchema.nullable().optional(),
};
export const CreateQuerySchema = z.object(fields).strict().openapi("CreateSavedQuery");

export const SavedQuerySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    objectOwner: z.object({ id: z.string(), name: z.string().nullable() }),
    index: z.object({ id: z.string(), name: z.string().nullable() }),
    queryObject: SearchRequestSchema,
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdDate: z.string(),
    modifiedDate: z.string(),
  })
  .openapi("SavedQuery");
export const UpdateQuerySchema = updateBodyOf(SavedQuerySchema, fields, "UpdateSavedQuery");

export function toQuery(row: QueryRow & { index_name?: string | null }) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    index: { id: row.index_id, name: row.index_name ?? null },
    queryObject: JSON.parse(row.query_object) as SearchRequest,
    metadata: parseJson<Record<string, unknown>>(row.metadata),
    createdDate: row.created_at,
    modifiedDate: row.updated_at,
  };
}

const SELECT = "SELECT q.*, i.name AS index_name FROM search_queries q LEFT JOIN search_indices i ON i.id = q.index_id";

/** A saved query the caller may read (their own, or any with query_read_all), or 404. */
export async function visibleQuery(db: Database, principal: Principal, id: string): Promise<QueryRow & { index_name: string | null }> {
  const row = await db.prepare(`${SELECT} WHERE q.id = ?1`).bind(id).first<QueryRow & { index_name: string | null }>();
  if (!row || (row.owner_id !== principal.id && !principal.permissions.has(PERMISSIONS.queryReadAll))) throw notFound("Query", id);
  return row;
}

/** The index a query is saved for: one the caller sees, with a mapping the request is valid against. */
async function checkedIndex(
  db: Database,
  principal: Principal,
  apiVersion: string,
  indexId: string,
  request: SearchRequest,
): Promise<IndexRow> {
  const index = await readIndexRow(db, indexId);
  if (!index || !maySeeIndex(principal, index, apiVersion))
    throw invalid("body.index.id", "exists", `There is no index ${indexId} you may see.`);
  const mapping = mappingOf(index);
  if (!mapping)
    throw new ApiError(
      "Conflict",
      `Index '${index.name}' has not synchronised yet, so its fields are not known; save the query after its first synchronisation.`,
    );
  planSearch(mapping, request, "body.queryObject");
  return index;
}

function ownerOf(principal: Principal, given: z.infer<typeof Owner> | undefined): { id: string; name: string | null } {
  if (!given || given.id === principal.id) return { id: principal.id, name: principal.name ?? null };
  if (!principal.permissions.has(PERMISSIONS.queryReadAll))
    throw new ApiError("Forbidden", "Saving a query for another owner needs the permission 'query_read_all'.");
  return { id: given.id, name: given.name ?? null };
}

const queryTable = tableStatements(searchQueries);

/** The columns a create and an update both write. */
function queryColumns(input: z.infer<typeof CreateQuerySchema>, owner: { id: string; name: string | null }) {
  return {
    name: input.name,
    description: input.description ?? null,
    ownerId: owner.id,
    ownerName: owner.name,
    indexId: input.index.id,
    queryObject: JSON.stringify(input.queryObject),
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
  };
}

export async function createQuery(ctx: WriteContext, principal: Principal, apiVersion: string, input: z.infer<typeof CreateQuerySchema>) {
  await checkedIndex(ctx.db, principal, apiVersion, input.index.id, input.queryObject);
  const id = ctx.uuid();
  const owner = ownerOf(principal, input.objectOwner);
  const etag = newEtagToken();
  await ctx.db.batch([
    queryTable.insert(ctx.db, {
      ...queryColumns(input, owner),
      id,
      etag,
      createdAt: ctx.now,
      updatedAt: ctx.now,
      createdBy: ctx.actorId,
    }),
    ...outboxStatements(ctx.db, ctx, {
      entityKind: QUERY_KIND,
      entityId: id,
      action: "created",
      payload: { id, name: input.name, indexId: input.index.id },
    }),
  ]);
  return visibleQuery(ctx.db, principal, id);
}

/** Only the owner changes or deletes a saved query (with query_write). */
function assertOwner(principal: Principal, row: QueryRow) {
  if (row.owner_id !== principal.id) throw new ApiError("Forbidden", "Only the owner of a saved query may change or delete it.");
}

export async function updateQuery(ctx: WriteContext, principal: Principal, apiVersion: string, input: z.infer<typeof UpdateQuerySchema>) {
  return retryWrite(ctx, async () => {
    const current = await visibleQuery(ctx.db, principal, input.id);
    assertOwner(principal, current);
    assertVersion(ctx, current.etag);
    await checkedIndex(ctx.db, principal, apiVersion, input.index.id, input.queryObject);
    const owner = ownerOf(principal, input.objectOwner);
    const etag = newEtagToken();
    const [updated] = await ctx.db.batch([
      queryTable.update(ctx.db, { ...queryColumns(input, owner), etag, updatedAt: ctx.now }, { id: input.id, etag: current.etag }),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        {
          entityKind: QUERY_KIND,
          entityId: input.id,
          action: "updated",
          payload: { id: input.id, name: input.name, indexId: input.index.id },
        },
        { table: "search_queries", etag },
      ),
    ]);
    if (updated!.meta.changes === 0) throw preconditionFailed();
    return (await ctx.db.prepare(`${SELECT} WHERE q.id = ?1`).bind(input.id).first<QueryRow & { index_name: string | null }>())!;
  });
}

export async function deleteQuery(ctx: WriteContext, principal: Principal, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await visibleQuery(ctx.db, principal, id);
    assertOwner(principal, current);
    assertVersion(ctx, current.etag);
    const [deleted] = await ctx.db.batch([
      ctx.db.prepare("DELETE FROM search_queries WHERE id = ?1 AND etag = ?2").bind(id, current.etag),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: QUERY_KIND, entityId: id, action: "deleted", payload: null },
        "previousChanged",
      ),
    ]);
    if (deleted!.meta.changes === 0) throw preconditionFailed();
  });
}

/**
 * The statements that delete an index's saved queries, each with its `deleted` event. The ids are read
 * first, so a query saved between this read and the batch goes without its event.
 */
export async function deleteQueriesOfIndexStatements(ctx: WriteContext, indexId: string): Promise<D1PreparedStatement[]> {
  const { results } = await ctx.db.prepare("SELECT id FROM search_queries WHERE index_id = ?1").bind(indexId).all<{ id: string }>();
  return [
    ctx.db.prepare("DELETE FROM search_queries WHERE index_id = ?1").bind(indexId),
    ...results.flatMap((q) => outboxStatements(ctx.db, ctx, { entityKind: QUERY_KIND, entityId: q.id, action: "deleted", payload: null })),
  ];
}
