/**
 * Assets from a spreadsheet (issue 37: the equipment list of a new plant): a row becomes the body a
 * single `POST /Assets` (or, with an `id` column naming an existing asset, `PUT /Assets`) would take.
 * The rules are the single requests' own: the body is parsed with CreateAssetSchema / UpdateAssetSchema
 * and checked by validateAsset / validateAssetUpdate (the checks of createAsset / updateAsset), and
 * written by createAsset / updateAsset.
 *
 * Columns (shared with the export of GET /Assets): `id`, `kind`, `name`, `metadata` (JSON), the parent
 * by id (`parentId`, `parent.id`) or by name (`parent`, `parent.name`), and the plant (`plant`,
 * `plant.id`, `plant.name`, by id or name) that narrows a parent named by name. Rows run in file order,
 * so a parent can be a row above its children; a dry run sees the assets its earlier rows would create.
 */
import type { z } from "@hono/zod-openapi";
import type { Database } from "../../db/statements";
import { CreateAssetSchema, PARENT_RULES, UpdateAssetSchema, type Asset } from "../../assets/schema";
import {
  assetsNamed,
  createAsset,
  getAsset,
  updateAsset,
  validateAsset,
  validateAssetUpdate,
  type AssetRow,
  type PendingAssets,
} from "../../assets/store";
import type { AssetKind } from "../../assets/designations";
import { ApiError } from "../../pkg/errors";
import type { WriteContext } from "../../pkg/db";
import { PERMISSIONS } from "../../pkg/permissions";
import { nameKey } from "../../pkg/unicode";
import { fieldProblems } from "../../pkg/validation-messages";
import { existingOfId, metadataOfCell, UUID } from "./cells";
import { cached, type Carry, type Column, type ImportKind, type Planned, type RowContext, type RowProblem } from "./kind";
import { columnOf } from "./mapping";

/** `parentId` takes the parent's id or name; `plant` (id or name) narrows a parent named by name. */
const FIELDS = ["id", "kind", "name", "parentId", "plant", "metadata"];

/** Other headers of a field: a hand-made file's `parent`, the export's `plant.name`. */
const ALIASES: Record<string, string> = {
  parent: "parentId",
  "plant.name": "plant",
};

/**
 * Columns of an asset's read shape that are read-only: an exported file has them; they are not
 * imported (its `parentId` column names the parent; `plant.name` the plant).
 */
const READ_ONLY = /^(parent\.(id|kind|name)|plant\.id|createdAt|updatedAt)$/;

/**
 * What the rows of one import (one chunk) share: the assets its dry run's earlier rows would have
 * created (a later row's parent may be one; a queued dry run's earlier chunks' too, through its Carry),
 * and the assets found by name so far, forgotten when a row
 * creates or renames an asset of that name (the plant and parent columns of a long equipment list name
 * the same few assets again and again).
 */
interface Lookups {
  pending: Pending;
  writtenByName: Map<string, Promise<AssetRow[]>>;
  existing: Set<string>;
}

/** The assets a dry run's earlier rows would have created: by id, by name, and plants by name. */
interface Pending extends PendingAssets {
  named(key: string): readonly AssetRow[];
  add(row: AssetRow): void;
}

/** Pending assets of the rows of one request (or one chunk), in memory. */
function pendingInMemory(): Pending {
  const byId = new Map<string, AssetRow>();
  const byName = new Map<string, AssetRow[]>();
  return {
    byId: (id) => byId.get(id),
    named: (key) => byName.get(key) ?? [],
    plantsNamed: (key) => (byName.get(key) ?? []).filter((row) => row.kind === "plant"),
    add: (row) => {
      byId.set(row.id, row);
      const key = nameKey(row.name);
      byName.set(key, [...(byName.get(key) ?? []), row]);
    },
  };
}

/** Pending assets of a queued dry run, kept across its chunks by its runner (kind.ts, Carry). */
function pendingCarried(carry: Carry): Pending {
  return {
    byId: (id) => carry.byId(id) as AssetRow | undefined,
    named: (key) => carry.byKey(`name:${key}`) as AssetRow[],
    plantsNamed: (key) => carry.byKey(`plant:${key}`) as AssetRow[],
    add: (row) => {
      const key = nameKey(row.name);
      carry.add(row.id, row.kind === "plant" ? [`name:${key}`, `plant:${key}`] : [`name:${key}`], row);
    },
  };
}

