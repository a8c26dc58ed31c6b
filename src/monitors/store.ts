/**
 * Models and monitors in D1: model definitions, models (MOD-n), populations and items, monitors
 * (MON-n) with the fields they inherit from their model, duplication and the population item query.
 */
import type { Database } from "../db/statements";
import { nameKey } from "../pkg/unicode";
import type { Bindings } from "../env";
import { guardedOutboxStatement, outboxStatement } from "../events/outbox";
import type { Principal } from "../pkg/auth";
import { assertStatement, conflict, isAssertionFailure, newEtagToken, runBatch, type WriteContext } from "../pkg/db";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";
import { resolveLinkedValues } from "../properties/values/resolve";
import {
  deletePropertyValuesStatement,
  readPropertyValues,
  replacePropertyValuesStatements,
  toPropertyValueRows,
} from "../properties/values/rows";
import type { LinkedProperty } from "../properties/values/types";
import type { ResolvedProperty } from "../properties/values/types";
import { ApiError, invalid, notFound, type FieldProblem } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import { assertVersion, commitVersioned } from "../pkg/resource";
import { scheduleRuleProblem, scheduleStatement, type ScheduleRule } from "../pkg/schedule";
import { hostFor } from "../dataprocessing/host";
import { viaHost } from "../dataprocessing/host-errors";
import { ownerOrCaller } from "../work/common";
import { ASSET_KIND_OF, bandOf, type AssetType, type Controller } from "./schema";
import { checkControllers } from "./controllers";

export const MONITOR_SCHEDULE_KIND = "monitor";
type Params = Record<string, string>;
const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** The next number of a sequence, atomically (one UPDATE ... RETURNING): unique, gaps when a create fails. */
export async function nextNumber(db: Database, name: string): Promise<number> {
  const row = await db
    .prepare("INSERT INTO counters (name, value) VALUES (?1, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value")
    .bind(name)
    .first<{ value: number }>();
  return row!.value;
}

// --- Model definitions --------------------------------------------------------------------------

interface DefinitionRow {
  id: string;
  name: string;
  version: string;
  location: "ACR" | "External";
  uri: string | null;
  etag: string;
  created_at: string;
}
export const definitionOf = (r: DefinitionRow) => ({
  id: r.id,
  name: r.name,
  version: r.version,
  uri: r.uri,
  location: r.location,
  createdDate: r.created_at,
});

async function checkDefinition(
  env: Bindings,
  input: { name: string; version: string; uri: string | null; location: string },
): Promise<void> {
  if (input.location === "External" && !input.uri) throw invalid("body.uri", "required", "uri is required when location is External.");
  if (input.location === "ACR" && input.uri)
    throw invalid("body.uri", "forbidden", "uri is given only when location is External; an ACR model's image is name:version.");
  if (input.location === "ACR") {
    const { images } = await viaHost(() => hostFor(env).listImages());
    if (!images.some((i) => i.name === input.name && i.tag === input.version)) {
      throw invalid("body.name", "exists", `The container host lists no image ${input.name}:${input.version} (GET /JobDefinitions).`);
    }
  }
}

const definitionTaken = (name: string, version: string) =>
  conflict(`Model definition ${name} version ${version} already exists.`, [
    { field: "body.version", rule: "unique", message: "This name and version exist." },
  ]);

export async function createDefinition(
  ctx: WriteContext,
  env: Bindings,
  input: { name: string; version: string; uri: string | null; location: string },
) {
  await checkDefinition(env, input);
  const id = ctx.uuid();
  await runBatch(
    ctx.db,
    [
      ctx.db
        .prepare(
          "INSERT INTO model_definitions (id, name, version, location, uri, etag, created_at, updated_at, created_by, " +
            "name_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9)",
        )
        .bind(id, input.name, input.version, input.location, input.uri, newEtagToken(), ctx.now, ctx.actorId, nameKey(input.name)),
      outboxStatement(ctx.db, ctx, { entityKind: "modelDefinition", entityId: id, action: "created", payload: { id, ...input } }),
    ],
    () => definitionTaken(input.name, input.version),
  );
  return getDefinition(ctx.db, id);
}

export async function updateDefinition(
  ctx: WriteContext,
  env: Bindings,
  input: { id: string; name: string; version: string; uri: string | null; location: string },
) {
  const current = await getDefinitionRow(ctx.db, input.id);
  const version = assertVersion(ctx, current.etag);
  if (current.name !== input.name || current.version !== input.version) await refuseUsedDefinition(ctx.db, current);
  await checkDefinition(env, input);
  const etag = newEtagToken();
  await commitVersioned(
    ctx,
    [
      ctx.db
        .prepare(
          "UPDATE model_definitions SET name = ?1, name_key = ?9, version = ?2, location = ?3, uri = ?4, etag = ?5, " +
            "updated_at = ?6 WHERE id = ?7 AND etag = ?8",
        )
        .bind(input.name, input.version, input.location, input.uri, etag, ctx.now, input.id, version, nameKey(input.name)),
      guardedOutboxStatement(
        ctx.db,
        ctx,
        { entityKind: "modelDefinition", entityId: input.id, action: "updated", payload: { ...input } },
        { table: "model_definitions", etag },
      ),
    ],
    () => definitionTaken(input.name, input.version),
  );
  return getDefinition(ctx.db, input.id);
}

async function getDefinitionRow(db: Database, id: string): Promise<DefinitionRow> {
  const row = await db.prepare("SELECT * FROM model_definitions WHERE id = ?1").bind(id).first<DefinitionRow>();
  if (!row) throw notFound("Model definition", id);
  return row;
}

export async function getDefinition(db: Database, id: string) {
  const row = await getDefinitionRow(db, id);
  return { value: definitionOf(row), etag: row.etag };
}

