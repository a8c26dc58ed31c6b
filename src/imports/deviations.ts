/**
 * Deviations from a spreadsheet (issue 37): what each column can be, and a row made into the body a
 * single `POST /Deviations` (or, with an `id` column naming an existing deviation, `PUT /Deviations`)
 * would take. The rules are the single requests' own: the body is parsed with CreateDeviationSchema /
 * UpdateDeviationSchema and checked by validateDeviation (the checks of createDeviation), property
 * values by the linked-values resolution the property dry run uses; nothing here repeats a rule.
 *
 * Columns (shared with the export): the JSON field names of a deviation, nested fields with dots
 * (`risk.id`, `assetReference.equipment.id`), arrays of scalars joined with "; " (relationships by
 * id), property columns headed by the definition's name (`property:Name` when it collides with a field).
 */
import type { z } from "@hono/zod-openapi";
import type { Database } from "../db/statements";
import { CreateDeviationSchema, UpdateDeviationSchema, type Deviation } from "../deviations/schema";
import { DEVIATION_RULE, getDeviation } from "../deviations/store";
import { createDeviation, updateDeviation, validateDeviation } from "../deviations/write";
import { ApiError, type FieldProblem } from "../pkg/errors";
import type { WriteContext } from "../pkg/db";
import { fieldProblems } from "../pkg/validation-messages";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";
import { loadLinkedDefinitions } from "../properties/values/store";
import type { LinkedDefinition } from "../properties/values/types";

/** What a column can be mapped to: a field of the body, a property (`property:Name`), or nothing (null). */
export const DEVIATION_FIELDS = [
  "id",
  "referenceId",
  "description",
  "status",
  "typeId",
  "objectOwner",
  "objectOwner.id",
  "objectOwner.name",
  "risk.id",
  "risk.name",
  "assetReference.mainSystem",
  "assetReference.designObject",
  "assetReference.equipment",
  "relationships",
  "metadata",
] as const;
export type DeviationField = (typeof DEVIATION_FIELDS)[number];

/** Other headers of a field: the read shape's spellings an export writes. */
const ALIASES: Record<string, DeviationField> = {
  "type.id": "typeId",
  "assetReference.mainSystem.id": "assetReference.mainSystem",
  "assetReference.designObject.id": "assetReference.designObject",
  "assetReference.equipment.id": "assetReference.equipment",
  "relationships.id": "relationships",
};

/** Columns of a deviation's read shape that are read-only: an exported file has them; they are not imported. */
const READ_ONLY = new RegExp(
  "^(type\\.name|workItemIds|createdAt|updatedAt|origin(\\..*)?|properties|relationships\\.referenceId|" +
    "assetReference\\.(plant(\\..*)?|\\w+\\.(name|kind|plant.*)))$",
);

export const PROPERTY_PREFIX = "property:";

/** Where a column goes: a field, a property by name, or nowhere. */
export type Target = { field: DeviationField } | { property: string } | null;

export function parseTarget(text: string | null): Target {
  if (text === null || text === "") return null;
  if (text.startsWith(PROPERTY_PREFIX)) return { property: text.slice(PROPERTY_PREFIX.length) };
  if ((DEVIATION_FIELDS as readonly string[]).includes(text)) return { field: text as DeviationField };
  const alias = ALIASES[text];
  if (alias) return { field: alias };
  throw new Error(`unknown target ${text}`);
}

export const targetText = (target: Target): string | null =>
  target === null ? null : "field" in target ? target.field : `${PROPERTY_PREFIX}${target.property}`;

/** True when `text` names a mapping target (a field, one of its spellings, or `property:Name`). */
export function isTarget(text: string): boolean {
  return text.startsWith(PROPERTY_PREFIX)
    ? text.length > PROPERTY_PREFIX.length
    : text in ALIASES || DEVIATION_FIELDS.includes(text as DeviationField);
}

