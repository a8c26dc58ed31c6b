/**
 * The asset catalogue in D1. Kind and parent never change after creation, so `plant_id` (derived on
 * create from the parent chain) stays true without ever being rewritten.
 */
import { tableStatements, type Database, type Insert } from "../db/statements";
import { assets } from "../db/schema";
import { nameKey } from "../pkg/unicode";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import { ApiError, invalid, notFound, type FieldProblem } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import {
  assertStatement,
  conflict,
  isAssertionFailure,
  isForeignKeyViolation,
  newEtagToken,
  parseJson,
  runBatch,
  type WriteContext,
} from "../pkg/db";
import type { Versioned } from "../pkg/resource";
import type { AssetKind } from "./designations";
import { PARENT_RULES, type Asset, type AssetInput, type AssetUpdate } from "./schema";
import { assertVersion, retryWrite } from "../pkg/resource";
import { noPlanOnAssetAssertion, plansOnAsset } from "../plans/store";

export interface AssetRow {
  id: string;
  kind: AssetKind;
  name: string;
  parent_id: string | null;
  plant_id: string | null;
  metadata: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  parent_kind: AssetKind | null;
  parent_name: string | null;
  plant_name: string | null;
}

const KIND = "asset";

/** Columns of a read, with the parent's and the plant's names (aliases a, par, pl). */
export const ASSET_SELECT =
  "a.id, a.kind, a.name, a.parent_id, a.plant_id, a.metadata, a.etag, a.created_at, a.updated_at, par.kind AS " +
  "parent_kind, par.name AS parent_name, pl.name AS plant_name";
export const ASSET_JOINS = ["LEFT JOIN assets par ON par.id = a.parent_id", "LEFT JOIN assets pl ON pl.id = a.plant_id"];

/** FNV-1a, 32 bits, as hex: enough to tell two short texts apart in an ETag. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/**
 * The ETag of a read: the row's token, plus the names it shows of its parent and plant (renaming
 * either does not touch this row), so a 304 never serves a stale parent or plant name.
 */
function representationEtag(row: AssetRow): string {
  const shown = [row.parent_id === null ? "" : row.parent_name, row.plant_id === null || row.plant_id === row.id ? "" : row.plant_name];
  return shown.every((name) => !name) ? row.etag : `${row.etag}-${shortHash(shown.join("|"))}`;
}

export function toAsset(row: AssetRow): Versioned<Asset> {
  return {
    value: {
      id: row.id,
      kind: row.kind,
      name: row.name,
      parentId: row.parent_id,
      parent:
        row.parent_id && row.parent_kind && row.parent_name !== null
          ? { id: row.parent_id, kind: row.parent_kind, name: row.parent_name }
          : null,
      plant: row.plant_id && row.plant_name !== null ? { id: row.plant_id, name: row.plant_name } : null,
      metadata: parseJson<Record<string, unknown>>(row.metadata),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: representationEtag(row),
  };
}

async function readRow(db: Database, id: string): Promise<AssetRow | null> {
  return db
    .prepare(`SELECT ${ASSET_SELECT} FROM assets a ${ASSET_JOINS.join(" ")} WHERE a.id = ?1`)
    .bind(id.toLowerCase())
    .first<AssetRow>();
}

export async function getAsset(db: Database, id: string): Promise<Versioned<Asset>> {
  const row = await readRow(db, id);
  if (!row) throw notFound("Asset", id);
  return toAsset(row);
}

const plantNameTaken = (name: string) =>
  conflict(`A plant named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "Plant names are unique (case-insensitive)." },
  ]);

/**
 * Assets not written yet that a row may name (an import's dry run: what its earlier rows would have
 * created): by id (a parent), and plants by name (a plant's name is unique).
 */
export interface PendingAssets {
  byId(id: string): AssetRow | undefined;
  plantsNamed(key: string): readonly AssetRow[];
}

const NONE_PENDING: PendingAssets = { byId: () => undefined, plantsNamed: () => [] };

/**
 * Checks the parent against the kind's rules; returns the parent row (or null) and the derived plant
 * id. `pending`: assets not written yet that may be the parent (an import's dry run: earlier rows).
 */
async function checkParent(
  db: Database,
  kind: AssetKind,
  parentId: string | null,
  pending: PendingAssets,
): Promise<{ parent: AssetRow | null; plantId: string | null }> {
  const rule = PARENT_RULES[kind];
  if (parentId === null) {
    if (!rule.optional) throw invalid("body.parentId", "required", `A ${kind} needs a parent: ${rule.parents.join(" or ")}.`);
    return { parent: null, plantId: null };
  }
  if (rule.parents.length === 0) throw invalid("body.parentId", "parentKind", `A ${kind} has no parent.`);
  const parent = pending.byId(parentId) ?? (await readRow(db, parentId));
  if (!parent) throw invalid("body.parentId", "exists", `The asset ${parentId} does not exist.`);
  if (!rule.parents.includes(parent.kind)) {
    throw invalid(
      "body.parentId",
      "parentKind",
      `A ${kind}'s parent must be a ${rule.parents.join(" or ")}; '${parent.name}' is a ${parent.kind}.`,
    );
  }
  return { parent, plantId: parent.kind === "plant" ? parent.id : parent.plant_id };
}

