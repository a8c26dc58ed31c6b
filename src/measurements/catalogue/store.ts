/**
 * The owner of channel_catalogue: channel types, data origins and channel availabilities, one table
 * told apart by `kind`, each kind a resource of its own (./routes.ts). Built-in rows (the migration's)
 * can be renamed, never deleted; a row a channel uses is InUse.
 */
import { z } from "@hono/zod-openapi";
import { tableStatements, type Database, type Row } from "../../db/statements";
import { channelCatalogue } from "../../db/schema";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import type { EntityKind } from "../../events/kinds";
import { assertStatement, conflict, isAssertionFailure, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import { ApiError, notFound } from "../../pkg/errors";
import { compileListQuery, defineList, listQueryShape, noProperties, runListQuery, equals } from "../../pkg/query";
import { assertVersion, commitVersioned, retryWrite, type Versioned } from "../../pkg/resource";
import { nameKey } from "../../pkg/unicode";
import { storedEnum } from "../../monitors/stored";
import { QUANTITIES, unitsOf, type CatalogueInput, type CatalogueKind, type Quantity } from "./schema";

const catalogueTable = tableStatements(channelCatalogue);
export type CatalogueRow = Row<typeof channelCatalogue>;
const catalogueRow = (raw: Record<string, unknown>): CatalogueRow => catalogueTable.row(raw);

/** What each kind is called in messages and which column of channels names it. */
export const KIND_INFO: Record<CatalogueKind, { what: string; channelColumn: string }> = {
  channelType: { what: "Channel type", channelColumn: "channel_type_id" },
  dataOrigin: { what: "Data origin", channelColumn: "data_origin_id" },
  channelAvailability: { what: "Channel availability", channelColumn: "availability_id" },
};

export interface CatalogueEntry {
  id: string;
  name: string;
  description: string | null;
  builtIn: boolean;
  quantity?: Quantity;
  units?: string[];
  acceptsReadings?: boolean;
  createdAt: string;
  updatedAt: string;
}

export function toEntry(row: CatalogueRow): Versioned<CatalogueEntry> {
  const base = { id: row.id, name: row.name, description: row.description, builtIn: row.builtIn };
  const dates = { createdAt: row.createdAt, updatedAt: row.updatedAt };
  if (row.kind === "channelType") {
    const quantity = storedEnum(QUANTITIES, row.quantity ?? "other", "channel_catalogue.quantity");
    return { value: { ...base, quantity, units: [...unitsOf(quantity)], ...dates }, etag: row.etag };
  }
  if (row.kind === "channelAvailability")
    return { value: { ...base, acceptsReadings: row.acceptsReadings === true, ...dates }, etag: row.etag };
  return { value: { ...base, ...dates }, etag: row.etag };
}

const list = defineList({
  table: "channel_catalogue",
  alias: "cc",
  // The engine's property filters key on it; catalogue entries have no property values (noProperties).
  entityKind: "channelType",
  idColumn: "id",
  fields: {
    name: { column: "cc.name_key", displayColumn: "cc.name" },
    builtIn: { column: "cc.built_in", type: "boolean" },
    createdAt: { column: "cc.created_at", type: "datetime" },
    updatedAt: { column: "cc.updated_at", type: "datetime" },
  },
  searchColumns: ["cc.name", "cc.description"],
  defaultOrder: "name asc",
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const CatalogueListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or description." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, builtIn, createdAt, updatedAt. Default: name asc.",
  }),
  skip,
  take,
  includeTotal,
});

export async function listCatalogue(db: Database, kind: CatalogueKind, query: z.infer<typeof CatalogueListQuery>) {
  const page = await runListQuery(db, await compileListQuery(list, query, noProperties, [equals("cc.kind", kind)]));
  return { items: page.items.map((raw) => toEntry(catalogueRow(raw)).value), total: page.total };
}

/** The rows of these ids (any kind), for the channels' checks and reads. */
export async function catalogueRows(db: Database, ids: readonly string[]): Promise<Map<string, CatalogueRow>> {
  const { results } = await db
    .prepare(`SELECT ${catalogueTable.columns} FROM channel_catalogue WHERE id IN (SELECT value FROM json_each(?1))`)
    .bind(JSON.stringify([...new Set(ids.map((id) => id.toLowerCase()))]))
    .all<Record<string, unknown>>();
  return new Map(results.map(catalogueRow).map((r) => [r.id, r]));
}

async function readRow(db: Database, kind: CatalogueKind, id: string): Promise<CatalogueRow> {
  const raw = await db
    .prepare(`SELECT ${catalogueTable.columns} FROM channel_catalogue WHERE id = ?1 AND kind = ?2`)
    .bind(id.toLowerCase(), kind)
    .first<Record<string, unknown>>();
  if (!raw) throw notFound(KIND_INFO[kind].what, id);
  return catalogueRow(raw);
}

