/**
 * Creating, replacing and deleting deviations. Each write is one db.batch(): the row, designations,
 * property values, both directions of relationships, the etags of deviations whose relationship
 * lists changed, and the outbox event. Updates and deletes start with an assertion that the row
 * still has the etag read, so a concurrent write makes the whole batch a no-op (412).
 */
import type { Database } from "../db/statements";
import { deleteDesignationsStatement, replaceDesignationsStatements, type AssetRef } from "../assets/designations";
import { guardedOutboxStatements, outboxStatements } from "../events/outbox";
import { ApiError, type FieldProblem } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import {
  assertStatement,
  conflict,
  isAssertionFailure,
  isForeignKeyViolation,
  isUniqueViolation,
  newEtagToken,
  type WriteContext,
} from "../pkg/db";
import type { Versioned } from "../pkg/resource";
import {
  deletePropertyValuesStatement,
  replacePropertyValuesStatements,
  resolveLinkedValues,
  toLinkedProperties,
  toPropertyValueRows,
  type ResolvedProperty,
} from "../properties/values";
import { checkStatus, ownerOrCaller, type Person } from "../work/common";
import { resolveAssetReference } from "./asset-reference";
import {
  composeDeviation,
  DEVIATION_KIND,
  DEVIATION_RULE,
  deleteDeviationStatements,
  deviationValues,
  insertDeviationsStatements,
  readForWrite,
  replaceRelationshipsStatements,
  sortRelationships,
  touchDeviationsStatement,
  updateDeviationStatement,
  type DeviationRow,
  type Relationship,
} from "./store";
import { checkRelationships } from "./relationships";
import { newWorkItemVersionsStatement } from "../work-items/store";
import type { Deviation, DeviationInput, DeviationUpdate } from "./schema";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";
import { IS_DEVIATION_TYPE } from "./types/store";
import { assertVersion, retryWrite } from "../pkg/resource";

/** `DEV-` and the first 8 hex digits of the id, upper-case. */
export function generatedReferenceId(id: string): string {
  return `DEV-${id.replace(/-/g, "").slice(0, 8).toUpperCase()}`;
}

interface Checked {
  status: string;
  typeName: string;
  assets: AssetRef[];
  properties: ResolvedProperty[];
  related: Relationship[];
}

/** Runs a check, collecting a ValidationFailed's problems so one 400 lists every problem. */
async function collect<T>(errors: FieldProblem[], check: () => Promise<T>): Promise<T | undefined> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof ApiError && error.code === "ValidationFailed" && error.errors) {
      errors.push(...error.errors);
      return undefined;
    }
    throw error;
  }
}

async function checkInput(db: Database, selfId: string, typeId: string, input: DeviationInput): Promise<Checked> {
  const errors: FieldProblem[] = [];
  const type = await db
    .prepare(`SELECT t.name FROM entity_types t WHERE t.id = ?1 AND ${IS_DEVIATION_TYPE}`)
    .bind(typeId)
    .first<{ name: string }>();
  if (!type) errors.push({ field: "body.typeId", rule: "exists", message: `${typeId} is not a deviation type (GET /DeviationTypes).` });
  const status = await collect(errors, () => checkStatus(db, input.status));
  const assets = await collect(errors, () => resolveAssetReference(db, input.assetReference));
  const { related, errors: relationshipErrors } = await checkRelationships(db, selfId, input.relationships);
  errors.push(...relationshipErrors);
  // Values are checked against the type only when it is one (else every name would be unknown too).
  const properties = type
    ? await collect(errors, () =>
        resolveLinkedValues(db, {
          entityTypeId: typeId,
          applicationRule: DEVIATION_RULE,
          values: input.properties,
          field: "body.properties",
          entityTypeField: "body.typeId",
        }),
      )
    : undefined;
  if (errors.length > 0 || !type || status === undefined || !assets || !properties) {
    throw new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
  }
  return { status, typeName: type.name, assets, properties, related };
}

function rowFor(
  id: string,
  input: DeviationInput,
  checked: Checked,
  fixed: { referenceId: string; typeId: string; owner: Person; createdAt: string; origin: string | null },
  now: string,
): DeviationRow {
  return {
    id,
    reference_id: fixed.referenceId,
    description: input.description,
    status: checked.status,
    type_id: fixed.typeId,
    owner_id: fixed.owner.id,
    owner_name: fixed.owner.name,
    risk_id: input.risk?.id ?? null,
    risk_name: input.risk?.name ?? null,
    metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
    origin: fixed.origin,
    etag: newEtagToken(),
    created_at: fixed.createdAt,
    updated_at: now,
  };
}

