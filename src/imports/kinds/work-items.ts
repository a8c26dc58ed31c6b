/**
 * Work items from a spreadsheet (issue 37): what each column can be, and a row made into the body a
 * single `POST /WorkItems` (or, with an `id` column naming an existing work item, `PUT /WorkItems`)
 * would take. The rules are the single requests' own: the body is parsed with CreateWorkItemSchema /
 * UpdateWorkItemSchema and checked by validateWorkItem (the checks of createWorkItem / updateWorkItem,
 * with the instantiation of basedOn's templates prepared and not run), written by createWorkItem /
 * updateWorkItem themselves; nothing here repeats a rule.
 *
 * Columns (shared with the export of GET /WorkItems): the JSON field names of a work item, nested
 * fields with dots (`objectOwner.id`), arrays joined with "; ": `basedOn` names work templates by id
 * or by display name (their latest revision, as the request instantiates), `designations` assets by
 * id, `tags`; property columns headed by the definition's name (`property:Name` when it collides with
 * a field).
 */
import type { z } from "@hono/zod-openapi";
import type { Database } from "../../db/statements";
import type { FieldProblem } from "../../pkg/errors";
import type { WriteContext } from "../../pkg/db";
import { PERMISSIONS } from "../../pkg/permissions";
import { platform } from "../../platform/services";
import { fieldProblems } from "../../pkg/validation-messages";
import { definitionNames } from "../../properties/definitions/catalog";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import { loadLinkedDefinitions } from "../../properties/values/store";
import type { LinkedDefinition } from "../../properties/values/types";
import { CreateWorkItemSchema, UpdateWorkItemSchema, type WorkItem } from "../../work-items/schema";
import { readInstantiationSources, type InstantiationSources } from "../../work-items/instantiate";
import { getWorkItem } from "../../work-items/store";
import { latestWorkTemplatesNamed } from "../../work-items/template-revisions";
import { createWorkItem, updateWorkItem, validateWorkItem } from "../../work-items/write";
import { existingOfId, metadataOfCell, ownerOfCell, propertyValue, splitList, UUID } from "./cells";
import { cached, type Column, type ImportKind, type Planned, type RowContext, type RowProblem } from "./kind";
import { columnOf, columnOfField } from "./mapping";

/** The application rule of a work item's properties. */
const RULE = "WorkItem";

/** What a column can be mapped to: a field of the body, or a property (`property:Name`). */
const FIELDS = [
  "id",
  "displayName",
  "referenceId",
  "status",
  "dueDate",
  "typeId",
  "objectOwner",
  "objectOwner.id",
  "objectOwner.name",
  "tags",
  "basedOn",
  "designations",
  "metadata",
];

/** Other headers of a field: the read shape's spellings an export writes. */
const ALIASES: Record<string, string> = {
  "basedOn.id": "basedOn",
  "designations.id": "designations",
};

/** Columns of a work item's read shape that are read-only: an exported file has them; they are not imported. */
const READ_ONLY = /^(basedOn\.revision|designations\.(kind|name|plant(\..*)?)|deviationIds|createdAt|updatedAt|properties)$/;

const propertyNames = async (db: Database): Promise<Set<string>> => new Set(await definitionNames(db, RULE)());

const linkedDefinitions = (ctx: RowContext, typeId: string): Promise<LinkedDefinition[] | null> =>
  cached(ctx, `definitions:${typeId}`, () => loadLinkedDefinitions(ctx.db, typeId));

/** The work template a cell names: a UUID as given (the request says whether it exists), else the one latest revision of that name. */
async function templateOfCell(ctx: RowContext, column: string, index: number, text: string): Promise<{ id: string } | RowProblem> {
  if (UUID.test(text)) return { id: text.toLowerCase() };
  const found = await cached(ctx, `workTemplate:${text.toLowerCase()}`, () => latestWorkTemplatesNamed(ctx.db, text));
  const field = `body.basedOn.${index}.id`;
  if (found.length > 1)
    return { column, field, rule: "ambiguous", message: `More than one work template is named '${text}': give the template's id.` };
  if (found.length === 0)
    return { column, field, rule: "exists", message: `'${text}' is neither the id nor the name of a work template (GET /WorkTemplates).` };
  return { id: found[0]! };
}

/** What a row becomes: a new work item, or a replacement of the one its `id` names. */
type RowPlan =
  | { action: "create"; body: z.infer<typeof CreateWorkItemSchema>; sources: () => Promise<InstantiationSources> }
  | { action: "update"; body: z.infer<typeof UpdateWorkItemSchema>; current: WorkItem; unchanged: boolean };