export async function getCatalogueEntry(db: Database, kind: CatalogueKind, id: string): Promise<Versioned<CatalogueEntry>> {
  return toEntry(await readRow(db, kind, id));
}

const nameTaken = (kind: CatalogueKind, name: string) => () =>
  conflict(`A ${KIND_INFO[kind].what.toLowerCase()} named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used in this catalogue." },
  ]);

function valuesOf(kind: CatalogueKind, input: CatalogueInput) {
  return {
    name: input.name,
    nameKey: nameKey(input.name),
    description: input.description,
    quantity: kind === "channelType" ? (input.quantity ?? "other") : null,
    acceptsReadings: kind === "channelAvailability" ? (input.acceptsReadings ?? true) : null,
  };
}

export async function createCatalogueEntry(
  ctx: WriteContext,
  kind: CatalogueKind,
  input: CatalogueInput,
): Promise<Versioned<CatalogueEntry>> {
  const row: CatalogueRow = {
    id: ctx.uuid(),
    kind,
    ...valuesOf(kind, input),
    builtIn: false,
    etag: newEtagToken(),
    createdAt: ctx.now,
    updatedAt: ctx.now,
    createdBy: ctx.actorId,
  };
  const created = toEntry(row);
  await runBatch(
    ctx.db,
    [
      catalogueTable.insert(ctx.db, row),
      ...outboxStatements(ctx.db, ctx, { entityKind: kind as EntityKind, entityId: row.id, action: "created", payload: created.value }),
    ],
    nameTaken(kind, input.name),
  );
  return created;
}

/** A channel type's quantity can change only while no channel has a unit the new quantity refuses. */
async function checkQuantityChange(db: Database, current: CatalogueRow, quantity: Quantity): Promise<void> {
  if (current.kind !== "channelType" || current.quantity === quantity) return;
  const allowed = unitsOf(quantity);
  const bad = await db
    .prepare("SELECT unit FROM channels WHERE channel_type_id = ?1 AND unit NOT IN (SELECT value FROM json_each(?2)) LIMIT 1")
    .bind(current.id, JSON.stringify(allowed))
    .first<{ unit: string }>();
  if (bad)
    throw new ApiError("Conflict", `Channels of this type measure in ${bad.unit}, which a ${quantity} type does not accept.`, {
      errors: [{ field: "body.quantity", rule: "inUse", message: `Channels of this type have the unit ${bad.unit}.` }],
    });
}

export async function updateCatalogueEntry(
  ctx: WriteContext,
  kind: CatalogueKind,
  input: CatalogueInput & { id: string },
): Promise<Versioned<CatalogueEntry>> {
  return retryWrite(ctx, async () => {
    const current = await readRow(ctx.db, kind, input.id);
    const expected = assertVersion(ctx, current.etag);
    if (kind === "channelType") await checkQuantityChange(ctx.db, current, input.quantity ?? "other");
    const row: CatalogueRow = { ...current, ...valuesOf(kind, input), etag: newEtagToken(), updatedAt: ctx.now };
    const updated = toEntry(row);
    await commitVersioned(
      ctx,
      [
        catalogueTable.update(ctx.db, { ...valuesOf(kind, input), etag: row.etag, updatedAt: ctx.now }, { id: row.id, etag: expected }),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: kind as EntityKind, entityId: row.id, action: "updated", payload: updated.value },
          { table: "channel_catalogue", etag: row.etag },
        ),
      ],
      nameTaken(kind, input.name),
    );
    return updated;
  });
}

export async function deleteCatalogueEntry(ctx: WriteContext, kind: CatalogueKind, id: string): Promise<void> {
  await retryWrite(ctx, async () => {
    const current = await readRow(ctx.db, kind, id);
    const expected = assertVersion(ctx, current.etag);
    if (current.builtIn) throw new ApiError("Conflict", `${current.name} is built in: it can be renamed, not deleted.`);
    const column = KIND_INFO[kind].channelColumn;
    const uses = await ctx.db.prepare(`SELECT count(*) AS n FROM channels WHERE ${column} = ?1`).bind(current.id).first<{ n: number }>();
    if ((uses?.n ?? 0) > 0) throw new ApiError("InUse", `${KIND_INFO[kind].what} ${current.name} is used by ${uses!.n} channel(s).`);
    try {
      await commitVersioned(ctx, [
        catalogueTable.delete(ctx.db, { id: current.id, etag: expected }),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: kind as EntityKind, entityId: current.id, action: "deleted", payload: null },
          "previousChanged",
        ),
        // A channel given this entry since the count aborts the delete.
        assertStatement(ctx.db, `NOT EXISTS (SELECT 1 FROM channels WHERE ${column} = ?1)`, current.id),
      ]);
    } catch (error) {
      if (isAssertionFailure(error)) throw new ApiError("InUse", `${KIND_INFO[kind].what} ${current.name} is used by a channel.`);
      throw error;
    }
  });
}