/** The statements of a deviation's own dependents (designations, property values). */
function dependentStatements(ctx: WriteContext, row: DeviationRow, checked: Checked): D1PreparedStatement[] {
  return [
    ...replaceDesignationsStatements(ctx.db, DEVIATION_KIND, row.id, checked.assets),
    ...replacePropertyValuesStatements(ctx.db, DEVIATION_KIND, row.id, toPropertyValueRows(DEVIATION_KIND, row.id, checked.properties)),
  ];
}

async function runWrite(db: Database, statements: D1PreparedStatement[], referenceId: string): Promise<D1Result[]> {
  try {
    return await db.batch(statements);
  } catch (error) {
    if (isAssertionFailure(error)) throw preconditionFailed();
    if (isUniqueViolation(error)) {
      throw conflict(`A deviation with the referenceId '${referenceId}' already exists.`, [
        { field: "body.referenceId", rule: "unique", message: "referenceIds are unique (case-insensitive)." },
      ]);
    }
    // A related deviation, an asset or the type was deleted between the checks and the write.
    if (isForeignKeyViolation(error))
      throw conflict("A related deviation, a designated asset or the type was deleted meanwhile; read them again.");
    throw error;
  }
}

/**
 * Checks a deviation as a create (or, with `selfId` and the type it keeps, a replace) would, and writes
 * nothing: every rule of {@link createDeviation} short of the write's own constraints (a referenceId
 * taken meanwhile). Throws the same 400 listing every problem. Spreadsheet imports dry-run rows with it.
 */
export async function validateDeviation(db: Database, input: DeviationInput, selfId: string): Promise<void> {
  await checkInput(db, selfId, (input.typeId ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase(), input);
}

/**
 * A deviation's write, checked and composed but not run: its statements for one db.batch() (with the
 * caller's `extra` ones at the end) and what it answers once they ran. Imports run many rows' writes in
 * one batch this way; {@link createDeviation} and {@link updateDeviation} run one.
 */
export interface PreparedDeviationWrite {
  value: Versioned<Deviation>;
  statements: D1PreparedStatement[];
  referenceId: string;
}

/** A create of {@link createDeviation}, checked and composed: every rule, nothing written. */
export async function prepareCreateDeviation(
  ctx: WriteContext,
  input: DeviationInput,
  extra: readonly D1PreparedStatement[] = [],
): Promise<PreparedDeviationWrite> {
  const id = ctx.uuid();
  const typeId = (input.typeId ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase();
  const checked = await checkInput(ctx.db, id, typeId, input);
  const owner = ownerOrCaller(input.objectOwner, ctx.actorId === null ? null : { id: ctx.actorId, name: ctx.actorName ?? ctx.actorId });
  const referenceId = input.referenceId ?? generatedReferenceId(id);
  const row = rowFor(id, input, checked, { referenceId, typeId, owner, createdAt: ctx.now, origin: null }, ctx.now);
  const created = await composeDeviation(row, {
    typeName: checked.typeName,
    assets: checked.assets,
    properties: toLinkedProperties(checked.properties),
    relationships: sortRelationships([...checked.related]),
    workItemIds: [],
  });
  const statements = [
    ...insertDeviationsStatements(ctx.db, [deviationValues(row, ctx.actorId)]),
    ...dependentStatements(ctx, row, checked),
    ...replaceRelationshipsStatements(
      ctx.db,
      id,
      checked.related.map((r) => r.id),
      [],
      ctx.now,
    ),
    ...outboxStatements(ctx.db, ctx, {
      entityKind: DEVIATION_KIND,
      entityId: id,
      action: "created",
      payload: created.value,
      etag: created.etag,
    }),
    ...extra,
  ];
  return { value: created, statements, referenceId };
}

/**
 * Creates a deviation. `extra` statements join the write's batch (an import's record of the row it
 * wrote), so they are written exactly when the deviation is.
 */
export async function createDeviation(
  ctx: WriteContext,
  input: DeviationInput,
  extra: readonly D1PreparedStatement[] = [],
): Promise<Versioned<Deviation>> {
  const prepared = await prepareCreateDeviation(ctx, input, extra);
  await runWrite(ctx.db, prepared.statements, prepared.referenceId);
  return prepared.value;
}

/** A replacement of {@link updateDeviation} (one attempt), checked and composed against the current row: nothing written. */
export async function prepareUpdateDeviation(
  ctx: WriteContext,
  input: DeviationUpdate,
  extra: readonly D1PreparedStatement[] = [],
): Promise<PreparedDeviationWrite> {
  const { row: currentRow, current } = await readForWrite(ctx.db, input.id);
  assertVersion(ctx, current.etag);
  const typeId = (input.typeId ?? currentRow.type_id).toLowerCase();
  const checked = await checkInput(ctx.db, currentRow.id, typeId, input);
  // A plant designated directly (only the monitoring loop does that: a Plant item's deviation) stays
  // while no main system, design object or equipment is given, since the body has no slot for it.
  const plant = current.value.assetReference.plant;
  const slotsGiven = checked.assets.length > 0;
  const viaSlot =
    current.value.assetReference.mainSystem ?? current.value.assetReference.designObject ?? current.value.assetReference.equipment;
  if (!slotsGiven && plant && !viaSlot) checked.assets.push({ id: plant.id, kind: "plant", name: plant.name, plant });
  const owner = input.objectOwner
    ? { id: input.objectOwner.id, name: input.objectOwner.name ?? null }
    : { id: currentRow.owner_id, name: currentRow.owner_name };
  const referenceId = input.referenceId ?? currentRow.reference_id;
  const row = rowFor(
    currentRow.id,
    input,
    checked,
    { referenceId, typeId, owner, createdAt: currentRow.created_at, origin: currentRow.origin },
    ctx.now,
  );
  const updated = await composeDeviation(row, {
    typeName: checked.typeName,
    assets: checked.assets,
    properties: toLinkedProperties(checked.properties),
    relationships: sortRelationships([...checked.related]),
    workItemIds: current.value.workItemIds,
  });
  const statements = [
    assertStatement(ctx.db, "EXISTS (SELECT 1 FROM deviations WHERE id = ?1 AND etag = ?2)", row.id, currentRow.etag),
    updateDeviationStatement(ctx.db, row),
    ...dependentStatements(ctx, row, checked),
    ...replaceRelationshipsStatements(
      ctx.db,
      row.id,
      checked.related.map((r) => r.id),
      current.value.relationships.map((r) => r.id),
      ctx.now,
    ),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: DEVIATION_KIND, entityId: row.id, action: "updated", payload: updated.value, etag: updated.etag },
      { table: "deviations", etag: row.etag },
    ),
    ...extra,
  ];
  return { value: updated, statements, referenceId };
}

