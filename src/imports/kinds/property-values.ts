/**
 * Property values from a spreadsheet (issue 37): each row sets properties of one existing deviation,
 * named by its `id` or its `referenceId`; the other columns are properties by definition name
 * (`property:Name` when it collides with a field). A row is the single request that sets a
 * deviation's properties: `PUT /Deviations` with the current deviation and the row's properties over
 * its own (an empty cell clears that property; properties the file has no column for are kept). So
 * the row is the deviations kind's replacement with only those columns: the same body, parsed by
 * UpdateDeviationSchema, checked by validateDeviation (the property dry run's linked-values
 * resolution: format, regex, classification element names, required, expressions) and written by
 * updateDeviation. A row never creates a record.
 *
 * Assets carry no properties in this API (no route sets an asset's property values), so an asset id
 * is not a record this kind can name.
 */
import { deviationIdByReference, getDeviation } from "../../deviations/store";
import { ApiError } from "../../pkg/errors";
import { UUID } from "./cells";
import { deviations } from "./deviations";
import type { Column, ImportKind, Planned, RowContext, RowProblem } from "./kind";
import { columnOfField } from "./mapping";

type DeviationPlan = typeof deviations extends ImportKind<infer Plan> ? Plan : never;

/** The fields a column can be: the record's id or its referenceId (properties are `property:Name`). */
const FIELDS = ["id", "referenceId"];

/** The id of the deviation a row names (by id, else by referenceId), or the row's problem. */
async function recordOf(ctx: RowContext, columns: readonly Column[], cells: readonly string[]): Promise<string | RowProblem> {
  const cell = (field: string) => {
    const column = columns.find((c) => c.target !== null && "field" in c.target && c.target.field === field);
    return column ? (cells[column.index] ?? "").trim() : "";
  };
  const id = cell("id");
  const referenceId = cell("referenceId");
  if (id !== "") {
    const column = columnOfField(columns, "id");
    if (!UUID.test(id)) return { column, field: "body.id", rule: "uuid", message: `'${id}' is not a deviation id (a UUID).` };
    try {
      return (await getDeviation(ctx.db, id)).value.id;
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "NotFound")) throw error;
      return { column, field: "body.id", rule: "exists", message: `Deviation ${id} does not exist.` };
    }
  }
  if (referenceId !== "") {
    const found = await deviationIdByReference(ctx.db, referenceId);
    if (found) return found;
    return {
      column: columnOfField(columns, "referenceId"),
      field: "body.referenceId",
      rule: "exists",
      message: `No deviation has the referenceId '${referenceId}'.`,
    };
  }
  return {
    column: columnOfField(columns, "id") ?? columnOfField(columns, "referenceId"),
    field: "body.id",
    rule: "required",
    message: "Give the id or the referenceId of the deviation whose properties the row sets.",
  };
}

/**
 * The row as the deviations kind's replacement: the record's id (in a column of its own, after the
 * file's cells) and the property columns; nothing else of the file is read.
 */
async function planRow(ctx: RowContext, columns: readonly Column[], cells: readonly string[]): Promise<Planned<DeviationPlan>> {
  const record = await recordOf(ctx, columns, cells);
  if (typeof record !== "string") return { plan: null, problems: [record] };
  const idColumn: Column = { index: cells.length, header: columnOfField(columns, "id") ?? "id", target: { field: "id" } };
  const properties = columns.filter((c) => c.target !== null && "property" in c.target);
  return deviations.plan(ctx, [idColumn, ...properties], [...cells, record]);
}

export const propertyValues: ImportKind<DeviationPlan> = {
  noun: "deviation",
  permissions: deviations.permissions,
  fields: FIELDS,
  aliases: {},
  // Nothing else of a deviation's export is imported here: those columns are not targets (null in the mapping).
  readOnly: /^$/,
  propertyNames: deviations.propertyNames,
  plan: planRow,
  existingId: deviations.existingId,
  propertiesOf: deviations.propertiesOf,
  check: deviations.check,
  write: deviations.write,
  // A row that sets what the deviation already has writes nothing; the others are written in batches, as deviations are.
  unchanged: deviations.unchanged,
  writeMany: deviations.writeMany,
};