/** The names of the Deviation properties that exist (any type's), for the default mapping. */
export async function deviationPropertyNames(db: Database): Promise<Set<string>> {
  const { results } = await db
    .prepare("SELECT name FROM property_definitions WHERE application_rule = ?1")
    .bind(DEVIATION_RULE)
    .all<{ name: string }>();
  return new Set(results.map((r) => r.name));
}

/**
 * The default mapping of a file's headers: a field by its name (or the read shape's spelling), a
 * property by its definition's name (or `property:Name`); read-only and unknown columns are not imported.
 */
export function proposeMapping(headers: readonly string[], propertyNames: ReadonlySet<string>): Record<string, string | null> {
  const mapping: Record<string, string | null> = {};
  for (const header of headers) {
    if (header === "") continue;
    if (header.startsWith(PROPERTY_PREFIX)) mapping[header] = header;
    else if (isTarget(header)) mapping[header] = targetText(parseTarget(header));
    else if (READ_ONLY.test(header)) mapping[header] = null;
    else if (propertyNames.has(header)) mapping[header] = `${PROPERTY_PREFIX}${header}`;
    else mapping[header] = null;
  }
  return mapping;
}

/** A column of the file with where it goes. */
export interface Column {
  index: number;
  header: string;
  target: Target;
}

/** What the rows of one import share: caches of lookups by value (types' definitions, users). */
export interface RowContext {
  db: Database;
  definitions: Map<string, Promise<LinkedDefinition[] | null>>;
  users: Map<string, Promise<{ id: string; name: string } | "ambiguous" | null>>;
}

export const rowContext = (db: Database): RowContext => ({ db, definitions: new Map(), users: new Map() });

/** A problem of one row: the column it came from (null: the row as a whole), the field, the rule. */
export interface RowProblem {
  column: string | null;
  field: string;
  rule: string;
  message: string;
}

/** A user of the directory by id, or by name when exactly one has it. */
function findUser(ctx: RowContext, text: string) {
  let found = ctx.users.get(text);
  if (!found) {
    found = (async () => {
      const byId = await ctx.db.prepare("SELECT id, name FROM users WHERE id = ?1").bind(text).first<{ id: string; name: string }>();
      if (byId) return byId;
      const { results } = await ctx.db
        .prepare("SELECT id, name FROM users WHERE lower(name) = lower(?1) LIMIT 2")
        .bind(text)
        .all<{ id: string; name: string }>();
      if (results.length > 1) return "ambiguous" as const;
      return results[0] ?? null;
    })();
    ctx.users.set(text, found);
  }
  return found;
}

const split = (text: string) =>
  text
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "");

/** A cell as the JSON value a property of this format takes (what a client would send); the resolution checks it. */
async function propertyValue(ctx: RowContext, definition: LinkedDefinition | undefined, text: string): Promise<unknown> {
  if (text.trim() === "") return null;
  if (!definition) return text;
  const one = async (part: string): Promise<unknown> => {
    switch (definition.format) {
      case "boolean": {
        const lower = part.toLowerCase();
        return lower === "true" || lower === "yes" ? true : lower === "false" || lower === "no" ? false : part;
      }
      case "integer":
      case "decimal": {
        const number = Number(part);
        return part.trim() !== "" && Number.isFinite(number) ? number : part;
      }
      case "entity": {
        const user = await findUser(ctx, part);
        return user && user !== "ambiguous" ? { id: user.id, name: user.name } : part;
      }
      default:
        return part;
    }
  };
  if (definition.isMultiselect) return Promise.all(split(text).map(one));
  return one(definition.format === "text" ? text : text.trim());
}

