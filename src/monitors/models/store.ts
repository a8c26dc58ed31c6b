/**
 * Models in D1: the owner of models. A model is numbered MOD-n, names a model definition by name and
 * version, carries the resources and parameters its monitors inherit, and values of the Model
 * properties linked to its entity type (stored by the property values' owner in the same batch). Its
 * populations are the populations' store's; a model answers with them.
 */
import { tableStatements, type Database, type Row } from "../../db/statements";
import { models } from "../../db/schema";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import type { Principal } from "../../pkg/auth";
import { assertStatement, isAssertionFailure, newEtagToken, type WriteContext } from "../../pkg/db";
import { ApiError, invalid, notFound, type FieldProblem } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { assertVersion, commitVersioned, retryWrite } from "../../pkg/resource";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import { resolveLinkedValues } from "../../properties/values/resolve";
import {
  deletePropertyValuesStatement,
  readPropertyValues,
  replacePropertyValuesStatements,
  toPropertyValueRows,
} from "../../properties/values/rows";
import type { LinkedProperty, ResolvedProperty } from "../../properties/values/types";
import { ownerOrCaller } from "../../work/common";
import { findDefinitionByVersion } from "../model-definitions/store";
import { nextNumber } from "../numbers";
import type { Population } from "../populations/schema";
import { deleteOwnerPopulationsStatement, populationsOfMany } from "../populations/store";
import { storedEnum } from "../stored";
import { STATUSES, type Status } from "./schema";

const modelTable = tableStatements(models);

export type ModelRow = Row<typeof models>;
/** A model row as read with every column (a list page among them), typed by the schema. */
export const modelRow = (raw: Record<string, unknown>): ModelRow => modelTable.row(raw);
const SELECT_MODEL = `SELECT ${modelTable.columns} FROM models`;

type Params = Record<string, string>;
/** The entity kind of a model's property values. */
const MODEL_KIND = "model";