function readBack(
  row: Omit<AssetRow, "parent_kind" | "parent_name" | "plant_name">,
  parent: AssetRow | null,
  plantName: string | null,
): Versioned<Asset> {
  return toAsset({ ...row, parent_kind: parent?.kind ?? null, parent_name: parent?.name ?? null, plant_name: plantName });
}

async function runWrite(db: Database, statements: D1PreparedStatement[], name: string): Promise<D1Result[]> {
  try {
    return await runBatch(db, statements, () => plantNameTaken(name));
  } catch (error) {
    // The parent was deleted between the check and the write.
    if (isForeignKeyViolation(error)) throw conflict("The parent asset was deleted meanwhile.");
    throw error;
  }
}

/** True when a plant other than `selfId` has this name (ignoring case), written or `pending`. */
async function plantNameTakenBy(db: Database, name: string, selfId: string, pending: PendingAssets): Promise<boolean> {
  const key = nameKey(name);
  if (pending.plantsNamed(key).some((row) => row.id !== selfId)) return true;
  const found = await db
    .prepare("SELECT 1 AS taken FROM assets WHERE kind = 'plant' AND name_key = ?1 AND id <> ?2")
    .bind(key, selfId)
    .first<{ taken: number }>();
  return found !== null;
}

/**
 * Checks an asset as {@link createAsset} would with the id `id`, writing nothing, and answers the row it
 * would write (read shape). `pending`: assets earlier rows of an import's dry run would have created,
 * by id, which may be its parent (or hold its plant's name). Spreadsheet imports dry-run rows with it.
 */
export async function validateAsset(db: Database, input: AssetInput, id: string, pending: PendingAssets = NONE_PENDING): Promise<AssetRow> {
  const { parent, plantId } = await checkParent(db, input.kind, input.parentId?.toLowerCase() ?? null, pending);
  if (input.kind === "plant" && (await plantNameTakenBy(db, input.name, id, pending))) throw plantNameTaken(input.name);
  return {
    id,
    kind: input.kind,
    name: input.name,
    parent_id: parent?.id ?? null,
    plant_id: input.kind === "plant" ? id : plantId,
    metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
    etag: "",
    created_at: "",
    updated_at: "",
    parent_kind: parent?.kind ?? null,
    parent_name: parent?.name ?? null,
    plant_name: input.kind === "plant" ? input.name : parent?.kind === "plant" ? parent.name : (parent?.plant_name ?? null),
  };
}

/** What a replacement may not change: its kind and its parent (400 immutable). */
function immutableProblems(input: AssetUpdate, current: AssetRow): FieldProblem[] {
  const errors: FieldProblem[] = [];
  if (input.kind !== current.kind)
    errors.push({ field: "body.kind", rule: "immutable", message: `The kind cannot be changed (it is ${current.kind}).` });
  if (input.parentId !== undefined && (input.parentId?.toLowerCase() ?? null) !== current.parent_id) {
    errors.push({
      field: "body.parentId",
      rule: "immutable",
      message: "The parent cannot be changed; create the asset under its new parent instead.",
    });
  }
  return errors;
}

