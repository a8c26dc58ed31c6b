/**
 * Designations: which assets (plants, main systems, equipment, design objects) an entity points at.
 * Deviations, activities and work items store them in `designations`, one row per asset plus a
 * derived row for each designated asset's plant, so every asset filter of the lists
 * (equipmentIds, mainSystemIds, designObjectIds, plantNames) is one index lookup.
 */
import { tableStatements, type Database } from "../db/statements";
import { designations } from "../db/schema";
import { nameKey } from "../pkg/unicode";
import { z } from "@hono/zod-openapi";
import { ApiError, type FieldProblem } from "../pkg/errors";
import { parseUuidList, splitCsv, withProbe, type Condition, type SqlValues } from "../pkg/query";

export const ASSET_KINDS = ["organization", "plant", "mainSystem", "equipment", "designObject"] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

/** The kinds an entity can designate (an organization is an owner of plants, not a designation). */
export const DESIGNATION_KINDS = ["plant", "mainSystem", "equipment", "designObject"] as const;
export type DesignationKind = (typeof DESIGNATION_KINDS)[number];

/** A designated asset as the API returns it. */
export interface AssetRef {
  id: string;
  kind: AssetKind;
  name: string;
  /** The plant the asset belongs to (the asset itself for a plant). */
  plant: { id: string; name: string } | null;
}

export const AssetRefSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(ASSET_KINDS),
    name: z.string(),
    plant: z.object({ id: z.uuid(), name: z.string() }).nullable().openapi({ description: "The plant the asset belongs to." }),
  })
  .openapi("AssetReference");

/** A designation in a request: only `id` counts; the other fields of a read are accepted and ignored. */
export const AssetRefInputSchema = z
  .object({
    id: z.uuid(),
    kind: z.string().optional().openapi({ description: "Read-only; ignored." }),
    name: z.string().optional().openapi({ description: "Read-only; ignored." }),
    plant: z.unknown().optional().openapi({ description: "Read-only; ignored." }),
  })
  .strict()
  .openapi("AssetReferenceInput");

export const MAX_DESIGNATIONS = 200;

export const DesignationsInputSchema = z
  .array(AssetRefInputSchema)
  .max(MAX_DESIGNATIONS)
  .default([])
  .openapi({ description: `The designated assets (plants, main systems, equipment, design objects) by id; at most ${MAX_DESIGNATIONS}.` });

/** One asset a request names, where it is in the request, and (optionally) the kind it must be. */
export interface RequestedAsset {
  id: string;
  field: string;
  kind?: DesignationKind;
}

interface AssetLookupRow {
  id: string;
  kind: AssetKind;
  name: string;
  plant_id: string | null;
  plant_name: string | null;
}

function toRef(row: AssetLookupRow): AssetRef {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    plant: row.plant_id && row.plant_name !== null ? { id: row.plant_id, name: row.plant_name } : null,
  };
}

/**
 * Checks that every requested asset exists, can be designated and (when asked) has the expected
 * kind, and that none is named twice. Returns them in request order, or throws one ValidationFailed
 * listing every problem.
 */
