/**
 * Entity types in D1: a row in entity_types plus its ordered links in entity_type_properties, always
 * written together in one db.batch(). One type, General, is the default.
 */
import { tableStatements, type Database, type Insert } from "../../db/statements";
import { entityTypes } from "../../db/schema";
import { nameKey } from "../../pkg/unicode";
import { guardedOutboxStatements } from "../../events/outbox";
import { ApiError, invalid, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { conflict, isForeignKeyViolation, newEtagToken, parseJson, runBatch, type WriteContext } from "../../pkg/db";
import type { Versioned } from "../../pkg/resource";
import { normaliseApplicationRule, type ApplicationRule } from "../definitions/rules";
import { checkLinks, type DefinitionLinkRow } from "./links";
import type { EntityType, EntityTypeInput } from "./schema";
import { countUses, unusedCondition } from "../../db/references";
import { assertVersion, retryWrite } from "../../pkg/resource";

export interface EntityTypeRow {
  id: string;
  name: string;
  description: string | null;
  applies_to: string | null;
  icon_name: string | null;
  icon_color: string | null;
  is_default: number;
  metadata: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

interface LinkRow extends DefinitionLinkRow {
  entity_type_id: string;
}

export const ENTITY_TYPE_COLUMNS =
  "id, name, description, applies_to, icon_name, icon_color, is_default, metadata, etag, created_at, updated_at";
const KIND = "entityType";
const LINKS_SQL = `SELECT l.entity_type_id, d.id, d.name, d.format, d.application_rule, d.required, d.etag
  FROM entity_type_properties l JOIN property_definitions d ON d.id = l.property_definition_id`;

/**
 * The ETag of an entity type covers the linked definitions it shows too (their name, format, rule and
 * required can change without the type changing), so a 304 never serves a stale `required`.
 */
async function representationEtag(typeEtag: string, links: readonly DefinitionLinkRow[]): Promise<string> {
  if (links.length === 0) return typeEtag;
  const text = [typeEtag, ...links.map((l) => `${l.id}:${l.etag}`)].join("|");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest).slice(0, 10)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function toEntityType(row: EntityTypeRow, links: readonly DefinitionLinkRow[]): Promise<Versioned<EntityType>> {
  return {
    value: {
      id: row.id,
      name: row.name,
      description: row.description,
      appliesTo: row.applies_to as EntityType["appliesTo"],
      icon: row.icon_name !== null && row.icon_color !== null ? { name: row.icon_name, color: row.icon_color } : null,
      isDefault: row.is_default === 1,
      metadata: parseJson<Record<string, unknown>>(row.metadata),
      propertyDefinitions: links.map((l) => ({
        id: l.id,
        name: l.name,
        format: l.format,
        applicationRule: l.application_rule,
        required: l.required === 1,
      })),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: await representationEtag(row.etag, links),
  };
}

/** The linked definitions of several types, in link order, grouped by type id (for list pages). */
export async function loadLinksOf(db: Database, typeIds: readonly string[]): Promise<Map<string, LinkRow[]>> {
  const grouped = new Map<string, LinkRow[]>(typeIds.map((id) => [id, []]));
  if (typeIds.length === 0) return grouped;
  const { results } = await db
    .prepare(`${LINKS_SQL} WHERE l.entity_type_id IN (SELECT value FROM json_each(?1)) ORDER BY l.entity_type_id, l.position`)
    .bind(JSON.stringify(typeIds))
    .all<LinkRow>();
  for (const row of results) grouped.get(row.entity_type_id)?.push(row);
  return grouped;
}

async function readEntityType(
  db: Database,
  where: "id = ?1" | "is_default = 1",
  id?: string,
): Promise<{ row: EntityTypeRow; versioned: Versioned<EntityType> } | null> {
  const head = db.prepare(`SELECT ${ENTITY_TYPE_COLUMNS} FROM entity_types WHERE ${where}`);
  const row = await (id === undefined ? head : head.bind(id)).first<EntityTypeRow>();
  if (!row) return null;
  const { results } = await db.prepare(`${LINKS_SQL} WHERE l.entity_type_id = ?1 ORDER BY l.position`).bind(row.id).all<LinkRow>();
  return { row, versioned: await toEntityType(row, results) };
}

export async function findEntityType(db: Database, id: string): Promise<Versioned<EntityType> | null> {
  return (await readEntityType(db, "id = ?1", id))?.versioned ?? null;
}

export async function getEntityType(db: Database, id: string): Promise<Versioned<EntityType>> {
  const found = await findEntityType(db, id);
  if (!found) throw notFound("Entity type", id);
  return found;
}

/** The default entity type (General), chosen when an entity names no type. */
export async function getDefaultEntityType(db: Database): Promise<Versioned<EntityType>> {
  const found = await readEntityType(db, "is_default = 1");
  if (!found) throw new Error("the default entity type is missing: migrations were not applied");
  return found.versioned;
}

const nameTaken = (name: string) =>
  conflict(`An entity type named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used." },
  ]);

/** Normalises and checks what a create or update asks for; throws ValidationFailed. */
async function prepare(
  db: Database,
  input: EntityTypeInput,
  isDefault: boolean,
): Promise<{ appliesTo: ApplicationRule | null; linkIds: string[]; links: DefinitionLinkRow[] }> {
  // The schema admits only known spellings, so normalising cannot fail here.
  const appliesTo = input.appliesTo === null ? null : (normaliseApplicationRule(input.appliesTo) ?? null);
  if (isDefault && appliesTo !== null) {
    throw invalid("body.appliesTo", "default", "The default type (General) accepts entities of every kind, so its appliesTo stays null.");
  }
  const linkIds = input.propertyDefinitions.map((link) => link.id.toLowerCase());
  const links = await checkLinks(db, appliesTo, linkIds);
  return { appliesTo, linkIds, links };
}

const typeTable = tableStatements(entityTypes);

/** An entity type's row as written (its name key derived from its name). */
export type EntityTypeValues = Omit<Insert<typeof entityTypes>, "nameKey">;

/**
 * The link rows, written only while the type carries `etag` (the token this batch set), so a batch
 * whose guarded update lost a race changes nothing. One JSON parameter carries every id in order.
 */
function linkStatements(db: Database, typeId: string, etag: string, linkIds: readonly string[]): D1PreparedStatement[] {
  const guard = "EXISTS (SELECT 1 FROM entity_types WHERE id = ?1 AND etag = ?2)";
  return [
    db.prepare(`DELETE FROM entity_type_properties WHERE entity_type_id = ?1 AND ${guard}`).bind(typeId, etag),
    ...(linkIds.length === 0
      ? []
      : [
          db
            .prepare(
              `INSERT INTO entity_type_properties (entity_type_id, property_definition_id, position) SELECT ?1, value, key ` +
                `FROM json_each(?3) WHERE ${guard}`,
            )
            .bind(typeId, etag, JSON.stringify(linkIds)),
        ]),
  ];
}

/** Links more definitions to an entity type, after the ones it links (in the given order). */
export function appendLinksStatement(db: Database, typeId: string, definitionIds: readonly string[]): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO entity_type_properties (entity_type_id, property_definition_id, position)
       SELECT ?1, value, (SELECT coalesce(max(position) + 1, 0) FROM entity_type_properties WHERE entity_type_id = ?1) + key
         FROM json_each(?2)`,
    )
    .bind(typeId, JSON.stringify(definitionIds));
}

/** The statements that create an entity type (of any rule: deviation types too) with its ordered links. */
export function insertEntityTypeStatements(db: Database, row: EntityTypeValues, linkIds: readonly string[]): D1PreparedStatement[] {
  return [typeTable.insert(db, { ...row, nameKey: nameKey(row.name) }), ...linkStatements(db, row.id, row.etag, linkIds)];
}

/**
 * The statements that replace an entity type's row and links, applied only to version `readEtag`:
 * the first statement changes no row when the type moved on meanwhile (then nothing else applies).
 */
export function updateEntityTypeStatements(
  db: Database,
  row: EntityTypeValues,
  readEtag: string,
  linkIds: readonly string[],
): D1PreparedStatement[] {
  // What a type is born with stays: its creation, its author and whether it is the default.
  const { id, createdAt: _createdAt, createdBy: _createdBy, isDefault: _isDefault, ...changed } = row;
  return [
    typeTable.update(db, { ...changed, nameKey: nameKey(row.name) }, { id, etag: readEtag }),
    ...linkStatements(db, id, row.etag, linkIds),
  ];
}

/**
 * The statements that delete an entity type and its links while `guard` (trusted SQL over ?1 the id
 * and ?2 the etag read) holds; the type's own delete comes last, so its changes() counts one row.
 */
export function deleteEntityTypeStatements(db: Database, id: string, etag: string, guard: string): D1PreparedStatement[] {
  return [
    db
      .prepare(`DELETE FROM entity_type_properties WHERE entity_type_id = ?1 AND EXISTS (SELECT 1 FROM entity_types WHERE ${guard})`)
      .bind(id, etag),
    db.prepare(`DELETE FROM entity_types WHERE ${guard}`).bind(id, etag),
  ];
}

/** Runs a write batch; a definition deleted since the links were checked fails its foreign key. */
async function runWrite(db: Database, statements: D1PreparedStatement[], name: string): Promise<D1Result[]> {
  try {
    return await runBatch(db, statements, () => nameTaken(name));
  } catch (error) {
    if (isForeignKeyViolation(error)) throw conflict("A linked property definition was deleted meanwhile; read the definitions again.");
    throw error;
  }
}

/** The row a write stores, so the response and the event are built exactly as a read would build them. */
function rowFor(
  id: string,
  input: EntityTypeInput,
  appliesTo: ApplicationRule | null,
  etag: string,
  isDefault: boolean,
  createdAt: string,
  now: string,
): EntityTypeRow {
  return {
    id,
    name: input.name,
    description: input.description,
    applies_to: appliesTo,
    icon_name: input.icon?.name ?? null,
    icon_color: input.icon?.color ?? null,
    is_default: isDefault ? 1 : 0,
    metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
    etag,
    created_at: createdAt,
    updated_at: now,
  };
}

/** The values a read row stands for, as the table writes them. */
export function valuesOf(row: EntityTypeRow, actorId: string | null): EntityTypeValues {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    appliesTo: row.applies_to,
    iconName: row.icon_name,
    iconColor: row.icon_color,
    isDefault: row.is_default === 1,
    metadata: row.metadata,
    etag: row.etag,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy: actorId,
  };
}

export async function createEntityType(ctx: WriteContext, input: EntityTypeInput): Promise<Versioned<EntityType>> {
  const { appliesTo, linkIds, links } = await prepare(ctx.db, input, false);
  const id = ctx.uuid();
  const row = rowFor(id, input, appliesTo, newEtagToken(), false, ctx.now, ctx.now);
  const created = await toEntityType(row, links);
  await runWrite(
    ctx.db,
    [
      ...insertEntityTypeStatements(ctx.db, valuesOf(row, ctx.actorId), linkIds),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: KIND, entityId: id, action: "created", payload: created.value, etag: created.etag },
        { table: "entity_types", etag: row.etag },
      ),
    ],
    input.name,
  );
  return created;
}