function linkedDefinitions(ctx: RowContext, typeId: string) {
  let found = ctx.definitions.get(typeId);
  if (!found) {
    found = loadLinkedDefinitions(ctx.db, typeId);
    ctx.definitions.set(typeId, found);
  }
  return found;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a row becomes: a new deviation, or a replacement of the one its `id` names. */
export type RowPlan =
  | { action: "create"; body: z.infer<typeof CreateDeviationSchema> }
  | { action: "update"; body: z.infer<typeof UpdateDeviationSchema>; current: Deviation };

/** The row's body (a create, or an update over the current deviation) or its problems. */
export async function planRow(
  ctx: RowContext,
  columns: readonly Column[],
  cells: readonly string[],
): Promise<{ plan: RowPlan; problems: [] } | { plan: null; problems: RowProblem[] }> {
  const problems: RowProblem[] = [];
  const body: Record<string, unknown> = {};
  const set = (path: string, value: unknown) => {
    const keys = path.split(".");
    let at = body;
    for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
    at[keys.at(-1)!] = value;
  };
  const propertyColumns: { column: Column; name: string; text: string }[] = [];
  let id: string | null = null;
  for (const column of columns) {
    const text = cells[column.index] ?? "";
    if (column.target === null) continue;
    if ("property" in column.target) {
      propertyColumns.push({ column, name: column.target.property, text });
      continue;
    }
    const value = text.trim();
    const field = column.target.field;
    if (field === "description") {
      if (text !== "") body.description = text;
      continue;
    }
    if (value === "") continue;
    switch (field) {
      case "id":
        id = value;
        break;
      case "objectOwner": {
        const user = await findUser(ctx, value);
        if (user === "ambiguous")
          problems.push({
            column: column.header,
            field: "body.objectOwner",
            rule: "ambiguous",
            message: `More than one user is named '${value}': give the user's id.`,
          });
        else if (!user)
          problems.push({
            column: column.header,
            field: "body.objectOwner",
            rule: "exists",
            message: `'${value}' is neither the id nor the name of a user (GET /Users).`,
          });
        else body.objectOwner = { id: user.id, name: user.name };
        break;
      }
      case "assetReference.mainSystem":
      case "assetReference.designObject":
      case "assetReference.equipment":
        set(field, { id: value });
        break;
      case "relationships":
        body.relationships = split(value).map((related) => ({ id: related }));
        break;
      case "metadata":
        try {
          body.metadata = JSON.parse(value) as unknown;
        } catch {
          problems.push({ column: column.header, field: "body.metadata", rule: "json", message: "metadata is not a JSON object." });
        }
        break;
      default:
        set(field, value);
    }
  }
  if (id !== null && !UUID.test(id)) {
    const header = columns.find((c) => c.target !== null && "field" in c.target && c.target.field === "id")?.header ?? null;
    problems.push({ column: header, field: "body.id", rule: "uuid", message: `'${id}' is not a deviation id (a UUID).` });
    id = null;
  }
  let current: Deviation | null = null;
  if (id !== null) {
    try {
      current = (await getDeviation(ctx.db, id)).value;
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "NotFound")) throw error;
      const header = columns.find((c) => c.target !== null && "field" in c.target && c.target.field === "id")?.header ?? null;
      problems.push({
        column: header,
        field: "body.id",
        rule: "exists",
        message: `Deviation ${id} does not exist (leave id empty to create one).`,
      });
    }
  }
  // Properties: typed by the definitions linked to the row's type (the given one, the current one, or General).
  const typeId = String(body.typeId ?? current?.type.id ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase();
  const definitions = UUID.test(typeId) ? ((await linkedDefinitions(ctx, typeId)) ?? []) : [];
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const givenProperties: { name: string; value: unknown }[] = [];
  for (const { name, text } of propertyColumns) givenProperties.push({ name, value: await propertyValue(ctx, byName.get(name), text) });
  if (problems.length > 0) return { plan: null, problems };

  let plan: RowPlan;
  const issuesOf = (error: z.ZodError, data: unknown) => fieldProblems(undefined, "json", error.issues, data).errors;
  let parseProblems: FieldProblem[] = [];
  if (current) {
    // A replacement keeps what the file does not say: the current deviation, with the file's columns over it.
    const given = new Map(givenProperties.map((p) => [p.name, p.value]));
    const merged = {
      ...current,
      ...body,
      objectOwner: body.objectOwner ?? current.objectOwner,
      risk: body.risk ? { ...(current.risk ?? {}), ...(body.risk as object) } : current.risk,
      assetReference: { ...current.assetReference, ...((body.assetReference as object | undefined) ?? {}) },
      properties: [
        ...current.properties.map((p) => (given.has(p.name) ? { name: p.name, value: given.get(p.name) } : p)),
        ...givenProperties.filter((p) => !current.properties.some((c) => c.name === p.name)),
      ],
      relationships: body.relationships ?? current.relationships.map((r) => ({ id: r.id })),
      id: current.id,
    };
    const parsed = UpdateDeviationSchema.safeParse(merged);
    if (parsed.success) plan = { action: "update", body: parsed.data, current };
    else parseProblems = issuesOf(parsed.error, merged);
  } else {
    const input = { ...body, ...(givenProperties.length > 0 ? { properties: givenProperties } : {}) };
    const parsed = CreateDeviationSchema.safeParse(input);
    if (parsed.success) plan = { action: "create", body: parsed.data };
    else parseProblems = issuesOf(parsed.error, input);
  }
  if (parseProblems.length > 0)
    return { plan: null, problems: parseProblems.map((p) => ({ ...p, column: columnOf(columns, p.field, givenProperties) })) };
  return { plan: plan!, problems: [] };
}