const lookupsOf = (ctx: RowContext): Promise<Lookups> =>
  cached(ctx, "assets:lookups", () =>
    Promise.resolve({
      pending: ctx.carry ? pendingCarried(ctx.carry) : pendingInMemory(),
      writtenByName: new Map(),
      existing: new Set<string>(),
    }),
  );

type RowPlan =
  | { action: "create"; body: z.infer<typeof CreateAssetSchema>; lookups: Lookups }
  | { action: "update"; body: z.infer<typeof UpdateAssetSchema>; current: Asset; lookups: Lookups; unchanged: boolean };

/** Assets with this name, written or pending (a dry run's earlier rows), oldest first. */
async function named(ctx: RowContext, lookups: Lookups, name: string): Promise<AssetRow[]> {
  const key = nameKey(name);
  let written = lookups.writtenByName.get(key);
  if (!written) {
    written = assetsNamed(ctx.db, name);
    lookups.writtenByName.set(key, written);
  }
  return [...(await written), ...lookups.pending.named(key)];
}

/** The asset a cell names by id (written or pending), else by name; a problem when none or several. */
async function assetOfCell(
  ctx: RowContext,
  lookups: Lookups,
  text: string,
  options: { column: string; field: string; what: string; kinds: readonly AssetKind[] | null; plantId: string | null },
): Promise<{ id: string } | { problem: RowProblem }> {
  const { column, field, what } = options;
  if (UUID.test(text)) {
    const id = text.toLowerCase();
    if (lookups.pending.byId(id) || lookups.existing.has(id) || (await assetsById(ctx, id))) {
      lookups.existing.add(id);
      return { id };
    }
  }
  let found = await named(ctx, lookups, text);
  if (options.plantId !== null) found = found.filter((row) => row.plant_id === options.plantId);
  // The kinds the row's parent may be, when any of the named assets is one (else the single request says why the one found is not).
  const fitting = options.kinds === null ? found : found.filter((row) => options.kinds!.includes(row.kind));
  if (fitting.length > 0) found = fitting;
  if (found.length === 1) return { id: found[0]!.id };
  if (found.length === 0)
    return { problem: { column, field, rule: "exists", message: `No asset is named '${text}' (nor has it as id): ${what}.` } };
  return {
    problem: {
      column,
      field,
      rule: "ambiguous",
      message: `${found.length} assets are named '${text}': give the ${what}'s id, or the plant column to tell them apart.`,
    },
  };
}

async function assetsById(ctx: RowContext, id: string): Promise<boolean> {
  try {
    await getAsset(ctx.db, id);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === "NotFound") return false;
    throw error;
  }
}