export async function findDefinitionByVersion(db: Database, name: string, version: string): Promise<DefinitionRow | null> {
  return db
    .prepare("SELECT * FROM model_definitions WHERE name_key = ?1 AND version = ?2")
    .bind(nameKey(name), version)
    .first<DefinitionRow>();
}

async function refuseUsedDefinition(db: Database, row: DefinitionRow): Promise<void> {
  const used = await db
    .prepare("SELECT model_id FROM models WHERE lower(definition_name) = lower(?1) AND definition_version = ?2 LIMIT 1")
    .bind(row.name, row.version)
    .first<{ model_id: string }>();
  if (used) throw new ApiError("InUse", `Model ${used.model_id} uses model definition ${row.name} version ${row.version}.`);
}

export async function deleteDefinition(ctx: WriteContext, row: DefinitionRow | null, what: string): Promise<void> {
  if (!row) throw new ApiError("NotFound", `Model definition ${what} does not exist.`);
  const version = assertVersion(ctx, row.etag);
  await refuseUsedDefinition(ctx.db, row);
  await commitVersioned(ctx, [
    // Guarded so a model made with this version since the check above keeps it alive (then 412: read again).
    ctx.db
      .prepare(
        `DELETE FROM model_definitions WHERE id = ?1 AND etag = ?2
           AND NOT EXISTS (SELECT 1 FROM models WHERE lower(definition_name) = lower(?3) AND definition_version = ?4)`,
      )
      .bind(row.id, version, row.name, row.version),
    guardedOutboxStatement(
      ctx.db,
      ctx,
      { entityKind: "modelDefinition", entityId: row.id, action: "deleted", payload: null },
      "previousChanged",
    ),
  ]);
}

export async function deleteDefinitionById(ctx: WriteContext, id: string): Promise<void> {
  await deleteDefinition(ctx, await getDefinitionRow(ctx.db, id), id);
}

// --- Populations ---------------------------------------------------------------------------------

type Owner = "model" | "monitor";

interface PopulationRow {
  id: string;
  owner_kind: "model" | "monitor";
  owner_id: string;
  name: string;
  description: string | null;
  asset_type: AssetType;
  created_at: string;
}
export interface ItemRow {
  id: string;
  population_id: string;
  asset_id: string;
  asset_name: string | null;
  criticality: number | null;
  last_monitor_job_id: string | null;
}
export const toItem = (r: ItemRow, alarms: ActiveAlarm[] = []) => ({
  id: r.id,
  populationId: r.population_id,
  assetReference: { id: r.asset_id, name: r.asset_name },
  criticality: r.criticality,
  band: bandOf(r.criticality),
  lastMonitorJobId: r.last_monitor_job_id,
  alarms,
});

export interface ActiveAlarm {
  id: string;
  controller: string;
  enteredAt: string;
  monitorJobId: string;
  deviationId: string | null;
  workItemId: string | null;
}

interface ActiveAlarmRow {
  id: string;
  item_id: string;
  controller: string;
  entered_at: string;
  entered_job_id: string;
  deviation_id: string | null;
  work_item_id: string | null;
}

/** The active alarms of monitors' items, in the order they were entered. */
const ACTIVE_ALARMS_OF_MONITORS = `SELECT id, item_id, controller, entered_at, entered_job_id, deviation_id, work_item_id FROM
  monitor_alarms
  WHERE monitor_ref IN (SELECT value FROM json_each(?1)) AND active_key IS NOT NULL ORDER BY entered_at, controller`;

function alarmsByItem(rows: readonly ActiveAlarmRow[]): Map<string, ActiveAlarm[]> {
  const byItem = new Map<string, ActiveAlarm[]>();
  for (const a of rows) {
    const list = byItem.get(a.item_id) ?? [];
    list.push({
      id: a.id,
      controller: a.controller,
      enteredAt: a.entered_at,
      monitorJobId: a.entered_job_id,
      deviationId: a.deviation_id,
      workItemId: a.work_item_id,
    });
    byItem.set(a.item_id, list);
  }
  return byItem;
}

/** The active alarms of the given items (one statement, ids as one JSON parameter). */
export async function activeAlarmsOfItems(db: Database, itemIds: readonly string[]): Promise<Map<string, ActiveAlarm[]>> {
  if (itemIds.length === 0) return new Map();
  const { results } = await db
    .prepare(
      `SELECT id, item_id, controller, entered_at, entered_job_id, deviation_id, work_item_id FROM monitor_alarms
        WHERE item_id IN (SELECT value FROM json_each(?1)) AND active_key IS NOT NULL ORDER BY entered_at, controller`,
    )
    .bind(JSON.stringify([...new Set(itemIds)]))
    .all<ActiveAlarmRow>();
  return alarmsByItem(results);
}

type PopulationView = { id: string; name: string; description: string | null; assetType: AssetType; items: ReturnType<typeof toItem>[] };

/**
 * The populations of many owners with their items, in one round trip of two statements whatever
 * their number (the ids travel as one JSON parameter, so a page of 200 is no more queries than 1).
 */