export async function updateEntityType(ctx: WriteContext, input: EntityTypeInput & { id: string }): Promise<Versioned<EntityType>> {
  return retryWrite(ctx, async () => {
    const current = await readEntityType(ctx.db, "id = ?1", input.id);
    if (!current) throw notFound("Entity type", input.id);
    assertVersion(ctx, current.versioned.etag);
    const isDefault = current.versioned.value.isDefault;
    const { appliesTo, linkIds, links } = await prepare(ctx.db, input, isDefault);
    const row = rowFor(input.id, input, appliesTo, newEtagToken(), isDefault, current.row.created_at, ctx.now);
    const updated = await toEntityType(row, links);
    const [update] = await runWrite(
      ctx.db,
      [
        // Applies only to the version read above: a concurrent write in between makes this a 412.
        ...updateEntityTypeStatements(ctx.db, valuesOf(row, ctx.actorId), current.row.etag, linkIds),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: input.id, action: "updated", payload: updated.value, etag: updated.etag },
          { table: "entity_types", etag: row.etag },
        ),
      ],
      input.name,
    );
    if (update?.meta.changes !== 1) throw preconditionFailed();
    return updated;
  });
}

export async function deleteEntityType(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await readEntityType(ctx.db, "id = ?1", id);
    if (!current) throw notFound("Entity type", id);
    assertVersion(ctx, current.versioned.etag);
    if (current.versioned.value.isDefault)
      throw new ApiError("Conflict", "The default entity type (General) cannot be deleted; it can be renamed.");
    const uses = await countUses(ctx.db, "entityType", id);
    if (uses > 0) throw new ApiError("InUse", `The entity type is used by ${uses} entit${uses === 1 ? "y" : "ies"}.`);
    // Also guarded on what the count read: a use written since makes the delete a 412, not a dangling type.
    const guard = `id = ?1 AND etag = ?2 AND is_default = 0 AND ${unusedCondition("entityType")}`;
    const [, removed] = await ctx.db.batch([
      // The links go first, so the type's own delete counts exactly one change (D1 also counts rows
      // removed by a cascade).
      ...deleteEntityTypeStatements(ctx.db, id, current.row.etag, guard),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1) throw preconditionFailed();
  });
}