const validationFailed = (errors: FieldProblem[]) =>
  new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });

/** Checks a replacement as {@link updateAsset} would (without If-Match), writing nothing: for an import's dry run. */
export async function validateAssetUpdate(db: Database, input: AssetUpdate): Promise<void> {
  const current = await readRow(db, input.id);
  if (!current) throw notFound("Asset", input.id);
  const errors = immutableProblems(input, current);
  if (errors.length > 0) throw validationFailed(errors);
  if (current.kind === "plant" && (await plantNameTakenBy(db, input.name, current.id, NONE_PENDING))) throw plantNameTaken(input.name);
}

/**
 * Assets named `name` (ignoring case), at most `limit`: for a spreadsheet row naming its parent by
 * name. Read shape, with the plant each belongs to.
 */
export async function assetsNamed(db: Database, name: string, limit = 20): Promise<AssetRow[]> {
  const { results } = await db
    .prepare(
      `SELECT ${ASSET_SELECT} FROM assets a ${ASSET_JOINS.join(" ")} WHERE a.kind IN ('organization', 'plant', 'mainSystem', ` +
        `'equipment', 'designObject') AND a.name_key = ?1 ORDER BY a.created_at, a.id LIMIT ?2`,
    )
    .bind(nameKey(name), limit)
    .all<AssetRow>();
  return results;
}

/**
 * Creates an asset. `extra` statements join the write's batch (an import's record of the row it
 * wrote), so they are written exactly when the asset is.
 */
export async function createAsset(
  ctx: WriteContext,
  input: AssetInput,
  extra: readonly D1PreparedStatement[] = [],
): Promise<Versioned<Asset>> {
  const { parent, plantId: parentPlant } = await checkParent(ctx.db, input.kind, input.parentId?.toLowerCase() ?? null, NONE_PENDING);
  const id = ctx.uuid();
  const plantId = input.kind === "plant" ? id : parentPlant;
  const plantName = input.kind === "plant" ? input.name : parent?.kind === "plant" ? parent.name : (parent?.plant_name ?? null);
  const row = {
    id,
    kind: input.kind,
    name: input.name,
    parent_id: parent?.id ?? null,
    plant_id: plantId,
    metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
    etag: newEtagToken(),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  const created = readBack(row, parent, plantName);
  await runWrite(
    ctx.db,
    [
      insertAssetStatement(ctx.db, {
        id,
        kind: row.kind,
        name: row.name,
        parentId: row.parent_id,
        plantId: row.plant_id,
        metadata: row.metadata,
        etag: row.etag,
        createdAt: ctx.now,
        updatedAt: ctx.now,
        createdBy: ctx.actorId,
      }),
      ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: created.value, etag: created.etag }),
      ...extra,
    ],
    input.name,
  );
  return created;
}

/** Replaces an asset; `extra` statements join the write's batch, as for {@link createAsset} (only if the asset is written). */
export async function updateAsset(
  ctx: WriteContext,
  input: AssetUpdate,
  extra: readonly D1PreparedStatement[] = [],
): Promise<Versioned<Asset>> {
  return retryWrite(ctx, async () => {
    const current = await readRow(ctx.db, input.id);
    if (!current) throw notFound("Asset", input.id);
    assertVersion(ctx, toAsset(current).etag);
    const errors = immutableProblems(input, current);
    if (errors.length > 0) throw validationFailed(errors);
    const etag = newEtagToken();
    const metadata = input.metadata === null ? null : JSON.stringify(input.metadata);
    const updated = toAsset({
      ...current,
      name: input.name,
      metadata,
      etag,
      updated_at: ctx.now,
      plant_name: current.kind === "plant" ? input.name : current.plant_name,
    });
    // With extra statements, the batch first asserts the version it read, so they are never written without the asset.
    const guard =
      extra.length > 0
        ? [assertStatement(ctx.db, "EXISTS (SELECT 1 FROM assets WHERE id = ?1 AND etag = ?2)", current.id, current.etag)]
        : [];
    let results: D1Result[];
    try {
      results = await runWrite(
        ctx.db,
        [
          ...guard,
          ctx.db
            .prepare("UPDATE assets SET name = ?1, name_key = ?7, metadata = ?2, etag = ?3, updated_at = ?4 WHERE id = ?5 AND etag = ?6")
            .bind(input.name, metadata, etag, ctx.now, current.id, current.etag, nameKey(input.name)),
          ...guardedOutboxStatements(
            ctx.db,
            ctx,
            { entityKind: KIND, entityId: current.id, action: "updated", payload: updated.value, etag: updated.etag },
            { table: "assets", etag },
          ),
          ...extra,
        ],
        input.name,
      );
    } catch (error) {
      if (isAssertionFailure(error)) throw preconditionFailed();
      throw error;
    }
    if (results[guard.length]?.meta.changes !== 1) throw preconditionFailed();
    return updated;
  });
}