export async function populationsOfMany(db: Database, kind: Owner, ownerIds: readonly string[]): Promise<Map<string, PopulationView[]>> {
  const byOwner = new Map<string, PopulationView[]>(ownerIds.map((id) => [id, []]));
  if (ownerIds.length === 0) return byOwner;
  const ids = JSON.stringify([...new Set(ownerIds)]);
  const [pops, items, alarms] = await db.batch([
    db
      .prepare("SELECT * FROM populations WHERE owner_kind = ?1 AND owner_id IN (SELECT value FROM json_each(?2)) ORDER BY created_at, id")
      .bind(kind, ids),
    db
      .prepare(
        `SELECT i.* FROM population_items i JOIN populations p ON p.id = i.population_id
          WHERE p.owner_kind = ?1 AND p.owner_id IN (SELECT value FROM json_each(?2)) ORDER BY i.created_at, i.id`,
      )
      .bind(kind, ids),
    // A model's items have no alarms (only monitors run): the statement finds none for them.
    db.prepare(ACTIVE_ALARMS_OF_MONITORS).bind(kind === "monitor" ? ids : "[]"),
  ]);
  const alarmsOf = alarmsByItem(alarms!.results as unknown as ActiveAlarmRow[]);
  const byPopulation = new Map<string, ReturnType<typeof toItem>[]>();
  for (const item of items!.results as unknown as ItemRow[]) {
    const list = byPopulation.get(item.population_id) ?? [];
    list.push(toItem(item, alarmsOf.get(item.id)));
    byPopulation.set(item.population_id, list);
  }
  for (const p of pops!.results as unknown as (PopulationRow & { owner_id: string })[]) {
    byOwner
      .get(p.owner_id)
      ?.push({ id: p.id, name: p.name, description: p.description, assetType: p.asset_type, items: byPopulation.get(p.id) ?? [] });
  }
  return byOwner;
}

export async function populationsOf(db: Database, kind: Owner, ownerId: string): Promise<PopulationView[]> {
  return (await populationsOfMany(db, kind, [ownerId])).get(ownerId) ?? [];
}

const OWNER_TABLE: Record<Owner, string> = { model: "models", monitor: "monitors" };

/**
 * A population is part of its owner's representation (GET /Models/{id}, /Monitors/{id}): a change
 * to it is a new version of the owner. The owner's row takes a new ETag, guarded on the version the
 * caller's If-Match names (or the current one), and the owner's `updated` event goes in the batch.
 */
async function ownerVersionStatements(
  ctx: WriteContext,
  kind: Owner,
  ownerId: string,
  change: string,
): Promise<{ first: D1PreparedStatement; event: D1PreparedStatement }> {
  const table = OWNER_TABLE[kind];
  const row = await ctx.db.prepare(`SELECT etag FROM ${table} WHERE id = ?1`).bind(ownerId).first<{ etag: string }>();
  if (!row) throw notFound(kind === "model" ? "Model" : "Monitor", ownerId);
  const version = assertVersion(ctx, row.etag);
  const etag = newEtagToken();
  return {
    first: ctx.db
      .prepare(`UPDATE ${table} SET etag = ?1, updated_at = ?2 WHERE id = ?3 AND etag = ?4`)
      .bind(etag, ctx.now, ownerId, version),
    event: guardedOutboxStatement(
      ctx.db,
      ctx,
      { entityKind: kind, entityId: ownerId, action: "updated", payload: { id: ownerId, change } },
      { table, etag },
    ),
  };
}

export async function addPopulation(
  ctx: WriteContext,
  kind: Owner,
  ownerId: string,
  input: { name: string; description: string | null; assetType: AssetType },
) {
  const id = ctx.uuid();
  const owner = await ownerVersionStatements(ctx, kind, ownerId, "populationAdded");
  await commitVersioned(ctx, [
    owner.first,
    ctx.db
      .prepare(
        "INSERT INTO populations (id, owner_kind, owner_id, name, description, asset_type, created_at) SELECT ?1, ?2, " +
          "?3, ?4, ?5, ?6, ?7 WHERE changes() = 1",
      )
      .bind(id, kind, ownerId, input.name, input.description, input.assetType, ctx.now),
    owner.event,
  ]);
  return { id, ...input, items: [] };
}

async function populationOf(
  db: Database,
  kind: "model" | "monitor",
  ownerId: string,
  populationId: string,
  field: string,
): Promise<PopulationRow> {
  const row = await db
    .prepare("SELECT * FROM populations WHERE id = ?1 AND owner_kind = ?2 AND owner_id = ?3")
    .bind(populationId, kind, ownerId)
    .first<PopulationRow>();
  if (!row) throw new ApiError("NotFound", `Population ${populationId} does not belong to this ${kind} (${field}).`);
  return row;
}

/** Adds an asset to a population: it must exist in the asset catalogue and be of the population's type. */
export async function addItem(
  ctx: WriteContext,
  kind: "model" | "monitor",
  ownerId: string,
  populationId: string,
  field: string,
  input: { assetReference: { id: string; name?: string | null } },
) {
  const population = await populationOf(ctx.db, kind, ownerId, populationId, field);
  const asset = await ctx.db
    .prepare("SELECT id, kind, name FROM assets WHERE id = ?1")
    .bind(input.assetReference.id)
    .first<{ id: string; kind: string; name: string }>();
  if (!asset) throw invalid("body.assetReference.id", "exists", `Asset ${input.assetReference.id} does not exist in the asset catalogue.`);
  const expected = ASSET_KIND_OF[population.asset_type];
  if (asset.kind !== expected) {
    throw invalid(
      "body.assetReference.id",
      "assetType",
      `Population '${population.name}' holds ${population.asset_type} assets; asset ${asset.id} is a ${asset.kind}, expected ${expected}.`,
    );
  }
  const id = ctx.uuid();
  const owner = await ownerVersionStatements(ctx, kind, ownerId, "populationItemAdded");
  await commitVersioned(
    ctx,
    [
      owner.first,
      ctx.db
        .prepare(
          "INSERT INTO population_items (id, population_id, asset_id, asset_name, created_at) SELECT ?1, ?2, ?3, ?4, ?5 " +
            "WHERE changes() = 1",
        )
        .bind(id, populationId, asset.id, asset.name, ctx.now),
      owner.event,
    ],
    () => conflict(`Asset ${asset.id} is already in population '${population.name}'.`),
  );
  return toItem({
    id,
    population_id: populationId,
    asset_id: asset.id,
    asset_name: asset.name,
    criticality: null,
    last_monitor_job_id: null,
  });
}

