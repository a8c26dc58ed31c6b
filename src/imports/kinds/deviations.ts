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
import type { Database } from "../../db/statements";
import { CreateDeviationSchema, UpdateDeviationSchema, type Deviation } from "../../deviations/schema";
import { DEVIATION_RULE, getDeviation } from "../../deviations/store";
import {
  createDeviation,
  prepareCreateDeviation,
  prepareUpdateDeviation,
  updateDeviation,
  validateDeviation,
} from "../../deviations/write";
import type { FieldProblem } from "../../pkg/errors";
import type { WriteContext } from "../../pkg/db";
import { PERMISSIONS } from "../../pkg/permissions";
import { fieldProblems } from "../../pkg/validation-messages";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import { loadLinkedDefinitions } from "../../properties/values/store";
import type { LinkedDefinition } from "../../properties/values/types";
import { existingOfId, metadataOfCell, ownerOfCell, propertyValue, splitList, UUID } from "./cells";
import { cached, type Column, type ImportKind, type Planned, type RowContext, type RowProblem } from "./kind";
import { writeInBatches } from "./batches";
import { columnOf, columnOfField } from "./mapping";

/** What a column can be mapped to: a field of the body, or a property (`property:Name`). */
const FIELDS = [
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
];

/** Other headers of a field: the read shape's spellings an export writes. */
const ALIASES: Record<string, string> = {
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

/** The names of the Deviation properties that exist (any type's), for the default mapping. */
async function deviationPropertyNames(db: Database): Promise<Set<string>> {
  const { results } = await db
    .prepare("SELECT name FROM property_definitions WHERE application_rule = ?1")
    .bind(DEVIATION_RULE)
    .all<{ name: string }>();
  return new Set(results.map((r) => r.name));
}

const linkedDefinitions = (ctx: RowContext, typeId: string): Promise<LinkedDefinition[] | null> =>
  cached(ctx, `definitions:${typeId}`, () => loadLinkedDefinitions(ctx.db, typeId));

/** What a row becomes: a new deviation, or a replacement of the one its `id` names. */
type RowPlan =
  | { action: "create"; body: z.infer<typeof CreateDeviationSchema> }
  | { action: "update"; body: z.infer<typeof UpdateDeviationSchema>; current: Deviation; unchanged: boolean };

/** The row's body (a create, or an update over the current deviation) or its problems. */
async function planRow(ctx: RowContext, columns: readonly Column[], cells: readonly string[]): Promise<Planned<RowPlan>> {
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
      case "objectOwner":
        await ownerOfCell(ctx, column.header, value, body, problems);
        break;
      case "assetReference.mainSystem":
      case "assetReference.designObject":
      case "assetReference.equipment":
        set(field, { id: value });
        break;
      case "relationships":
        body.relationships = splitList(value).map((related) => ({ id: related }));
        break;
      case "metadata": {
        const found = metadataOfCell(column.header, value);
        if ("problem" in found) problems.push(found.problem);
        else body.metadata = found.metadata;
        break;
      }
      default:
        set(field, value);
    }
  }
  const read = async (id: string) => (await getDeviation(ctx.db, id)).value;
  const current: Deviation | null = await existingOfId(id, columnOfField(columns, "id"), "deviation", read, problems);
  // Properties: typed by the definitions linked to the row's type (the given one, the current one, or General).
  const typeId = String(body.typeId ?? current?.type.id ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase();
  const definitions = UUID.test(typeId) ? ((await linkedDefinitions(ctx, typeId)) ?? []) : [];
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const givenProperties: { name: string; value: unknown }[] = [];
  for (const { name, text } of propertyColumns) {
    // An export has a column for every definition: an empty cell of a property the type does not link is no value.
    if (text.trim() === "" && !byName.has(name)) continue;
    givenProperties.push({ name, value: await propertyValue(ctx, byName.get(name), text) });
  }
  if (problems.length > 0) return { plan: null, problems };

  let plan: RowPlan;
  const issuesOf = (error: z.ZodError, data: unknown) => fieldProblems(undefined, "json", error.issues, data).errors;
  let parseProblems: FieldProblem[] = [];
  if (current) {
    // A replacement keeps what the file does not say: the current deviation, with the file's columns over it.
    const given = new Map(givenProperties.map((p) => [p.name, p.value]));
    const over = (fields: Record<string, unknown>, values: Map<string, unknown>) => ({
      ...current,
      ...fields,
      typeId: fields.typeId ?? current.type.id,
      objectOwner: fields.objectOwner ?? current.objectOwner,
      risk: fields.risk ? { ...(current.risk ?? {}), ...(fields.risk as object) } : current.risk,
      assetReference: { ...current.assetReference, ...((fields.assetReference as object | undefined) ?? {}) },
      properties: [
        ...current.properties.map((p) => (values.has(p.name) ? { name: p.name, value: values.get(p.name) } : p)),
        ...givenProperties.filter((p) => values.has(p.name) && !current.properties.some((c) => c.name === p.name)),
      ],
      relationships: fields.relationships ?? current.relationships.map((r) => ({ id: r.id })),
      id: current.id,
    });
    const merged = over(body, given);
    const parsed = UpdateDeviationSchema.safeParse(merged);
    if (parsed.success) {
      // The row says what the deviation already is (an exported row not edited): nothing to write.
      const as = UpdateDeviationSchema.safeParse(over({}, new Map()));
      const unchanged = as.success && JSON.stringify(as.data) === JSON.stringify(parsed.data);
      plan = { action: "update", body: parsed.data, current, unchanged };
    } else parseProblems = issuesOf(parsed.error, merged);
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

/** Checks a planned row as its single request would, writing nothing (a dry run). */
async function checkRow(db: Database, plan: RowPlan, newId: string): Promise<void> {
  if (plan.action === "create") await validateDeviation(db, plan.body, newId);
  else await validateDeviation(db, { ...plan.body, typeId: plan.body.typeId ?? plan.current.type.id }, plan.current.id);
}

/** Writes a planned row, with `extra` statements in its batch; answers the deviation's id. */
async function writeRow(ctx: WriteContext, plan: RowPlan, extra: readonly D1PreparedStatement[]): Promise<string> {
  if (plan.action === "create") return (await createDeviation(ctx, plan.body, extra)).value.id;
  return (await updateDeviation({ ...ctx, expectedEtag: undefined }, plan.body, extra)).value.id;
}

export const deviations: ImportKind<RowPlan> = {
  noun: "deviation",
  permissions: { read: PERMISSIONS.workRead, write: PERMISSIONS.workWrite },
  fields: FIELDS,
  aliases: ALIASES,
  readOnly: READ_ONLY,
  propertyNames: deviationPropertyNames,
  plan: planRow,
  existingId: (plan) => (plan.action === "update" ? plan.current.id : null),
  unchanged: (plan) => plan.action === "update" && plan.unchanged,
  propertiesOf: (plan) => plan.body.properties ?? [],
  check: checkRow,
  write: writeRow,
  writeMany: (ctx, rows) =>
    writeInBatches(ctx, rows, {
      prepare: async (rowCtx, plan, extra) =>
        (plan.action === "create"
          ? await prepareCreateDeviation(rowCtx, plan.body, extra)
          : await prepareUpdateDeviation({ ...rowCtx, expectedEtag: undefined }, plan.body, extra)
        ).statements,
      write: writeRow,
      existingId: (plan) => (plan.action === "update" ? plan.current.id : null),
    }),
};