/**
 * What keeps an asset: designations, children, files whose access metadata names it, channels measured
 * on it, and inspection plans that generate work on it.
 */
const USES_SQL = `SELECT
    (SELECT count(*) FROM designations WHERE asset_id = ?1) AS designations,
    (SELECT count(*) FROM assets WHERE parent_id = ?1) AS children,
    (SELECT count(*) FROM files WHERE object_id = ?1) AS files,
    (SELECT count(*) FROM channels WHERE asset_id = ?1) AS channels`;

async function uses(db: Database, id: string): Promise<string[]> {
  const row = await db.prepare(USES_SQL).bind(id).first<{ designations: number; children: number; files: number; channels: number }>();
  const reasons: string[] = [];
  if (row?.designations) reasons.push(`${row.designations} designation(s) of deviations, activities or work items`);
  if (row?.children) reasons.push(`${row.children} child asset(s)`);
  if (row?.files) reasons.push(`${row.files} file(s) whose access metadata names it`);
  if (row?.channels) reasons.push(`${row.channels} channel(s) measured on it`);
  const plans = await plansOnAsset(db, id);
  if (plans.length > 0)
    reasons.push(`the inspection plan${plans.length > 1 ? "s" : ""} ${plans.map((p) => `'${p.name}' (${p.id})`).join(", ")}`);
  return reasons;
}

export async function deleteAsset(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await readRow(ctx.db, id);
    if (!current) throw notFound("Asset", id);
    assertVersion(ctx, toAsset(current).etag);
    const inUse = async () => {
      const reasons = await uses(ctx.db, current.id);
      return reasons.length > 0 ? new ApiError("InUse", `The asset '${current.name}' is still used by ${reasons.join(", ")}.`) : null;
    };
    const refused = await inUse();
    if (refused) throw refused;
    try {
      const [, , removed] = await ctx.db.batch([
        // Re-checked inside the batch, so a designation, child or plan added since the check above aborts it.
        assertStatement(
          ctx.db,
          "NOT EXISTS (SELECT 1 FROM designations WHERE asset_id = ?1) AND NOT EXISTS (SELECT 1 FROM assets WHERE " +
            "parent_id = ?1) AND NOT EXISTS (SELECT 1 FROM files WHERE object_id = ?1)",
          current.id,
        ),
        noPlanOnAssetAssertion(ctx.db, current.id),
        ctx.db.prepare("DELETE FROM assets WHERE id = ?1 AND etag = ?2").bind(current.id, current.etag),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: current.id, action: "deleted", payload: null },
          "previousChanged",
        ),
      ]);
      if (removed?.meta.changes !== 1) throw preconditionFailed();
    } catch (error) {
      if (isAssertionFailure(error) || isForeignKeyViolation(error)) throw (await inUse()) ?? preconditionFailed();
      throw error;
    }
  });
}

const assetTable = tableStatements(assets);

/** Inserts an asset (its name key derived from its name). */
export function insertAssetStatement(db: Database, values: Omit<Insert<typeof assets>, "nameKey">): D1PreparedStatement {
  return assetTable.insert(db, { ...values, nameKey: nameKey(values.name) });
}