/** Replaces a deviation; `extra` statements join the write's batch, as for {@link createDeviation}. */
export async function updateDeviation(
  ctx: WriteContext,
  input: DeviationUpdate,
  extra: readonly D1PreparedStatement[] = [],
): Promise<Versioned<Deviation>> {
  return retryWrite(ctx, async () => {
    const prepared = await prepareUpdateDeviation(ctx, input, extra);
    await runWrite(ctx.db, prepared.statements, prepared.referenceId);
    return prepared.value;
  });
}

/** Deletes a deviation with its relationships (both directions), designations, property values and work item links. */
export async function deleteDeviation(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const { row, current } = await readForWrite(ctx.db, id);
    assertVersion(ctx, current.etag);
    const related = current.value.relationships.map((r) => r.id);
    await runWrite(
      ctx.db,
      [
        assertStatement(ctx.db, "EXISTS (SELECT 1 FROM deviations WHERE id = ?1 AND etag = ?2)", row.id, row.etag),
        ...(related.length > 0 ? [touchDeviationsStatement(ctx.db, related)] : []),
        // The linked work items show this deviation in deviationIds, so their representation changes.
        newWorkItemVersionsStatement(
          ctx.db,
          { sql: "id IN (SELECT work_item_id FROM deviation_work_items WHERE deviation_id = ?1)", bindings: [row.id] },
          newEtagToken(),
        ),
        deleteDesignationsStatement(ctx.db, DEVIATION_KIND, row.id),
        deletePropertyValuesStatement(ctx.db, DEVIATION_KIND, row.id),
        ...deleteDeviationStatements(ctx.db, row.id),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: DEVIATION_KIND, entityId: row.id, action: "deleted", payload: null },
          "previousChanged",
        ),
      ],
      row.reference_id,
    );
  });
}