export async function removePopulation(ctx: WriteContext, kind: Owner, ownerId: string, populationId: string): Promise<void> {
  await populationOf(ctx.db, kind, ownerId, populationId, "path.populationId");
  const owner = await ownerVersionStatements(ctx, kind, ownerId, "populationRemoved");
  await commitVersioned(ctx, [
    owner.first,
    ctx.db.prepare("DELETE FROM populations WHERE id = ?1 AND changes() = 1").bind(populationId),
    owner.event,
  ]);
}

export async function removeItem(ctx: WriteContext, kind: Owner, ownerId: string, itemId: string): Promise<void> {
  const found = await ctx.db
    .prepare(
      "SELECT 1 AS ok FROM population_items WHERE id = ?1 AND population_id IN (SELECT id FROM populations WHERE " +
        "owner_kind = ?2 AND owner_id = ?3)",
    )
    .bind(itemId, kind, ownerId)
    .first();
  if (!found) throw notFound("Population item", itemId);
  const owner = await ownerVersionStatements(ctx, kind, ownerId, "populationItemRemoved");
  await commitVersioned(ctx, [
    owner.first,
    ctx.db.prepare("DELETE FROM population_items WHERE id = ?1 AND changes() = 1").bind(itemId),
    owner.event,
  ]);
}

/** Statements copying every population and item of one owner to another (criticality and last job cleared). */
function copyPopulationStatements(
  db: Database,
  from: { kind: string; id: string },
  to: { kind: string; id: string },
  now: string,
): D1PreparedStatement[] {
  // New ids derived from the old ones and the new owner: one statement per table, any number of rows.
  return [
    db
      .prepare(
        `INSERT INTO populations (id, owner_kind, owner_id, name, description, asset_type, created_at)
         SELECT lower(hex(randomblob(4))) || '-' || substr(p.id, 10, 27), ?3, ?4, p.name, p.description, p.asset_type, ?5
         FROM populations p WHERE p.owner_kind = ?1 AND p.owner_id = ?2`,
      )
      .bind(from.kind, from.id, to.kind, to.id, now),
    db
      .prepare(
        `INSERT INTO population_items (id, population_id, asset_id, asset_name, created_at)
         SELECT lower(hex(randomblob(4))) || '-' || substr(i.id, 10, 27), np.id, i.asset_id, i.asset_name, ?5
         FROM population_items i JOIN populations p ON p.id = i.population_id
         JOIN populations np ON np.owner_kind = ?3 AND np.owner_id = ?4 AND substr(np.id, 10) = substr(p.id, 10)
         WHERE p.owner_kind = ?1 AND p.owner_id = ?2`,
      )
      .bind(from.kind, from.id, to.kind, to.id, now),
  ];
}

// --- Models --------------------------------------------------------------------------------------