/**
 * The column a problem's field came from: the column mapped to the longest prefix of its path, a
 * property's column for `body.properties.N...` or `body.properties.Name`; null for the row as a whole.
 */
export function columnOf(columns: readonly Column[], field: string, properties: readonly { name: string }[]): string | null {
  const path = field.replace(/^body\./, "").replace(/\[(\d+)\]/g, ".$1");
  const property = /^properties\.([^.]+)/.exec(path);
  if (property) {
    const name = /^\d+$/.test(property[1]!) ? properties[Number(property[1])]?.name : property[1];
    return columns.find((c) => c.target !== null && "property" in c.target && c.target.property === name)?.header ?? null;
  }
  let best: Column | null = null;
  for (const column of columns) {
    if (column.target === null || !("field" in column.target)) continue;
    const target = column.target.field;
    const matches = path === target || path.startsWith(`${target}.`) || target.startsWith(`${path}.`);
    if (matches && (!best || target.length > (best.target as { field: string }).field.length)) best = column;
  }
  return best?.header ?? null;
}

/** The problems of an ApiError of a single request, each with its column; null when it is not one. */
export function problemsOfError(error: unknown, columns: readonly Column[], plan: RowPlan): RowProblem[] | null {
  if (!(error instanceof ApiError) || error.status >= 500 || error.status === 401 || error.status === 403) return null;
  const properties = plan.body.properties;
  const listed = error.errors?.length
    ? error.errors
    : [{ field: "body", rule: error.code === "Conflict" ? "conflict" : error.code, message: error.message }];
  return listed.map((p) => ({ ...p, column: columnOf(columns, p.field, properties) }));
}

/** Checks a planned row as its single request would, writing nothing (a dry run). */
export async function checkRow(db: Database, plan: RowPlan, newId: string): Promise<void> {
  if (plan.action === "create") await validateDeviation(db, plan.body, newId);
  else await validateDeviation(db, { ...plan.body, typeId: plan.body.typeId ?? plan.current.type.id }, plan.current.id);
}

/** Writes a planned row, with `extra` statements in its batch; answers the deviation's id. */
export async function writeRow(ctx: WriteContext, plan: RowPlan, extra: readonly D1PreparedStatement[]): Promise<string> {
  if (plan.action === "create") return (await createDeviation(ctx, plan.body, extra)).value.id;
  return (await updateDeviation({ ...ctx, expectedEtag: undefined }, plan.body, extra)).value.id;
}
