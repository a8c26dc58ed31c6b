/**
 * Writes of populations and their items. A population is part of its owner's representation (GET
 * /Models/{id}, /Monitors/{id} show it), so every change to one is a new version of the owner: the
 * owner's row takes a new ETag, guarded on the version the caller's If-Match names (or the one read),
 * the change follows only if that guard held, and the owner's `updated` event goes in the same batch.
 * A population's own ETag is therefore its owner's version.
 */
import type { Database } from "../../db/statements";
import { guardedOutboxStatements } from "../../events/outbox";
import { assertStatement, conflict, isAssertionFailure, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import { ApiError, invalid, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { assertVersion, type Versioned, retryWrite } from "../../pkg/resource";
import { getModelRow, newModelVersionStatement } from "../models/store";
import { getMonitorRow, newMonitorVersionStatement } from "../monitors/store";
import { storedEnum } from "../stored";
import { ASSET_KIND_OF, ASSET_TYPES, type AssetType, type Population, type PopulationOwner } from "./schema";
import {
  deleteItemStatement,
  deletePopulationStatement,
  insertItemStatement,
  insertPopulationStatement,
  ownerHasItem,
  populationOfOwner,
  renamePopulationStatement,
  toItem,
  toPopulations,
  type PopulationItem,
} from "./store";

/** What a population's owner is to its populations: its version, and the statement that gives it a new one. */
const OWNERS: Record<
  PopulationOwner,
  {
    table: string;
    read(db: Database, id: string): Promise<{ etag: string }>;
    newVersion(db: Database, id: string, version: string, etag: string, now: string): D1PreparedStatement;
  }
> = {
  model: { table: "models", read: getModelRow, newVersion: newModelVersionStatement },
  monitor: { table: "monitors", read: getMonitorRow, newVersion: newMonitorVersionStatement },
};

/** The owner's current version (404 when it does not exist), refused (412) when the caller's If-Match names another. */
async function ownerVersion(ctx: WriteContext, kind: PopulationOwner, ownerId: string): Promise<string> {
  return assertVersion(ctx, (await OWNERS[kind].read(ctx.db, ownerId)).etag);
}

/**
 * Runs `changes` as a new version of the owner: the owner's guarded update first, an assertion that
 * it applied (else the whole batch is refused: 412), the changes, then the owner's `updated` event.
 * Returns the owner's new version.
 */
async function commitOwnerVersion(
  ctx: WriteContext,
  owner: { kind: PopulationOwner; id: string; version: string },
  changes: D1PreparedStatement[],
  event: Record<string, unknown>,
  onUnique?: () => ApiError,
): Promise<string> {
  const { table, newVersion } = OWNERS[owner.kind];
  const etag = newEtagToken();
  try {
    await runBatch(
      ctx.db,
      [
        newVersion(ctx.db, owner.id, owner.version, etag, ctx.now),
        assertStatement(ctx.db, "changes() = 1"),
        ...changes,
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: owner.kind, entityId: owner.id, action: "updated", payload: { id: owner.id, ...event }, partial: true },
          { table, etag },
        ),
      ],
      onUnique,
    );
  } catch (error) {
    if (isAssertionFailure(error)) throw preconditionFailed();
    throw error;
  }
  return etag;
}

/** The population with its items and active alarms, versioned by its owner. */
export async function getPopulation(
  db: Database,
  kind: PopulationOwner,
  ownerId: string,
  populationId: string,
): Promise<Versioned<Population>> {
  const owner = await OWNERS[kind].read(db, ownerId);
  const row = await populationOfOwner(db, kind, ownerId, populationId, "path.populationId");
  const [population] = await toPopulations(db, [row]);
  return { value: population!, etag: owner.etag };
}

export async function addPopulation(
  ctx: WriteContext,
  kind: PopulationOwner,
  ownerId: string,
  input: { name: string; description: string | null; assetType: AssetType },
): Promise<Population> {
  return retryWrite(ctx, async () => {
    const id = ctx.uuid();
    const version = await ownerVersion(ctx, kind, ownerId);
    await commitOwnerVersion(
      ctx,
      { kind, id: ownerId, version },
      [insertPopulationStatement(ctx.db, { id, kind, ownerId, ...input }, ctx.now)],
      {
        change: "populationAdded",
      },
    );
    return { id, ...input, items: [] };
  });
}