/** The row's body (a create, or an update over the current asset) or its problems. */
async function planRow(ctx: RowContext, columns: readonly Column[], cells: readonly string[]): Promise<Planned<RowPlan>> {
  const problems: RowProblem[] = [];
  const body: Record<string, unknown> = {};
  const given: Partial<Record<"id" | "parentId" | "plant", { column: string; value: string }>> = {};
  for (const column of columns) {
    if (column.target === null || !("field" in column.target)) continue;
    const value = (cells[column.index] ?? "").trim();
    if (value === "") continue;
    const field = column.target.field;
    switch (field) {
      case "id":
      case "parentId":
      case "plant":
        given[field] ??= { column: column.header, value };
        break;
      case "metadata": {
        const found = metadataOfCell(column.header, value);
        if ("problem" in found) problems.push(found.problem);
        else body.metadata = found.metadata;
        break;
      }
      default:
        body[field] = value;
    }
  }
  const lookups = await lookupsOf(ctx);
  const read = async (id: string) => (await getAsset(ctx.db, id)).value;
  const current: Asset | null = await existingOfId(given.id?.value ?? null, given.id?.column ?? null, "asset", read, problems);
  const kind = (body.kind ?? current?.kind) as AssetKind | undefined;
  const parentRule = kind !== undefined && kind in PARENT_RULES ? PARENT_RULES[kind] : null;
  // The plant narrows a parent named by name; for a plant (or an organization) it is the asset itself.
  let plantId: string | null = null;
  if (given.plant && kind !== "plant" && kind !== "organization") {
    const found = await assetOfCell(ctx, lookups, given.plant.value, {
      column: given.plant.column,
      field: "body.parentId",
      what: "plant",
      kinds: ["plant"],
      plantId: null,
    });
    if ("problem" in found) {
      // The parent is looked up in that plant: without it, it is not looked up (one problem, not two).
      return { plan: null, problems: [...problems, found.problem] };
    }
    plantId = found.id;
  }
  const parent = given.parentId;
  if (parent && current?.parent && [current.parent.id, nameKey(current.parent.name)].includes(nameKey(parent.value))) {
    // A replacement naming the parent it has (an exported row sent back): by id or by name.
    body.parentId = current.parent.id;
  } else if (parent) {
    const found = await assetOfCell(ctx, lookups, parent.value, {
      column: parent.column,
      field: "body.parentId",
      what: "parent",
      kinds: parentRule?.parents ?? null,
      plantId,
    });
    if ("problem" in found) problems.push(found.problem);
    else body.parentId = found.id;
  }
  if (problems.length > 0) return { plan: null, problems };

  const issuesOf = (error: z.ZodError, data: unknown) =>
    fieldProblems(undefined, "json", error.issues, data).errors.map((p) => ({ ...p, column: columnOf(columns, p.field, []) }));
  if (current) {
    // A replacement keeps what the file does not say: the current asset, with the file's columns over it.
    const merged = {
      id: current.id,
      kind: current.kind,
      name: current.name,
      metadata: current.metadata,
      ...body,
    };
    const parsed = UpdateAssetSchema.safeParse(merged);
    if (!parsed.success) return { plan: null, problems: issuesOf(parsed.error, merged) };
    // The row says what the asset already is (an exported row not edited): nothing to write. Its parent, when
    // given, must be the current one (a change of parent is refused by the write, not passed over).
    const as = UpdateAssetSchema.safeParse({ id: current.id, kind: current.kind, name: current.name, metadata: current.metadata });
    const { parentId, ...rest } = parsed.data;
    const unchanged =
      as.success && (parentId === undefined || parentId === current.parentId) && JSON.stringify(as.data) === JSON.stringify(rest);
    return { plan: { action: "update", body: parsed.data, current, lookups, unchanged }, problems: [] };
  }
  const parsed = CreateAssetSchema.safeParse(body);
  if (!parsed.success) return { plan: null, problems: issuesOf(parsed.error, body) };
  return { plan: { action: "create", body: parsed.data, lookups }, problems: [] };
}

/** Checks a planned row as its single request would, writing nothing; a valid new asset is pending for the rows after it. */
async function checkRow(db: Database, plan: RowPlan, newId: string): Promise<void> {
  if (plan.action === "update") return validateAssetUpdate(db, plan.body);
  const { lookups } = plan;
  lookups.pending.add(await validateAsset(db, plan.body, newId, lookups.pending));
}

/** The names a plan makes or changes: a lookup of them read before it is stale. */
function forgetNames(plan: RowPlan): void {
  plan.lookups.writtenByName.delete(nameKey(plan.body.name));
  if (plan.action === "update") plan.lookups.writtenByName.delete(nameKey(plan.current.name));
}

/** Writes a planned row, with `extra` statements in its batch; answers the asset's id. */
async function writeRow(ctx: WriteContext, plan: RowPlan, extra: readonly D1PreparedStatement[]): Promise<string> {
  try {
    if (plan.action === "create") return (await createAsset(ctx, plan.body, extra)).value.id;
    return (await updateAsset({ ...ctx, expectedEtag: undefined }, plan.body, extra)).value.id;
  } finally {
    forgetNames(plan);
  }
}

export const assets: ImportKind<RowPlan> = {
  noun: "asset",
  inOrder: true,
  permissions: { read: PERMISSIONS.assetsRead, write: PERMISSIONS.assetsWrite },
  fields: FIELDS,
  aliases: ALIASES,
  readOnly: READ_ONLY,
  propertyNames: () => Promise.resolve(new Set()),
  plan: planRow,
  existingId: (plan) => (plan.action === "update" ? plan.current.id : null),
  unchanged: (plan) => plan.action === "update" && plan.unchanged,
  propertiesOf: () => [],
  check: checkRow,
  write: writeRow,
};