interface ModelInput {
  name: string;
  description: string | null;
  modelDefinitionName: string;
  modelDefinitionVersion: string;
  status: Status;
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

function modelOf(r: ModelRow, properties: LinkedProperty[], populations: Population[]) {
  return {
    id: r.id,
    modelId: r.modelId,
    name: r.name,
    description: r.description,
    modelDefinitionName: r.definitionName,
    modelDefinitionVersion: r.definitionVersion,
    status: storedEnum(STATUSES, r.status, "models.status"),
    cpuCores: r.cpuCores,
    memory: r.memoryGb,
    gpuCores: r.gpuCores,
    gpuSku: r.gpuSku,
    configurableParameters: JSON.parse(r.configurableParameters) as Params,
    staticParameters: JSON.parse(r.staticParameters) as Params,
    objectOwner: { id: r.ownerId, name: r.ownerName },
    typeId: r.typeId,
    properties,
    populations,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** A model's row; a 404, or with `field` a 400 naming where its id came from, when it does not exist. */
export async function getModelRow(db: Database, id: string, field?: string): Promise<ModelRow> {
  const row = await db.prepare(`${SELECT_MODEL} WHERE id = ?1`).bind(id).first<Record<string, unknown>>();
  if (!row) throw field ? invalid(field, "exists", `Model ${id} does not exist.`) : notFound("Model", id);
  return modelRow(row);
}

/** Rows of models by id, for a batch (map them with {@link modelRow}). */
export function modelRowsStatement(db: Database, ids: readonly string[]): D1PreparedStatement {
  return db.prepare(`${SELECT_MODEL} WHERE id IN (SELECT value FROM json_each(?1))`).bind(JSON.stringify([...new Set(ids)]));
}

/**
 * Status transitions of models and monitors: Draft -> Active -> Deprecated, Draft -> Deprecated, and
 * Deprecated -> Active (brought back). Nothing goes back to Draft once it was Active or Deprecated.
 */
export function checkTransition(from: string, to: string, field: string): void {
  if (from !== "Draft" && to === "Draft") throw invalid(field, "transition", `A ${from} model or monitor cannot go back to Draft.`);
}

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
    values: input.properties,
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

/** The columns a model's create and update both write. */
function modelValues(input: ModelInput, typeId: string, owner: { id: string; name: string | null }) {
  return {
    name: input.name,
    description: input.description,
    definitionName: input.modelDefinitionName,
    definitionVersion: input.modelDefinitionVersion,
    status: input.status,
    cpuCores: input.cpuCores,
    memoryGb: input.memory,
    gpuCores: input.gpuCores,
    gpuSku: input.gpuSku,
    configurableParameters: JSON.stringify(input.configurableParameters),
    staticParameters: JSON.stringify(input.staticParameters),
    typeId,
    ownerId: owner.id,
    ownerName: owner.name,
  };
}

export async function createModel(ctx: WriteContext, principal: Principal, input: ModelInput): Promise<ModelRow> {
  await checkModel(ctx.db, input);
  const { typeId, properties } = await modelProperties(ctx.db, input);
  const owner = ownerOrCaller(input.objectOwner, principal);
  const id = ctx.uuid();
  const modelId = `MOD-${await nextNumber(ctx.db, "model")}`;
  await ctx.db.batch([
    modelTable.insert(ctx.db, {
      id,
      modelId,
      ...modelValues(input, typeId, owner),
      etag: newEtagToken(),
      createdAt: ctx.now,
      updatedAt: ctx.now,
      createdBy: ctx.actorId,
    }),
    ...replacePropertyValuesStatements(ctx.db, MODEL_KIND, id, toPropertyValueRows(MODEL_KIND, id, properties)),
    ...outboxStatements(ctx.db, ctx, { entityKind: "model", entityId: id, action: "created", payload: { id, modelId, name: input.name } }),
  ]);
  return getModelRow(ctx.db, id);
}

export async function updateModel(ctx: WriteContext, input: ModelInput & { id: string }): Promise<ModelRow> {
  return retryWrite(ctx, async () => {
    const current = await getModelRow(ctx.db, input.id);
    const version = assertVersion(ctx, current.etag);
    checkTransition(current.status, input.status, "body.status");
    await checkModel(ctx.db, input);
    const { typeId, properties } = await modelProperties(ctx.db, { ...input, typeId: input.typeId ?? current.typeId });
    const owner = input.objectOwner
      ? { id: input.objectOwner.id, name: input.objectOwner.name ?? null }
      : { id: current.ownerId, name: current.ownerName };
    const etag = newEtagToken();
    await commitVersioned(ctx, [
      modelTable.update(ctx.db, { ...modelValues(input, typeId, owner), etag, updatedAt: ctx.now }, { id: input.id, etag: version }),
      // Guarded on the update above having applied: a lost race leaves the old values.
      assertStatement(ctx.db, "changes() = 1"),
      ...replacePropertyValuesStatements(ctx.db, MODEL_KIND, input.id, toPropertyValueRows(MODEL_KIND, input.id, properties)),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        {
          entityKind: "model",
          entityId: input.id,
          action: "updated",
          payload: { id: input.id, modelId: current.modelId, name: input.name },
        },
        { table: modelTable.name, etag },
      ),
    ]).catch((error: unknown) => {
      if (isAssertionFailure(error)) throw preconditionFailed();
      throw error;
    });
    return getModelRow(ctx.db, input.id);
  });
}

/**
 * A new version of a model whose representation changed elsewhere (one of its populations), guarded
 * on the version read: it changes no row when the model moved on meanwhile.
 */
export function newModelVersionStatement(db: Database, id: string, version: string, etag: string, now: string): D1PreparedStatement {
  return modelTable.update(db, { etag, updatedAt: now }, { id, etag: version });
}

export async function deleteModel(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getModelRow(ctx.db, id);
    const version = assertVersion(ctx, current.etag);
    const used = await ctx.db
      .prepare("SELECT monitor_id FROM monitors WHERE model_ref = ?1 LIMIT 1")
      .bind(id)
      .first<{ monitor_id: string }>();
    if (used) throw new ApiError("InUse", `Monitor ${used.monitor_id} uses this model.`);
    await commitVersioned(ctx, [
      // The model row first, guarded on its version and on no monitor having started to use it meanwhile
      // (hand-written: the guard reads monitors).
      ctx.db
        .prepare("DELETE FROM models WHERE id = ?1 AND etag = ?2 AND NOT EXISTS (SELECT 1 FROM monitors WHERE model_ref = ?1)")
        .bind(id, version),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: "model", entityId: id, action: "deleted", payload: null }, "previousChanged"),
      deleteOwnerPopulationsStatement(ctx.db, "model", id),
      deletePropertyValuesStatement(ctx.db, MODEL_KIND, id),
    ]);
  });
}