export interface ModelRow {
  id: string;
  model_id: string;
  name: string;
  description: string | null;
  definition_name: string;
  definition_version: string;
  status: "Draft" | "Active" | "Deprecated";
  cpu_cores: number;
  memory_gb: number;
  gpu_cores: number | null;
  gpu_sku: string | null;
  configurable_parameters: string;
  static_parameters: string;
  type_id: string;
  owner_id: string;
  owner_name: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

export interface ModelInput {
  name: string;
  description: string | null;
  modelDefinitionName: string;
  modelDefinitionVersion: string;
  status: "Draft" | "Active" | "Deprecated";
  cpuCores: number;
  memory: number;
  gpuCores: number | null;
  gpuSku: string | null;
  configurableParameters: Params;
  staticParameters: Params;
  objectOwner?: { id: string; name: string | null } | null;
  typeId?: string;
  properties: { name: string; value?: unknown }[];
}

/** Models as answered, in a fixed number of queries whatever their number (properties, populations). */
export async function toModels(db: Database, rows: readonly ModelRow[]) {
  const ids = rows.map((r) => r.id);
  const [properties, populations] = await Promise.all([readPropertyValues(db, MODEL_KIND, ids), populationsOfMany(db, "model", ids)]);
  return rows.map((r) => modelOf(r, properties.get(r.id) ?? [], populations.get(r.id) ?? []));
}

export async function toModel(db: Database, r: ModelRow) {
  return (await toModels(db, [r]))[0]!;
}

function modelOf(r: ModelRow, properties: LinkedProperty[], populations: PopulationView[]) {
  return {
    id: r.id,
    modelId: r.model_id,
    name: r.name,
    description: r.description,
    modelDefinitionName: r.definition_name,
    modelDefinitionVersion: r.definition_version,
    status: r.status,
    cpuCores: r.cpu_cores,
    memory: r.memory_gb,
    gpuCores: r.gpu_cores,
    gpuSku: r.gpu_sku,
    configurableParameters: JSON.parse(r.configurable_parameters) as Params,
    staticParameters: JSON.parse(r.static_parameters) as Params,
    objectOwner: { id: r.owner_id, name: r.owner_name },
    typeId: r.type_id,
    properties,
    populations,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function getModelRow(db: Database, id: string, field?: string): Promise<ModelRow> {
  const row = await db.prepare("SELECT * FROM models WHERE id = ?1").bind(id).first<ModelRow>();
  if (!row) throw field ? invalid(field, "exists", `Model ${id} does not exist.`) : notFound("Model", id);
  return row;
}

/**
 * Status transitions: Draft -> Active -> Deprecated, Draft -> Deprecated, and Deprecated -> Active
 * (brought back). Nothing goes back to Draft once it was Active or Deprecated.
 */
function checkTransition(from: string, to: string, field: string): void {
  if (from !== "Draft" && to === "Draft") throw invalid(field, "transition", `A ${from} model or monitor cannot go back to Draft.`);
}

const MODEL_KIND = "model";

/** The model's entity type (it must accept Model properties) and its resolved property values. */
async function modelProperties(db: Database, input: ModelInput): Promise<{ typeId: string; properties: ResolvedProperty[] }> {
  const typeId = (input.typeId ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase();
  const type = await db.prepare("SELECT applies_to FROM entity_types WHERE id = ?1").bind(typeId).first<{ applies_to: string | null }>();
  if (!type) throw invalid("body.typeId", "exists", `Entity type ${typeId} does not exist.`);
  if (type.applies_to !== null && type.applies_to !== "Model")
    throw invalid("body.typeId", "appliesTo", `Entity type ${typeId} is for ${type.applies_to} entities, not Model.`);
  const properties = await resolveLinkedValues(db, {
    entityTypeId: typeId,
    applicationRule: "Model",
    values: input.properties as never,
    field: "body.properties",
    entityTypeField: "body.typeId",
  });
  return { typeId, properties };
}

async function checkModel(db: Database, input: ModelInput): Promise<void> {
  const problems: FieldProblem[] = [];
  if (!(await findDefinitionByVersion(db, input.modelDefinitionName, input.modelDefinitionVersion))) {
    problems.push({
      field: "body.modelDefinitionVersion",
      rule: "exists",
      message: `Model definition ${input.modelDefinitionName} version ${input.modelDefinitionVersion} does not exist.`,
    });
  }
  if ((input.gpuCores ?? 0) > 0 !== (input.gpuSku !== null))
    problems.push({ field: "body.gpuSku", rule: "dependency", message: "gpuSku and gpuCores (at least 1) go together." });
  if (problems.length) throw new ApiError("ValidationFailed", problems.map((p) => p.message).join(" "), { errors: problems });
}

export async function createModel(ctx: WriteContext, principal: Principal, input: ModelInput): Promise<ModelRow> {
  await checkModel(ctx.db, input);
  const { typeId, properties } = await modelProperties(ctx.db, input);
  const owner = ownerOrCaller(input.objectOwner, principal);
  const id = ctx.uuid();
  const modelId = `MOD-${await nextNumber(ctx.db, "model")}`;
  await ctx.db.batch([
    ctx.db
      .prepare(
        `INSERT INTO models (id, model_id, name, description, definition_name, definition_version, status, cpu_cores,
        memory_gb, gpu_cores, gpu_sku,
           configurable_parameters, static_parameters, owner_id, owner_name, etag, created_at, updated_at, created_by, type_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17, ?18, ?19)`,
      )
      .bind(
        id,
        modelId,
        input.name,
        input.description,
        input.modelDefinitionName,
        input.modelDefinitionVersion,
        input.status,
        input.cpuCores,
        input.memory,
        input.gpuCores,
        input.gpuSku,
        JSON.stringify(input.configurableParameters),
        JSON.stringify(input.staticParameters),
        owner.id,
        owner.name,
        newEtagToken(),
        ctx.now,
        ctx.actorId,
        typeId,
      ),
    ...replacePropertyValuesStatements(ctx.db, MODEL_KIND, id, toPropertyValueRows(MODEL_KIND, id, properties)),
    outboxStatement(ctx.db, ctx, { entityKind: "model", entityId: id, action: "created", payload: { id, modelId, name: input.name } }),
  ]);
  return getModelRow(ctx.db, id);
}

export async function updateModel(ctx: WriteContext, input: ModelInput & { id: string }): Promise<ModelRow> {
  const current = await getModelRow(ctx.db, input.id);
  const version = assertVersion(ctx, current.etag);
  checkTransition(current.status, input.status, "body.status");
  await checkModel(ctx.db, input);
  const { typeId, properties } = await modelProperties(ctx.db, { ...input, typeId: input.typeId ?? current.type_id });
  const owner = input.objectOwner
    ? { id: input.objectOwner.id, name: input.objectOwner.name ?? null }
    : { id: current.owner_id, name: current.owner_name };
  const etag = newEtagToken();
  await commitVersioned(ctx, [
    ctx.db
      .prepare(
        `UPDATE models SET name = ?1, description = ?2, definition_name = ?3, definition_version = ?4, status = ?5, cpu_cores =
        ?6, memory_gb = ?7, gpu_cores = ?8,
           gpu_sku = ?9, configurable_parameters = ?10, static_parameters = ?11, owner_id = ?12, owner_name = ?13, etag = ?14,
           updated_at = ?15, type_id = ?18 WHERE id = ?16 AND etag = ?17`,
      )
      .bind(
        input.name,
        input.description,
        input.modelDefinitionName,
        input.modelDefinitionVersion,
        input.status,
        input.cpuCores,
        input.memory,
        input.gpuCores,
        input.gpuSku,
        JSON.stringify(input.configurableParameters),
        JSON.stringify(input.staticParameters),
        owner.id,
        owner.name,
        etag,
        ctx.now,
        input.id,
        version,
        typeId,
      ),
    // Guarded on the update above having applied: a lost race leaves the old values.
    assertStatement(ctx.db, "changes() = 1"),
    ...replacePropertyValuesStatements(ctx.db, MODEL_KIND, input.id, toPropertyValueRows(MODEL_KIND, input.id, properties)),
    guardedOutboxStatement(
      ctx.db,
      ctx,
      {
        entityKind: "model",
        entityId: input.id,
        action: "updated",
        payload: { id: input.id, modelId: current.model_id, name: input.name },
      },
      { table: "models", etag },
    ),
  ]).catch((error: unknown) => {
    if (isAssertionFailure(error)) throw preconditionFailed();
    throw error;
  });
  return getModelRow(ctx.db, input.id);
}

export async function deleteModel(ctx: WriteContext, id: string): Promise<void> {
  const current = await getModelRow(ctx.db, id);
  const version = assertVersion(ctx, current.etag);
  const used = await ctx.db
    .prepare("SELECT monitor_id FROM monitors WHERE model_ref = ?1 LIMIT 1")
    .bind(id)
    .first<{ monitor_id: string }>();
  if (used) throw new ApiError("InUse", `Monitor ${used.monitor_id} uses this model.`);
  await commitVersioned(ctx, [
    // The model row first, guarded on its version and on no monitor having started to use it meanwhile.
    ctx.db
      .prepare("DELETE FROM models WHERE id = ?1 AND etag = ?2 AND NOT EXISTS (SELECT 1 FROM monitors WHERE model_ref = ?1)")
      .bind(id, version),
    guardedOutboxStatement(ctx.db, ctx, { entityKind: "model", entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ctx.db
      .prepare("DELETE FROM populations WHERE owner_kind = 'model' AND owner_id = ?1 AND NOT EXISTS (SELECT 1 FROM models WHERE id = ?1)")
      .bind(id),
    deletePropertyValuesStatement(ctx.db, MODEL_KIND, id),
  ]);
}

// --- Monitors ------------------------------------------------------------------------------------

export interface MonitorRow {
  id: string;
  monitor_id: string;
  name: string;
  model_ref: string;
  status: "Draft" | "Active" | "Deprecated";
  trigger_schedule: string | null;
  time_zone: string | null;
  trigger_event: string | null;
  instructions: string | null;
  cpu_cores: number | null;
  memory_gb: number | null;
  gpu_cores: number | null;
  gpu_sku: string | null;
  configurable_parameters: string | null;
  controllers: string;
  owner_id: string;
  owner_name: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

export interface MonitorInput {
  name: string;
  modelId: string;
  status: "Draft" | "Active" | "Deprecated";
  triggerSchedule: string | null;
  timeZone: string | null;
  triggerEvent: unknown;
  instructions: string | null;
  cpuCores: number | null;
  memory: number | null;
  gpuCores: number | null;
  gpuSku: string | null;
  configurableParameters: Params | null;
  staticParameters?: unknown;
  controllers: Controller[];
  objectOwner?: { id: string; name: string | null } | null;
}

/** A monitor's effective values: its own where it overrides, its model's elsewhere. */
export function effectiveOf(m: MonitorRow, model: ModelRow) {
  const own = parse<Params>(m.configurable_parameters);
  return {
    cpuCores: m.cpu_cores ?? model.cpu_cores,
    memory: m.memory_gb ?? model.memory_gb,
    gpuCores: m.cpu_cores === null && m.gpu_cores === null && m.gpu_sku === null ? model.gpu_cores : m.gpu_cores,
    gpuSku: m.cpu_cores === null && m.gpu_cores === null && m.gpu_sku === null ? model.gpu_sku : m.gpu_sku,
    configurableParameters: own ?? (JSON.parse(model.configurable_parameters) as Params),
    staticParameters: JSON.parse(model.static_parameters) as Params,
    inherited: {
      cpuCores: m.cpu_cores === null,
      memory: m.memory_gb === null,
      gpuCores: m.gpu_cores === null && m.gpu_sku === null,
      gpuSku: m.gpu_cores === null && m.gpu_sku === null,
      configurableParameters: own === null,
    },
  };
}

/** Monitors as answered, in a fixed number of queries whatever their number (models, schedules, populations). */
export async function toMonitors(db: Database, rows: readonly MonitorRow[]) {
  if (rows.length === 0) return [];
  const ids = JSON.stringify(rows.map((m) => m.id));
  const modelIds = JSON.stringify([...new Set(rows.map((m) => m.model_ref))]);
  const [[models, schedules], populations] = await Promise.all([
    db.batch([
      db.prepare("SELECT * FROM models WHERE id IN (SELECT value FROM json_each(?1))").bind(modelIds),
      db
        .prepare("SELECT owner_id, next_run_at FROM schedules WHERE kind = ?1 AND owner_id IN (SELECT value FROM json_each(?2))")
        .bind(MONITOR_SCHEDULE_KIND, ids),
    ]),
    populationsOfMany(
      db,
      "monitor",
      rows.map((m) => m.id),
    ),
  ]);
  const modelById = new Map((models!.results as unknown as ModelRow[]).map((r) => [r.id, r]));
  const nextById = new Map(
    (schedules!.results as unknown as { owner_id: string; next_run_at: string | null }[]).map((r) => [r.owner_id, r.next_run_at]),
  );
  return rows.map((m) => {
    const model = modelById.get(m.model_ref);
    // A monitor's model cannot be deleted while the monitor exists (InUse), so this holds.
    if (!model) throw new Error(`monitor ${m.id} names model ${m.model_ref}, which does not exist`);
    return monitorOf(m, model, nextById.get(m.id) ?? null, populations.get(m.id) ?? []);
  });
}

export async function toMonitor(db: Database, m: MonitorRow) {
  return (await toMonitors(db, [m]))[0]!;
}

function monitorOf(m: MonitorRow, owner: ModelRow, nextRunAt: string | null, populations: PopulationView[]) {
  const effective = effectiveOf(m, owner);
  return {
    id: m.id,
    monitorId: m.monitor_id,
    name: m.name,
    modelId: owner.id,
    model: { id: owner.id, modelId: owner.model_id, name: owner.name },
    status: m.status,
    triggerSchedule: m.trigger_schedule,
    timeZone: m.time_zone,
    nextRunAt,
    triggerEvent: parse<{ kind: "fileProcessed"; dataTypeId: string } | { kind: "deviationChanged" }>(m.trigger_event),
    instructions: m.instructions,
    cpuCores: effective.cpuCores,
    memory: effective.memory,
    gpuCores: effective.gpuCores,
    gpuSku: effective.gpuSku,
    configurableParameters: effective.configurableParameters,
    inherited: effective.inherited,
    controllers: JSON.parse(m.controllers),
    objectOwner: { id: m.owner_id, name: m.owner_name },
    populations,
    createdAt: m.created_at,
    updatedAt: m.updated_at,
  };
}

export async function getMonitorRow(db: Database, id: string): Promise<MonitorRow> {
  const row = await db.prepare("SELECT * FROM monitors WHERE id = ?1").bind(id).first<MonitorRow>();
  if (!row) throw notFound("Monitor", id);
  return row;
}

async function checkMonitor(
  db: Database,
  input: MonitorInput,
  current: MonitorRow | null,
): Promise<{ model: ModelRow; rule: ScheduleRule | null }> {
  if (input.staticParameters !== undefined) {
    throw invalid("body.staticParameters", "readOnly", "Static parameters come from the model and can never be overridden by a monitor.");
  }
  const model = await getModelRow(db, input.modelId, "body.modelId");
  if (model.status === "Deprecated" && current?.model_ref !== model.id)
    throw invalid("body.modelId", "status", `Model ${model.model_id} is Deprecated: it takes no new monitors.`);
  if ((input.gpuCores ?? 0) > 0 !== (input.gpuSku !== null) && (input.gpuCores !== null || input.gpuSku !== null)) {
    throw invalid("body.gpuSku", "dependency", "gpuSku and gpuCores (at least 1) are overridden together.");
  }
  let rule: ScheduleRule | null = null;
  if (input.triggerSchedule) {
    rule = { cron: input.triggerSchedule, timeZone: input.timeZone };
    const problem = scheduleRuleProblem(rule);
    if (problem) throw invalid(problem.part === "timeZone" ? "body.timeZone" : "body.triggerSchedule", problem.part, problem.message);
  } else if (input.timeZone) {
    const problem = scheduleRuleProblem({ cron: "0 0 * * *", timeZone: input.timeZone });
    if (problem) throw invalid("body.timeZone", "timeZone", problem.message);
  }
  if (current) checkTransition(current.status, input.status, "body.status");
  await checkControllers(db, input.controllers);
  return { model, rule };
}

/** Every column of a monitor row, in the order its inserts give them. */
const MONITOR_COLUMNS = `id, monitor_id, name, model_ref, status, trigger_schedule, time_zone, trigger_event, instructions,
  cpu_cores, memory_gb, gpu_cores, gpu_sku,
  configurable_parameters, controllers, owner_id, owner_name, etag, created_at, updated_at, created_by`;

/** As stored and answered: GreaterThan becomes GreaterThen; the optional fields (issue 25) only when given. */
const normaliseControllers = (controllers: MonitorInput["controllers"]) =>
  controllers.map((c) => ({
    ...c,
    conditions: c.conditions.map((x) => ({ ...x, operator: x.operator === "GreaterThan" ? "GreaterThen" : x.operator })),
  }));

function monitorValues(input: MonitorInput) {
  return [
    input.name,
    input.modelId,
    input.status,
    input.triggerSchedule,
    input.timeZone,
    input.triggerEvent ? JSON.stringify(input.triggerEvent) : null,
    input.instructions,
    input.cpuCores,
    input.memory,
    input.gpuCores,
    input.gpuSku,
    input.configurableParameters ? JSON.stringify(input.configurableParameters) : null,
    JSON.stringify(normaliseControllers(input.controllers)),
  ];
}

export async function createMonitor(ctx: WriteContext, principal: Principal, input: MonitorInput): Promise<MonitorRow> {
  const { rule } = await checkMonitor(ctx.db, input, null);
  const owner = ownerOrCaller(input.objectOwner, principal);
  const id = ctx.uuid();
  const monitorId = `MON-${await nextNumber(ctx.db, "monitor")}`;
  await ctx.db.batch([
    ctx.db
      .prepare(
        `INSERT INTO monitors (${MONITOR_COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?19, ?20)`,
      )
      .bind(id, monitorId, ...monitorValues(input), owner.id, owner.name, newEtagToken(), ctx.now, ctx.actorId),
    // On creation the monitor copies its model's populations and items.
    ...copyPopulationStatements(ctx.db, { kind: "model", id: input.modelId }, { kind: "monitor", id }, ctx.now),
    scheduleStatement(ctx.db, MONITOR_SCHEDULE_KIND, id, rule, new Date(ctx.now)),
    outboxStatement(ctx.db, ctx, { entityKind: "monitor", entityId: id, action: "created", payload: { id, monitorId, name: input.name } }),
  ]);
  return getMonitorRow(ctx.db, id);
}

export async function updateMonitor(ctx: WriteContext, input: MonitorInput & { id: string }): Promise<MonitorRow> {
  const current = await getMonitorRow(ctx.db, input.id);
  const version = assertVersion(ctx, current.etag);
  const { rule } = await checkMonitor(ctx.db, input, current);
  const owner = input.objectOwner
    ? { id: input.objectOwner.id, name: input.objectOwner.name ?? null }
    : { id: current.owner_id, name: current.owner_name };
  const etag = newEtagToken();
  await commitVersioned(ctx, [
    ctx.db
      .prepare(
        `UPDATE monitors SET name = ?1, model_ref = ?2, status = ?3, trigger_schedule = ?4, time_zone = ?5, trigger_event = ?6,
        instructions = ?7, cpu_cores = ?8,
           memory_gb = ?9, gpu_cores = ?10, gpu_sku = ?11, configurable_parameters = ?12, controllers = ?13, owner_id = ?14,
           owner_name = ?15, etag = ?16, updated_at = ?17
         WHERE id = ?18 AND etag = ?19`,
      )
      .bind(...monitorValues(await keepInherited(ctx.db, input, current)), owner.id, owner.name, etag, ctx.now, input.id, version),
    guardedOutboxStatement(
      ctx.db,
      ctx,
      {
        entityKind: "monitor",
        entityId: input.id,
        action: "updated",
        payload: { id: input.id, monitorId: current.monitor_id, name: input.name },
      },
      { table: "monitors", etag },
    ),
    scheduleStatement(ctx.db, MONITOR_SCHEDULE_KIND, input.id, rule, new Date(ctx.now)),
  ]);
  return getMonitorRow(ctx.db, input.id);
}

/**
 * A monitor sent back as it was read shows the model's values where it inherits them: a value equal
 * to the model's, on a field the monitor inherits today, keeps inheriting (rather than pinning the
 * model's current value). To pin the model's value, set it while it differs, or send null to inherit.
 */
async function keepInherited(
  db: Database,
  input: MonitorInput & { id: string },
  current: MonitorRow,
): Promise<MonitorInput & { id: string }> {
  if (input.modelId !== current.model_ref) return input;
  const model = await getModelRow(db, current.model_ref);
  const kept = { ...input };
  if (current.cpu_cores === null && input.cpuCores === model.cpu_cores) kept.cpuCores = null;
  if (current.memory_gb === null && input.memory === model.memory_gb) kept.memory = null;
  if (current.gpu_cores === null && current.gpu_sku === null && input.gpuCores === model.gpu_cores && input.gpuSku === model.gpu_sku) {
    kept.gpuCores = null;
    kept.gpuSku = null;
  }
  if (
    current.configurable_parameters === null &&
    input.configurableParameters !== null &&
    JSON.stringify(input.configurableParameters) === model.configurable_parameters
  ) {
    kept.configurableParameters = null;
  }
  return kept;
}

export async function deleteMonitor(ctx: WriteContext, id: string): Promise<void> {
  const current = await getMonitorRow(ctx.db, id);
  const version = assertVersion(ctx, current.etag);
  await commitVersioned(ctx, [
    ctx.db.prepare("DELETE FROM monitors WHERE id = ?1 AND etag = ?2").bind(id, version),
    guardedOutboxStatement(ctx.db, ctx, { entityKind: "monitor", entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ctx.db
      .prepare(
        "DELETE FROM populations WHERE owner_kind = 'monitor' AND owner_id = ?1 AND NOT EXISTS (SELECT 1 FROM monitors WHERE id = ?1)",
      )
      .bind(id),
    scheduleStatement(ctx.db, MONITOR_SCHEDULE_KIND, id, null, new Date(ctx.now)),
  ]);
}

/** A copy with a new MON number, status Draft, every population and item (criticality and last job cleared), no schedule until saved. */
export async function duplicateMonitor(ctx: WriteContext, principal: Principal, id: string): Promise<MonitorRow> {
  const source = await getMonitorRow(ctx.db, id);
  const copyId = ctx.uuid();
  const monitorId = `MON-${await nextNumber(ctx.db, "monitor")}`;
  await ctx.db.batch([
    ctx.db
      .prepare(
        `INSERT INTO monitors (${MONITOR_COLUMNS})
         SELECT ?1, ?2, name || ' (copy)', model_ref, 'Draft', trigger_schedule, time_zone, trigger_event, instructions,
         cpu_cores, memory_gb, gpu_cores, gpu_sku,
           configurable_parameters, controllers, ?3, ?4, ?5, ?6, ?6, ?3 FROM monitors WHERE id = ?7`,
      )
      .bind(copyId, monitorId, principal.id, principal.name ?? null, newEtagToken(), ctx.now, id),
    // Created as POST /Monitors creates one; not when the source was deleted since it was read.
    guardedOutboxStatement(
      ctx.db,
      ctx,
      { entityKind: "monitor", entityId: copyId, action: "created", payload: { id: copyId, monitorId, name: `${source.name} (copy)` } },
      "previousChanged",
    ),
    ...copyPopulationStatements(ctx.db, { kind: "monitor", id }, { kind: "monitor", id: copyId }, ctx.now),
  ]);
  return getMonitorRow(ctx.db, copyId);
}

/**
 * GET /Monitors/PopulationItems as table 4.2 shapes it, each item with its active alarms (rows from the list query,
 * src/monitors/list.ts).
 */
export async function toPopulationItemViews(
  db: Database,
  rows: readonly (ItemRow & { population_name: string; asset_type: AssetType; monitor_ref: string; monitor_name: string })[],
) {
  const alarms = await activeAlarmsOfItems(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    id: r.id,
    monitor: { id: r.monitor_ref, name: r.monitor_name },
    population: { id: r.population_id, name: r.population_name },
    assetReference: { id: r.asset_id, name: r.asset_name },
    type: r.asset_type,
    criticality: r.criticality,
    band: bandOf(r.criticality),
    lastMonitorJobId: r.last_monitor_job_id,
    alarms: alarms.get(r.id) ?? [],
  }));
}

/** Refuses (404) an item id that is not in one of the monitor's populations. */
export async function requireMonitorItem(db: Database, monitorId: string, itemId: string): Promise<void> {
  const item = await db
    .prepare(
      "SELECT i.id FROM population_items i JOIN populations p ON p.id = i.population_id WHERE i.id = ?1 AND " +
        "p.owner_kind = 'monitor' AND p.owner_id = ?2",
    )
    .bind(itemId, monitorId)
    .first();
  if (!item) throw new ApiError("NotFound", `Population item ${itemId} of monitor ${monitorId} does not exist.`);
}

/** The criticality values reported for an item, newest first, with their bands. */
export async function criticalityHistory(db: Database, itemId: string, skip: number, take: number) {
  const { results } = await db
    .prepare(
      "SELECT monitor_job_id, criticality, recorded_at FROM criticality_history WHERE item_id = ?1 ORDER BY " +
        "recorded_at DESC, id LIMIT ?2 OFFSET ?3",
    )
    .bind(itemId, take, skip)
    .all<{ monitor_job_id: string; criticality: number; recorded_at: string }>();
  return results.map((r) => ({
    monitorJobId: r.monitor_job_id,
    criticality: r.criticality,
    band: bandOf(r.criticality)!,
    recordedAt: r.recorded_at,
  }));
}
