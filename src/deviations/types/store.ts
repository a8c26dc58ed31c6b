/**
 * Deviation types in D1: an entity_types row (applies_to deviationType, or the default General),
 * its links in entity_type_properties and its own property values (entity_kind deviationType),
 * always written together in one db.batch() guarded by the etag it read.
 */
import type { Database } from "../../db/statements";
import { loadDefinitionsByIds } from "../../properties/values/store";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { ApiError, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import {
  assertStatement,
  conflict,
  isAssertionFailure,
  isForeignKeyViolation,
  newEtagToken,
  runBatch,
  type WriteContext,
} from "../../pkg/db";
import type { Versioned } from "../../pkg/resource";
import { checkLinks } from "../../properties/entity-types/links";
import {
  deleteEntityTypeStatements,
  ENTITY_TYPE_COLUMNS,
  insertEntityTypeStatements,
  toEntityType,
  updateEntityTypeStatements,
  valuesOf,
  type EntityTypeRow,
} from "../../properties/entity-types/store";
import type { DefinitionLinkRow } from "../../properties/entity-types/links";
import { countUses, unusedCondition } from "../../db/references";
import {
  deletePropertyValuesStatement,
  replacePropertyValuesStatements,
  resolveAgainst,
  toLinkedProperties,
  toPropertyValueRows,
  type LinkedProperty,
} from "../../properties/values";
import { readLinkedProperties } from "../linked-properties";
import type { DeviationType, DeviationTypeInput } from "./schema";
import { assertVersion, retryWrite } from "../../pkg/resource";

/** entity_kind of a deviation type's own values and events. */
export const DEVIATION_TYPE_KIND = "deviationType";
/** The rule of the definitions whose values a deviation type carries. */
const OWN_RULE = "deviationType";
/** Which entity_types rows are deviation types (alias t). */
export const IS_DEVIATION_TYPE = "(t.applies_to = 'deviationType' OR t.is_default = 1)";

const LINKS_SQL = `SELECT l.entity_type_id, d.id, d.name, d.format, d.application_rule, d.required, d.etag
  FROM entity_type_properties l JOIN property_definitions d ON d.id = l.property_definition_id`;

type LinkRow = DefinitionLinkRow & { entity_type_id: string };

/** Builds deviation types from their rows: links and own properties read in one round per page. */
export async function toDeviationTypes(db: Database, rows: readonly EntityTypeRow[]): Promise<Versioned<DeviationType>[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [{ results: links }, properties] = await Promise.all([
    db
      .prepare(`${LINKS_SQL} WHERE l.entity_type_id IN (SELECT value FROM json_each(?1)) ORDER BY l.entity_type_id, l.position`)
      .bind(JSON.stringify(ids))
      .all<LinkRow>(),
    readLinkedProperties(
      db,
      DEVIATION_TYPE_KIND,
      OWN_RULE,
      ids.map((id) => ({ id, typeId: id })),
    ),
  ]);
  return Promise.all(
    rows.map(async (row) => {
      const own = links.filter((l) => l.entity_type_id === row.id);
      return compose(row, own, properties.get(row.id) ?? []);
    }),
  );
}

async function compose(
  row: EntityTypeRow,
  links: readonly DefinitionLinkRow[],
  properties: LinkedProperty[],
): Promise<Versioned<DeviationType>> {
  const { value, etag } = await toEntityType(row, links);
  const { appliesTo: _appliesTo, ...rest } = value;
  return { value: { ...rest, properties }, etag };
}

async function readRow(db: Database, id: string): Promise<EntityTypeRow | null> {
  return db
    .prepare(
      `SELECT ${ENTITY_TYPE_COLUMNS.split(", ")
        .map((c) => `t.${c}`)
        .join(", ")} FROM entity_types t WHERE t.id = ?1 AND ${IS_DEVIATION_TYPE}`,
    )
    .bind(id.toLowerCase())
    .first<EntityTypeRow>();
}

export async function getDeviationType(db: Database, id: string): Promise<Versioned<DeviationType>> {
  const row = await readRow(db, id);
  if (!row) throw notFound("Deviation type", id);
  const [found] = await toDeviationTypes(db, [row]);
  return found!;
}

const nameTaken = (name: string) =>
  conflict(`An entity type named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used by an entity type." },
  ]);

/** Links and own values a write stores, checked; throws one ValidationFailed (or ExpressionFailed). */
async function prepare(db: Database, input: DeviationTypeInput, isDefault: boolean) {
  const linkIds = input.propertyDefinitions.map((link) => link.id.toLowerCase());
  // General accepts every rule (appliesTo null); every other deviation type deviationType and Deviation.
  const links = await checkLinks(db, isDefault ? null : "deviationType", linkIds);
  const definitions = await loadDefinitionsByIds(db, linkIds);
  const resolved = await resolveAgainst(definitions, input.properties, { field: "body.properties", applicationRule: OWN_RULE });
  if (!resolved.ok)
    throw new ApiError(resolved.code, resolved.errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors: resolved.errors });
  return { linkIds, links, properties: resolved.properties };
}

async function runWrite(db: Database, statements: D1PreparedStatement[], name: string): Promise<D1Result[]> {
  try {
    return await runBatch(db, statements, () => nameTaken(name));
  } catch (error) {
    if (isAssertionFailure(error)) throw preconditionFailed();
    if (isForeignKeyViolation(error)) throw conflict("A linked property definition was deleted meanwhile; read the definitions again.");
    throw error;
  }
}

function rowFor(id: string, input: DeviationTypeInput, isDefault: boolean, etag: string, createdAt: string, now: string): EntityTypeRow {
  return {
    id,
    name: input.name,
    description: input.description,
    applies_to: isDefault ? null : "deviationType",
    icon_name: input.icon?.name ?? null,
    icon_color: input.icon?.color ?? null,
    is_default: isDefault ? 1 : 0,
    metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
    etag,
    created_at: createdAt,
    updated_at: now,
  };
}

export async function createDeviationType(ctx: WriteContext, input: DeviationTypeInput): Promise<Versioned<DeviationType>> {
  const { linkIds, links, properties } = await prepare(ctx.db, input, false);
  const id = ctx.uuid();
  const row = rowFor(id, input, false, newEtagToken(), ctx.now, ctx.now);
  const created = await compose(row, links, toLinkedProperties(properties));
  await runWrite(
    ctx.db,
    [
      ...insertEntityTypeStatements(ctx.db, valuesOf(row, ctx.actorId), linkIds),
      ...replacePropertyValuesStatements(ctx.db, DEVIATION_TYPE_KIND, id, toPropertyValueRows(DEVIATION_TYPE_KIND, id, properties)),
      ...outboxStatements(ctx.db, ctx, {
        entityKind: DEVIATION_TYPE_KIND,
        entityId: id,
        action: "created",
        payload: created.value,
        etag: created.etag,
      }),
    ],
    input.name,
  );
  return created;
}

export async function updateDeviationType(
  ctx: WriteContext,
  input: DeviationTypeInput & { id: string },
): Promise<Versioned<DeviationType>> {
  return retryWrite(ctx, async () => {
    const current = await getDeviationTypeRow(ctx.db, input.id);
    assertVersion(ctx, current.versioned.etag);
    const isDefault = current.row.is_default === 1;
    const { linkIds, links, properties } = await prepare(ctx.db, input, isDefault);
    const row = rowFor(current.row.id, input, isDefault, newEtagToken(), current.row.created_at, ctx.now);
    const updated = await compose(row, links, toLinkedProperties(properties));
    await runWrite(
      ctx.db,
      [
        // The whole batch applies only to the version read above; a concurrent write makes it a 412.
        assertStatement(ctx.db, "EXISTS (SELECT 1 FROM entity_types WHERE id = ?1 AND etag = ?2)", row.id, current.row.etag),
        ...updateEntityTypeStatements(ctx.db, valuesOf(row, ctx.actorId), current.row.etag, linkIds),
        ...replacePropertyValuesStatements(
          ctx.db,
          DEVIATION_TYPE_KIND,
          row.id,
          toPropertyValueRows(DEVIATION_TYPE_KIND, row.id, properties),
        ),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: DEVIATION_TYPE_KIND, entityId: row.id, action: "updated", payload: updated.value, etag: updated.etag },
          { table: "entity_types", etag: row.etag },
        ),
      ],
      input.name,
    );
    return updated;
  });
}

async function getDeviationTypeRow(db: Database, id: string): Promise<{ row: EntityTypeRow; versioned: Versioned<DeviationType> }> {
  const row = await readRow(db, id);
  if (!row) throw notFound("Deviation type", id);
  const [versioned] = await toDeviationTypes(db, [row]);
  return { row, versioned: versioned! };
}

export async function deleteDeviationType(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getDeviationTypeRow(ctx.db, id);
    assertVersion(ctx, current.versioned.etag);
    if (current.row.is_default === 1) throw new ApiError("Conflict", "The default type (General) cannot be deleted; it can be renamed.");
    const uses = await countUses(ctx.db, "entityType", current.row.id);
    if (uses > 0) throw new ApiError("InUse", `The deviation type is used by ${uses} entit${uses === 1 ? "y" : "ies"}.`);
    try {
      await ctx.db.batch([
        // Re-checked in the batch: a deviation created with this type since the count aborts the delete.
        assertStatement(
          ctx.db,
          `EXISTS (SELECT 1 FROM entity_types WHERE id = ?1 AND etag = ?2 AND is_default = 0) AND ${unusedCondition("entityType")}`,
          current.row.id,
          current.row.etag,
        ),
        deletePropertyValuesStatement(ctx.db, DEVIATION_TYPE_KIND, current.row.id),
        ...deleteEntityTypeStatements(ctx.db, current.row.id, current.row.etag, "id = ?1 AND etag = ?2"),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: DEVIATION_TYPE_KIND, entityId: current.row.id, action: "deleted", payload: null },
          "previousChanged",
        ),
      ]);
    } catch (error) {
      if (isAssertionFailure(error) || isForeignKeyViolation(error)) {
        const again = await countUses(ctx.db, "entityType", current.row.id);
        if (again > 0) throw new ApiError("InUse", `The deviation type is used by ${again} entit${again === 1 ? "y" : "ies"}.`);
        throw preconditionFailed();
      }
      throw error;
    }
  });
}