export async function resolveDesignations(db: Database, requested: readonly RequestedAsset[]): Promise<AssetRef[]> {
  if (requested.length === 0) return [];
  const ids = [...new Set(requested.map((r) => r.id.toLowerCase()))];
  const { results } = await db
    .prepare(
      `SELECT a.id, a.kind, a.name, a.plant_id, p.name AS plant_name
         FROM assets a LEFT JOIN assets p ON p.id = a.plant_id
        WHERE a.id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify(ids))
    .all<AssetLookupRow>();
  const byId = new Map(results.map((row) => [row.id, row]));
  const errors: FieldProblem[] = [];
  const seen = new Set<string>();
  const refs: AssetRef[] = [];
  for (const request of requested) {
    const id = request.id.toLowerCase();
    const row = byId.get(id);
    if (!row) {
      errors.push({ field: request.field, rule: "exists", message: `The asset ${id} does not exist (GET /Assets).` });
    } else if (request.kind !== undefined && row.kind !== request.kind) {
      errors.push({ field: request.field, rule: "assetKind", message: `The asset '${row.name}' is a ${row.kind}, not a ${request.kind}.` });
    } else if (!(DESIGNATION_KINDS as readonly string[]).includes(row.kind)) {
      errors.push({
        field: request.field,
        rule: "assetKind",
        message: `The asset '${row.name}' is a ${row.kind}; only ${DESIGNATION_KINDS.join(", ")} can be designated.`,
      });
    } else if (seen.has(id)) {
      errors.push({ field: request.field, rule: "unique", message: `The asset '${row.name}' is designated more than once.` });
    } else {
      seen.add(id);
      refs.push(toRef(row));
    }
  }
  if (errors.length > 0) throw new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
  return refs;
}

export function deleteDesignationsStatement(db: Database, entityKind: string, entityId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM designations WHERE entity_kind = ?1 AND entity_id = ?2").bind(entityKind, entityId);
}

/** Deletes the designations of the entities of one kind that `ids` (trusted SQL yielding ids, binding its own ?1...) selects. */
export function deleteDesignationsOfManyStatement(
  db: Database,
  entityKind: string,
  ids: { sql: string; bindings: readonly unknown[] },
): D1PreparedStatement {
  const n = ids.bindings.length;
  return db.prepare(`DELETE FROM designations WHERE entity_kind = ?${n + 1} AND entity_id IN ${ids.sql}`).bind(...ids.bindings, entityKind);
}

/**
 * The statements that replace an entity's designations (for the entity's write batch): a delete, the
 * designated assets, then a derived row for each one's plant (a plant designated directly keeps its
 * direct row). Asset ids travel as one JSON parameter.
 */
export function replaceDesignationsStatements(
  db: Database,
  entityKind: string,
  entityId: string,
  assets: readonly AssetRef[],
): D1PreparedStatement[] {
  const statements = [deleteDesignationsStatement(db, entityKind, entityId)];
  if (assets.length === 0) return statements;
  const direct = assets.map((a) => ({ kind: a.kind, id: a.id }));
  const plants = [...new Set(assets.map((a) => a.plant?.id).filter((id): id is string => id !== undefined))];
  statements.push(
    db
      .prepare(
        `INSERT INTO designations (entity_kind, entity_id, asset_kind, asset_id, derived)
         SELECT ?1, ?2, json_extract(value, '$.kind'), json_extract(value, '$.id'), 0 FROM json_each(?3)`,
      )
      .bind(entityKind, entityId, JSON.stringify(direct)),
  );
  if (plants.length > 0) {
    statements.push(
      db
        .prepare(
          `INSERT OR IGNORE INTO designations (entity_kind, entity_id, asset_kind, asset_id, derived)
           SELECT ?1, ?2, 'plant', value, 1 FROM json_each(?3)`,
        )
        .bind(entityKind, entityId, JSON.stringify(plants)),
    );
  }
  return statements;
}

const designationTable = tableStatements(designations);

/**
 * The statements that designate assets for entities of one kind created in the same batch, which
 * have no designations yet (the deviations a monitoring evaluation raises at once): each asset, then
 * a derived row for each one's plant (a plant designated directly keeps its direct row), as one JSON
 * parameter per statement whatever their number. An entity that may have designations uses
 * {@link replaceDesignationsStatements}.
 */
export function insertDesignationsStatements(
  db: Database,
  entityKind: string,
  entities: readonly { entityId: string; assets: readonly AssetRef[] }[],
): D1PreparedStatement[] {
  const direct = entities.flatMap(({ entityId, assets }) =>
    assets.map((a) => ({ entityKind, entityId, assetKind: a.kind, assetId: a.id, derived: false })),
  );
  const plants = entities.flatMap(({ entityId, assets }) =>
    assets.flatMap((a) =>
      a.plant && a.plant.id !== a.id ? [{ entityKind, entityId, assetKind: "plant", assetId: a.plant.id, derived: true }] : [],
    ),
  );
  // Direct rows first: a plant both designated and derived keeps its direct row.
  return designationTable.insertMany(db, [...direct, ...plants], { orIgnore: true });
}

interface DesignationReadRow extends AssetLookupRow {
  entity_id: string;
}

/** The designated assets of many entities of one kind (derived plant rows left out), by entity id. */
export async function readDesignations(db: Database, entityKind: string, entityIds: readonly string[]): Promise<Map<string, AssetRef[]>> {
  if (entityIds.length === 0) return designationsFrom(entityIds, undefined);
  return designationsFrom(entityIds, await designationsStatement(db, entityKind, entityIds).all());
}

/**
 * The one statement {@link readDesignations} runs, for a caller that puts it in its own batch with
 * other reads; its result goes to {@link designationsFrom}.
 */
export function designationsStatement(db: Database, entityKind: string, entityIds: readonly string[]): D1PreparedStatement {
  return db
    .prepare(
      `SELECT d.entity_id, a.id, a.kind, a.name, a.plant_id, p.name AS plant_name
         FROM designations d JOIN assets a ON a.id = d.asset_id LEFT JOIN assets p ON p.id = a.plant_id
        WHERE d.entity_kind = ?1 AND d.derived = 0 AND d.entity_id IN (SELECT value FROM json_each(?2))
        ORDER BY d.entity_id, a.kind, a.name, a.id`,
    )
    .bind(entityKind, JSON.stringify([...new Set(entityIds)]));
}

/** The designated assets by entity id (every id present, empty when none) from {@link designationsStatement}'s result. */
export function designationsFrom(entityIds: readonly string[], result: D1Result<unknown> | undefined): Map<string, AssetRef[]> {
  return designationsOfRows(entityIds, (result?.results ?? []) as DesignationReadRow[]);
}

function designationsOfRows(entityIds: readonly string[], rows: readonly DesignationReadRow[]): Map<string, AssetRef[]> {
  const byEntity = new Map<string, AssetRef[]>(entityIds.map((id) => [id, []]));
  for (const row of rows) byEntity.get(row.entity_id)?.push(toRef(row));
  return byEntity;
}

/**
 * The same read as one column of a caller's statement: the designated assets of the entity whose id
 * is `idSql` (an SQL expression of that statement; `kindSql` its entity kind, a bound parameter), as
 * a JSON array in the order of {@link designationsStatement}. Read it with {@link designationsFromJson}.
 */
export function designationsJsonColumn(kindSql: string, idSql: string): string {
  // Aliases of their own (dsj, daj, dpj), so they never capture a name of the caller's statement.
  return `(SELECT json_group_array(json_array(daj.id, daj.kind, daj.name, daj.plant_id, dpj.name) ORDER BY daj.kind, daj.name, daj.id)
     FROM designations dsj JOIN assets daj ON daj.id = dsj.asset_id LEFT JOIN assets dpj ON dpj.id = daj.plant_id
    WHERE dsj.entity_kind = ${kindSql} AND dsj.derived = 0 AND dsj.entity_id = ${idSql})`;
}

/** The designated assets of one entity from its {@link designationsJsonColumn}. */
export function designationsFromJson(entityId: string, json: string | null): AssetRef[] {
  const rows = (JSON.parse(json ?? "[]") as [string, AssetKind, string, string | null, string | null][]).map(
    ([id, kind, name, plant_id, plant_name]): DesignationReadRow => ({ entity_id: entityId, id, kind, name, plant_id, plant_name }),
  );
  return designationsOfRows([entityId], rows).get(entityId) ?? [];
}

/** The asset filters shared by the lists of deviations, activities and work items. */
export interface DesignationFilters {
  equipmentIds?: string | undefined;
  mainSystemIds?: string | undefined;
  designObjectIds?: string | undefined;
  plantNames?: string | undefined;
}

export const designationFilterShape = {
  equipmentIds: z.string().optional().openapi({ description: "Only entities designating any of these equipment (comma-separated ids)." }),
  mainSystemIds: z
    .string()
    .optional()
    .openapi({ description: "Only entities designating any of these main systems (comma-separated ids)." }),
  plantNames: z.string().optional().openapi({
    description:
      "Only entities designating these plants, directly or through a designated asset (comma-separated names, case-insensitive).",
  }),
  designObjectIds: z
    .string()
    .optional()
    .openapi({ description: "Only entities designating any of these design objects (comma-separated ids)." }),
};

/**
 * One condition per given filter (AND-ed by the list; values inside one filter are OR-ed), each an
 * `id IN (designations of that kind)` on the designations index.
 */
export function designationConditions(entityKind: string, idExpression: string, filters: DesignationFilters): Condition[] {
  const conditions: Condition[] = [];
  const byIds = (kind: DesignationKind, raw: string | undefined, field: `query.${string}`) => {
    const ids = parseUuidList(raw, field);
    if (ids.length === 0) return;
    conditions.push(
      (values) =>
        `${idExpression} IN (SELECT entity_id FROM designations WHERE entity_kind = ${values.value(entityKind)} AND ` +
        `asset_kind = '${kind}' AND ${values.oneOf("asset_id", ids)})`,
    );
  };
  byIds("equipment", filters.equipmentIds, "query.equipmentIds");
  byIds("mainSystem", filters.mainSystemIds, "query.mainSystemIds");
  byIds("designObject", filters.designObjectIds, "query.designObjectIds");
  const plantNames = splitCsv(filters.plantNames).map(nameKey);
  if (plantNames.length > 0) {
    // A plant holds a large share of the entities: as a set SQLite reads all of them before it can
    // sort, so lists that walk their order index test each candidate with the probe instead (one
    // lookup in the designations' primary key). Equipment and the other kinds are selective: sets.
    const plants = (values: SqlValues) => `(SELECT id FROM assets WHERE kind = 'plant' AND ${values.oneOf("name_key", plantNames)})`;
    conditions.push(
      withProbe(
        (values) =>
          `${idExpression} IN (SELECT entity_id FROM designations WHERE entity_kind = ${values.value(entityKind)} AND ` +
          `asset_kind = 'plant' AND asset_id IN ${plants(values)})`,
        (values) =>
          `EXISTS (SELECT 1 FROM designations pd WHERE pd.entity_kind = ${values.value(entityKind)} AND pd.entity_id = ` +
          `${idExpression} AND pd.asset_kind = 'plant' AND pd.asset_id IN ${plants(values)})`,
      ),
    );
  }
  return conditions;
}