/** The row's body (a create, or an update over the current work item) or its problems. */
async function planRow(ctx: RowContext, columns: readonly Column[], cells: readonly string[]): Promise<Planned<RowPlan>> {
  const problems: RowProblem[] = [];
  const body: Record<string, unknown> = {};
  const propertyColumns: { column: Column; name: string; text: string }[] = [];
  let id: string | null = null;
  for (const column of columns) {
    const text = cells[column.index] ?? "";
    if (column.target === null) continue;
    // An empty cell says nothing, for a property as for a field: an export has a column for every
    // WorkItem definition, most of them not linked to a given row's type.
    if (text.trim() === "") continue;
    if ("property" in column.target) {
      propertyColumns.push({ column, name: column.target.property, text });
      continue;
    }
    const value = text.trim();
    const field = column.target.field;
    switch (field) {
      case "id":
        id = value;
        break;
      case "objectOwner":
        await ownerOfCell(ctx, column.header, value, body, problems);
        break;
      case "objectOwner.id":
      case "objectOwner.name":
        body.objectOwner = { ...((body.objectOwner as object | undefined) ?? {}), [field.slice("objectOwner.".length)]: value };
        break;
      case "basedOn": {
        const basedOn: { id: string }[] = [];
        for (const [index, part] of splitList(value).entries()) {
          const found = await templateOfCell(ctx, column.header, index, part);
          if ("rule" in found) problems.push(found);
          else basedOn.push(found);
        }
        body.basedOn = basedOn;
        break;
      }
      case "designations":
        body.designations = splitList(value).map((asset) => ({ id: asset }));
        break;
      case "tags":
        body.tags = splitList(value);
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
  const read = async (id: string) => (await getWorkItem(ctx.db, id)).value;
  const current: WorkItem | null = await existingOfId(id, columnOfField(columns, "id"), "work item", read, problems);
  // Properties: typed by the WorkItem definitions linked to the row's type (the given one, the current one, or General).
  const typeId = String(body.typeId ?? current?.typeId ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase();
  const definitions = UUID.test(typeId) ? ((await linkedDefinitions(ctx, typeId)) ?? []) : [];
  const byName = new Map(definitions.filter((d) => d.applicationRule === RULE).map((d) => [d.name, d]));
  const givenProperties: { name: string; value: unknown }[] = [];
  for (const { name, text } of propertyColumns) givenProperties.push({ name, value: await propertyValue(ctx, byName.get(name), text) });
  if (problems.length > 0) return { plan: null, problems };

  let plan: RowPlan;
  const issuesOf = (error: z.ZodError, data: unknown) => fieldProblems(undefined, "json", error.issues, data).errors;
  let parseProblems: FieldProblem[] = [];
  if (current) {
    // A replacement keeps what the file does not say: the current work item, with the file's columns over it.
    const given = new Map(givenProperties.map((p) => [p.name, p.value]));
    const merged = {
      ...current,
      ...body,
      objectOwner: body.objectOwner ? { ...current.objectOwner, ...(body.objectOwner as object) } : current.objectOwner,
      properties: [
        ...current.properties.map((p) => (given.has(p.name) ? { name: p.name, value: given.get(p.name) } : p)),
        ...givenProperties.filter((p) => !current.properties.some((c) => c.name === p.name)),
      ],
      id: current.id,
    };
    const parsed = UpdateWorkItemSchema.safeParse(merged);
    if (parsed.success) {
      // The row says what the work item already is (an exported row not edited): nothing to write.
      // (Its designations and templates as a file names them: by id.)
      const as = UpdateWorkItemSchema.safeParse({
        ...current,
        designations: current.designations.map((d) => ({ id: d.id })),
        basedOn: current.basedOn.map((b) => ({ id: b.id })),
      });
      const unchanged = as.success && JSON.stringify(as.data) === JSON.stringify(parsed.data);
      plan = { action: "update", body: parsed.data, current, unchanged };
    } else parseProblems = issuesOf(parsed.error, merged);
  } else {
    const input = { ...body, ...(givenProperties.length > 0 ? { properties: givenProperties } : {}) };
    const parsed = CreateWorkItemSchema.safeParse(input);
    if (parsed.success) {
      // A dry run reads the templates of a basedOn once for the rows of the import that name the same ones.
      const ids = parsed.data.basedOn.map((b) => b.id.toLowerCase());
      const sources = () => cached(ctx, `sources:${ids.join(",")}`, () => readInstantiationSources(ctx.db, ids));
      plan = { action: "create", body: parsed.data, sources };
    } else parseProblems = issuesOf(parsed.error, input);
  }
  if (parseProblems.length > 0)
    return { plan: null, problems: parseProblems.map((p) => ({ ...p, column: columnOf(columns, p.field, givenProperties) })) };
  return { plan: plan!, problems: [] };
}

/**
 * Checks a planned row as its single request would, writing nothing (a dry run). The context only
 * feeds the checks: its ids name statements that are never run, and its actor stands in for the
 * importer as the owner a create without one defaults to (which no rule checks).
 */
async function checkRow(db: Database, plan: RowPlan, newId: string): Promise<void> {
  const ctx: WriteContext = {
    db,
    now: platform().clock.now().toISOString(),
    actorId: "import-dry-run",
    actorName: null,
    requestId: null,
    uuid: () => newId,
    expectedEtag: undefined,
  };
  await validateWorkItem(ctx, plan, plan.action === "create" ? plan.sources : undefined);
}

/** Writes a planned row, with `extra` statements in its batch; answers the work item's id. */
async function writeRow(ctx: WriteContext, plan: RowPlan, extra: readonly D1PreparedStatement[]): Promise<string> {
  if (plan.action === "create") return (await createWorkItem(ctx, plan.body, {}, extra)).value.id;
  return (await updateWorkItem({ ...ctx, expectedEtag: undefined }, plan.body, {}, extra)).value.id;
}

export const workItems: ImportKind<RowPlan> = {
  noun: "work item",
  permissions: { read: PERMISSIONS.workRead, write: PERMISSIONS.workWrite },
  fields: FIELDS,
  aliases: ALIASES,
  readOnly: READ_ONLY,
  propertyNames,
  plan: planRow,
  existingId: (plan) => (plan.action === "update" ? plan.current.id : null),
  unchanged: (plan) => plan.action === "update" && plan.unchanged,
  propertiesOf: (plan) => plan.body.properties,
  check: checkRow,
  write: writeRow,
};
