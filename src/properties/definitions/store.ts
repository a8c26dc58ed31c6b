/** Property definitions in D1. Every write is one db.batch with its outbox event. */
import { tableStatements, type Database, type Insert } from "../../db/statements";
import { propertyDefinitions } from "../../db/schema";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { ApiError, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { conflict, isForeignKeyViolation, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import type { JsonValue } from "../values/format";
import type { ApplicationRule, EntityType, Format, Unit } from "./rules";
import type { PropertyDefinition } from "./schema";
import type { DefinitionFields } from "./validate";
import type { Versioned } from "../../pkg/resource";

export interface DefinitionRow {
  id: string;
  name: string;
  format: string;
  regex: string | null;
  regex_error_message: string | null;
  unit: string | null;
  classification_id: string | null;
  classification_name: string | null;
  entity_type: string | null;
  is_multiselect: number;
  application_rule: string;
  required: number;
  default_value: string | null;
  value_expression: string | null;
  instruction: string | null;
  instruction_image_key: string | null;
  metadata: string | null;
  category_id: string;
  category_name: string;
  etag: string;
  created_at: string;
  updated_at: string;
}

export const KIND = "propertyDefinition";

/** The select list and joins every read shares; the list engine uses them too. */
export const SELECT_COLUMNS =
  "d.id, d.name, d.format, d.regex, d.regex_error_message, d.unit, d.classification_id, cls.name AS classification_name, " +
  "d.entity_type, d.is_multiselect, d.application_rule, d.required, d.default_value, d.value_expression, d.instruction, " +
  "d.instruction_image_key, d.metadata, d.category_id, cat.name AS category_name, d.etag, d.created_at, d.updated_at";
export const JOINS = [
  "JOIN categories cat ON cat.id = d.category_id",
  "LEFT JOIN classifications cls ON cls.id = d.classification_id",
] as const;
const SELECT = `SELECT ${SELECT_COLUMNS} FROM property_definitions d ${JOINS.join(" ")}`;

export function toDefinition(row: DefinitionRow): PropertyDefinition {
  return {
    id: row.id,
    name: row.name,
    format: row.format as Format,
    regex: row.regex,
    regexErrorMessage: row.regex_error_message,
    unit: row.unit as Unit | null,
    classification: row.classification_id ? { id: row.classification_id, name: row.classification_name ?? "" } : null,
    entityType: row.entity_type as EntityType | null,
    isMultiselect: row.is_multiselect === 1,
    applicationRule: row.application_rule as ApplicationRule,
    required: row.required === 1,
    defaultValue: row.default_value === null ? null : (JSON.parse(row.default_value) as JsonValue),
    valueExpression: row.value_expression,
    instruction: row.instruction,
    hasInstructionImage: row.instruction_image_key !== null,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    category: { id: row.category_id, name: row.category_name },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const nameTaken = (name: string) =>
  conflict(`A property definition named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used." },
  ]);

export async function findDefinition(db: Database, id: string): Promise<Versioned<PropertyDefinition> | null> {
  const row = await db.prepare(`${SELECT} WHERE d.id = ?1`).bind(id).first<DefinitionRow>();
  return row ? { value: toDefinition(row), etag: row.etag } : null;
}

export async function getDefinition(db: Database, id: string): Promise<Versioned<PropertyDefinition>> {
  const found = await findDefinition(db, id);
  if (!found) throw notFound("Property definition", id);
  return found;
}

/** A classification's id and name, or null when it does not exist. */
export async function findClassificationRef(db: Database, id: string): Promise<{ id: string; name: string } | null> {
  return db.prepare("SELECT id, name FROM classifications WHERE id = ?1").bind(id).first<{ id: string; name: string }>();
}

/** A category's id and name; without an id, the default category (Ungrouped, or whatever it was renamed to). */
export async function findCategoryRef(db: Database, id: string | null): Promise<{ id: string; name: string } | null> {
  const statement =
    id === null
      ? db.prepare("SELECT id, name FROM categories WHERE is_default = 1")
      : db.prepare("SELECT id, name FROM categories WHERE id = ?1").bind(id);
  return statement.first<{ id: string; name: string }>();
}

/** How a definition is used: entity types linking it, stored values, and the rules those types require. */
export async function definitionUsage(db: Database, id: string): Promise<{ linkedTypes: number; values: number; typeRules: string[] }> {
  const [linked, values] = await db.batch<{ n: number; rules: string | null }>([
    db
      .prepare(
        "SELECT count(*) AS n, json_group_array(DISTINCT t.applies_to) FILTER (WHERE t.applies_to IS NOT NULL) AS rules " +
          "FROM entity_type_properties l JOIN entity_types t ON t.id = l.entity_type_id WHERE l.property_definition_id = ?1",
      )
      .bind(id),
    db.prepare("SELECT count(*) AS n, NULL AS rules FROM (SELECT 1 FROM property_values WHERE definition_id = ?1 LIMIT 1)").bind(id),
  ]);
  const linkedRow = linked?.results[0];
  return {
    linkedTypes: linkedRow?.n ?? 0,
    values: values?.results[0]?.n ?? 0,
    typeRules: linkedRow?.rules ? (JSON.parse(linkedRow.rules) as string[]) : [],
  };
}

const definitionTable = tableStatements(propertyDefinitions);

/** Inserts a definition row (the definitions API, and test data). */
export function insertDefinitionStatement(db: Database, values: Insert<typeof propertyDefinitions>): D1PreparedStatement {
  return definitionTable.insert(db, values);
}

/** The columns a definition's fields fill (its id, version, image and times are the write's). */
function columnsOf(fields: DefinitionFields) {
  return {
    name: fields.name,
    format: fields.format,
    regex: fields.regex,
    regexErrorMessage: fields.regexErrorMessage,
    unit: fields.unit,
    classificationId: fields.classification?.id ?? null,
    entityType: fields.entityType,
    isMultiselect: fields.isMultiselect,
    applicationRule: fields.applicationRule,
    required: fields.required,
    defaultValue: fields.defaultValue === null ? null : JSON.stringify(fields.defaultValue),
    valueExpression: fields.valueExpression,
    instruction: fields.instruction,
    metadata: fields.metadata === null ? null : JSON.stringify(fields.metadata),
    categoryId: fields.category.id,
  } satisfies Partial<Insert<typeof propertyDefinitions>>;
}

function toValue(
  id: string,
  fields: DefinitionFields,
  times: { createdAt: string; updatedAt: string },
  hasInstructionImage: boolean,
): PropertyDefinition {
  return {
    id,
    name: fields.name,
    format: fields.format,
    regex: fields.regex,
    regexErrorMessage: fields.regexErrorMessage,
    unit: fields.unit,
    classification: fields.classification,
    entityType: fields.entityType,
    isMultiselect: fields.isMultiselect,
    applicationRule: fields.applicationRule,
    required: fields.required,
    defaultValue: fields.defaultValue,
    valueExpression: fields.valueExpression,
    instruction: fields.instruction,
    hasInstructionImage,
    metadata: fields.metadata,
    category: fields.category,
    ...times,
  };
}

/** A category or classification removed between validation and write fails the foreign key: a conflict, not a 500. */
async function write(db: Database, statements: D1PreparedStatement[], name: string): Promise<D1Result[]> {
  try {
    return await runBatch(db, statements, () => nameTaken(name));
  } catch (error) {
    if (isForeignKeyViolation(error)) throw conflict("The category or classification was deleted meanwhile; send the request again.");
    throw error;
  }
}

export async function insertDefinition(ctx: WriteContext, fields: DefinitionFields): Promise<Versioned<PropertyDefinition>> {
  const id = ctx.uuid();
  const etag = newEtagToken();
  const definition = toValue(id, fields, { createdAt: ctx.now, updatedAt: ctx.now }, false);
  await write(
    ctx.db,
    [
      insertDefinitionStatement(ctx.db, { ...columnsOf(fields), id, etag, createdAt: ctx.now, updatedAt: ctx.now, createdBy: ctx.actorId }),
      ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: definition }),
    ],
    fields.name,
  );
  return { value: definition, etag };
}

export async function updateDefinitionRow(
  ctx: WriteContext,
  current: Versioned<PropertyDefinition>,
  fields: DefinitionFields,
): Promise<Versioned<PropertyDefinition>> {
  const { id } = current.value;
  const etag = newEtagToken();
  const definition = toValue(id, fields, { createdAt: current.value.createdAt, updatedAt: ctx.now }, current.value.hasInstructionImage);
  // The update only applies to the version read, so a concurrent write in between is a 412.
  const [update] = await write(
    ctx.db,
    [
      definitionTable.update(ctx.db, { ...columnsOf(fields), etag, updatedAt: ctx.now }, { id, etag: current.etag }),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: KIND, entityId: id, action: "updated", payload: definition },
        { table: "property_definitions", etag },
      ),
    ],
    fields.name,
  );
  if (update?.meta.changes !== 1) throw preconditionFailed();
  return { value: definition, etag };
}

export async function deleteDefinitionRow(ctx: WriteContext, current: Versioned<PropertyDefinition>): Promise<void> {
  const { id } = current.value;
  const readEtag = current.etag;
  const [removed] = await ctx.db.batch([
    // Guarded so a link or a value added since the usage check keeps the definition alive.
    ctx.db
      .prepare(
        `DELETE FROM property_definitions WHERE id = ?1 AND etag = ?2
           AND NOT EXISTS (SELECT 1 FROM entity_type_properties WHERE property_definition_id = ?1)
           AND NOT EXISTS (SELECT 1 FROM property_values WHERE definition_id = ?1)`,
      )
      .bind(id, readEtag),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: KIND, entityId: id, action: "deleted", payload: current.value, etag: current.etag },
      "previousChanged",
    ),
  ]);
  if (removed?.meta.changes !== 1) {
    const current = await findDefinition(ctx.db, id);
    if (!current) throw notFound("Property definition", id);
    if (current.etag !== readEtag) throw preconditionFailed();
    throw new ApiError("InUse", "The property definition came into use while it was being deleted.");
  }
}

/**
 * Sets (or clears, with null) a definition's instruction image key (media's instruction images,
 * src/media/instruction-image-store.ts), applied only to version `readEtag`, as every definition write.
 */
export function instructionImageKeyStatement(
  db: Database,
  change: { id: string; readEtag: string; key: string | null; etag: string; now: string },
): D1PreparedStatement {
  return definitionTable.update(
    db,
    { instructionImageKey: change.key, etag: change.etag, updatedAt: change.now },
    { id: change.id, etag: change.readEtag },
  );
}