/** PUT of a population: its name and description; its asset type and items stay (read-only in the body). */
export async function updatePopulation(
  ctx: WriteContext,
  kind: PopulationOwner,
  ownerId: string,
  input: { id: string; name: string; description: string | null },
): Promise<Versioned<Population>> {
  return retryWrite(ctx, async () => {
    const owner = await OWNERS[kind].read(ctx.db, ownerId);
    await populationOfOwner(ctx.db, kind, ownerId, input.id, "body.id");
    const version = assertVersion(ctx, owner.etag);
    const etag = await commitOwnerVersion(ctx, { kind, id: ownerId, version }, [renamePopulationStatement(ctx.db, input.id, input)], {
      change: "populationUpdated",
      populationId: input.id,
    });
    const [population] = await toPopulations(ctx.db, [await populationOfOwner(ctx.db, kind, ownerId, input.id, "body.id")]);
    return { value: population!, etag };
  });
}

export async function removePopulation(ctx: WriteContext, kind: PopulationOwner, ownerId: string, populationId: string): Promise<void> {
  return retryWrite(ctx, async () => {
    await populationOfOwner(ctx.db, kind, ownerId, populationId, "path.populationId");
    const version = await ownerVersion(ctx, kind, ownerId);
    await commitOwnerVersion(ctx, { kind, id: ownerId, version }, [deletePopulationStatement(ctx.db, populationId)], {
      change: "populationRemoved",
    });
  });
}

/** Adds an asset to a population: it must exist in the asset catalogue and be of the population's type. */
export async function addItem(
  ctx: WriteContext,
  kind: PopulationOwner,
  ownerId: string,
  populationId: string,
  field: string,
  input: { assetReference: { id: string; name?: string | null } },
): Promise<PopulationItem> {
  return retryWrite(ctx, async () => {
    const population = await populationOfOwner(ctx.db, kind, ownerId, populationId, field);
    const asset = await ctx.db
      .prepare("SELECT id, kind, name FROM assets WHERE id = ?1")
      .bind(input.assetReference.id)
      .first<{ id: string; kind: string; name: string }>();
    if (!asset)
      throw invalid("body.assetReference.id", "exists", `Asset ${input.assetReference.id} does not exist in the asset catalogue.`);
    const expected = ASSET_KIND_OF[storedEnum(ASSET_TYPES, population.assetType, "populations.asset_type")];
    if (asset.kind !== expected) {
      throw invalid(
        "body.assetReference.id",
        "assetType",
        `Population '${population.name}' holds ${population.assetType} assets; asset ${asset.id} is a ${asset.kind}, expected ${expected}.`,
      );
    }
    const id = ctx.uuid();
    const version = await ownerVersion(ctx, kind, ownerId);
    const item = { id, populationId, assetId: asset.id, assetName: asset.name };
    await commitOwnerVersion(
      ctx,
      { kind, id: ownerId, version },
      [insertItemStatement(ctx.db, item, ctx.now)],
      { change: "populationItemAdded" },
      () => conflict(`Asset ${asset.id} is already in population '${population.name}'.`),
    );
    return toItem({ ...item, criticality: null, lastMonitorJobId: null, createdAt: ctx.now });
  });
}

export async function removeItem(ctx: WriteContext, kind: PopulationOwner, ownerId: string, itemId: string): Promise<void> {
  return retryWrite(ctx, async () => {
    if (!(await ownerHasItem(ctx.db, kind, ownerId, itemId))) throw notFound("Population item", itemId);
    const version = await ownerVersion(ctx, kind, ownerId);
    await commitOwnerVersion(ctx, { kind, id: ownerId, version }, [deleteItemStatement(ctx.db, itemId)], {
      change: "populationItemRemoved",
    });
  });
}
