/**
 * Activity templates in D1: reading revisions with their input templates, checking what a write
 * asks for, and creating revision 1. Edits of an existing template are in write.ts.
 */
import type { Database } from "../../db/statements";
import { outboxStatements } from "../../events/outbox";
import { newEtagToken, type WriteContext } from "../../pkg/db";
import { ApiError, invalid, notFound, type FieldProblem } from "../../pkg/errors";
import { checkStatus, ownerOrCaller, toPerson } from "../../work/common";
import {
  ACTIVITY_TEMPLATE_KIND,
  headerOf,
  insertDependentsStatements,
  insertRevisionStatement,
  isActivityTemplateRevisionInUseSql,
  type SqlValue,
} from "../revisions";
import { dependentIds, metadataText, parseMetadata, positions, revisionEtag } from "../shared";
import type { ActivityTemplate, ActivityTemplateInput, InputTemplateInput } from "./schema";
import { checkInputReadings, parseInputReading } from "../../measurements/feed/targets";

export const ENTITY_KIND = "activityTemplate";
export const INPUTS = ACTIVITY_TEMPLATE_KIND.dependents[0]!;

export interface ActivityTemplateRow {
  id: string;
  revision: number;
  is_latest: number;
  display_name: string;
  reference_id: string | null;
  status: string;
  owner_id: string;
  owner_name: string | null;
  activity_type_id: string | null;
  activity_type_name: string | null;
  template_type: string | null;
  description: string | null;
  metadata: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  in_use: number;
}

export interface InputRow {
  [column: string]: SqlValue;
  id: string;
  name: string;
  display_name: string | null;
  format: string;
  required: number;
  position: number;
  metadata: string | null;
  reading: string | null;
}

export interface ActivityTemplateState {
  row: ActivityTemplateRow;
  inputs: InputRow[];
}

/** The select list of a revision with its activity type's name and its in-use flag, over alias `a`. */
export const ROW_SELECT = `a.id, a.revision, a.is_latest, a.display_name, a.reference_id, a.status, a.owner_id, a.owner_name,
  a.activity_type_id,
  (SELECT name FROM activity_types WHERE id = a.activity_type_id) AS activity_type_name, a.template_type, a.description, a.metadata, a.etag,
  a.created_at, a.updated_at, a.created_by, ${isActivityTemplateRevisionInUseSql("a.id", "a.revision")} AS in_use`;

export const byPosition = <T extends { position: number; id: string }>(a: T, b: T) =>
  a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export async function loadActivityTemplateState(db: Database, id: string, revision?: number): Promise<ActivityTemplateState | null> {
  const which = revision === undefined ? "(SELECT revision FROM activity_templates WHERE id = ?1 AND is_latest = 1)" : "?2";
  const binds = revision === undefined ? [id] : [id, revision];
  const [rows, inputs] = await db.batch([
    db.prepare(`SELECT ${ROW_SELECT} FROM activity_templates a WHERE a.id = ?1 AND a.revision = ${which}`).bind(...binds),
    db
      .prepare(
        `SELECT id, name, display_name, format, required, position, metadata, reading FROM input_templates WHERE ` +
          `activity_template_id = ?1 AND activity_template_revision = ${which}`,
      )
      .bind(...binds),
  ]);
  const row = rows?.results[0] as ActivityTemplateRow | undefined;
  if (!row) return null;
  return { row, inputs: (inputs?.results as InputRow[]).sort(byPosition) };
}

/** The input templates of many revisions (a list page), grouped by `id:revision`. */
export async function loadInputsOf(
  db: Database,
  rows: readonly Pick<ActivityTemplateRow, "id" | "revision">[],
): Promise<Map<string, InputRow[]>> {
  const grouped = new Map(rows.map((r) => [`${r.id}:${r.revision}`, [] as InputRow[]]));
  if (rows.length === 0) return grouped;
  const { results } = await db
    .prepare(
      `SELECT activity_template_id AS tid, activity_template_revision AS rev, id, name, display_name, format, required,
      position, metadata, reading FROM input_templates
        WHERE (activity_template_id, activity_template_revision) IN (SELECT json_extract(value, '$[0]'), json_extract(value,
        '$[1]') FROM json_each(?1))`,
    )
    .bind(JSON.stringify(rows.map((r) => [r.id, r.revision])))
    .all<InputRow & { tid: string; rev: number }>();
  for (const row of results) grouped.get(`${row.tid}:${row.rev}`)?.push(row);
  for (const list of grouped.values()) list.sort(byPosition);
  return grouped;
}

export function toActivityTemplate(state: ActivityTemplateState): { value: ActivityTemplate; etag: string } {
  const { row } = state;
  const inUse = row.in_use === 1;
  return {
    value: {
      id: row.id,
      revision: row.revision,
      displayName: row.display_name,
      referenceId: row.reference_id,
      status: row.status,
      objectOwner: toPerson(row.owner_id, row.owner_name) ?? { id: row.owner_id, name: null },
      activityType: row.activity_type_id === null ? null : { id: row.activity_type_id, name: row.activity_type_name ?? "" },
      templateType: row.template_type,
      description: row.description,
      inputTemplates: state.inputs.map((i) => ({
        id: i.id,
        name: i.name,
        displayName: i.display_name,
        format: i.format as ActivityTemplate["inputTemplates"][number]["format"],
        required: i.required === 1,
        order: i.position,
        metadata: parseMetadata(i.metadata),
        reading: parseInputReading(i.reading),
      })),
      inUse,
      metadata: parseMetadata(row.metadata),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: revisionEtag(row.etag, inUse),
  };
}

export async function getActivityTemplate(db: Database, id: string, revision?: number): Promise<{ value: ActivityTemplate; etag: string }> {
  const state = await loadActivityTemplateState(db, id.toLowerCase(), revision);
  if (!state)
    throw revision === undefined
      ? notFound("Activity template", id)
      : new ApiError("NotFound", `Activity template ${id} has no revision ${revision}.`);
  return toActivityTemplate(state);
}

/**
 * Input template rows for a list of inputs (ids kept or new, positions); names must be unique
 * ignoring case, also against `others` (the inputs that stay, when one is added).
 */
export function inputRows(
  items: readonly InputTemplateInput[],
  field: (index: number) => string,
  newId: () => string,
  others: readonly InputRow[] = [],
): { rows: InputRow[]; problems: FieldProblem[] } {
  const { ids, problems } = dependentIds(items, (i) => `${field(i)}.id`, newId);
  const order = positions(items);
  const names = new Set(others.map((o) => o.name.toLowerCase()));
  const rows = items.map((item, i) => {
    if (names.has(item.name.toLowerCase()))
      problems.push({ field: `${field(i)}.name`, rule: "unique", message: `Another input template is named '${item.name}'.` });
    names.add(item.name.toLowerCase());
    return {
      id: ids[i]!,
      name: item.name,
      display_name: item.displayName,
      format: item.format,
      required: item.required ? 1 : 0,
      position: order[i]!,
      metadata: metadataText(item.metadata),
      reading: null,
    };
  });
  return { rows, problems };
}

/** {@link inputRows} with each input's `reading` checked against the channels and channel types it names. */
export async function checkedInputRows(
  db: Database,
  items: readonly InputTemplateInput[],
  field: (index: number) => string,
  newId: () => string,
  others: readonly InputRow[] = [],
): Promise<{ rows: InputRow[]; problems: FieldProblem[] }> {
  const made = inputRows(items, field, newId, others);
  const readings = await checkInputReadings(db, items, field);
  made.rows.forEach((row, i) => (row.reading = readings.texts[i] ?? null));
  return { rows: made.rows, problems: [...made.problems, ...readings.problems] };
}

export interface PreparedActivityHeader {
  status: string;
  activityTypeId: string | null;
  activityTypeName: string | null;
}

export async function prepareActivityHeader(
  db: Database,
  input: Pick<ActivityTemplateInput, "status" | "activityType">,
): Promise<PreparedActivityHeader> {
  const status = await checkStatus(db, input.status);
  if (input.activityType === null) return { status, activityTypeId: null, activityTypeName: null };
  const typeId = input.activityType.id.toLowerCase();
  const type = await db.prepare("SELECT name FROM activity_types WHERE id = ?1").bind(typeId).first<{ name: string }>();
  if (!type) throw invalid("body.activityType.id", "exists", `Activity type ${typeId} does not exist.`);
  return { status, activityTypeId: typeId, activityTypeName: type.name };
}

export async function createActivityTemplate(
  ctx: WriteContext,
  input: ActivityTemplateInput,
): Promise<{ value: ActivityTemplate; etag: string }> {
  const header = await prepareActivityHeader(ctx.db, input);
  const inputs = await checkedInputRows(ctx.db, input.inputTemplates ?? [], (i) => `body.inputTemplates.${i}`, ctx.uuid);
  if (inputs.problems.length > 0)
    throw new ApiError("ValidationFailed", inputs.problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: inputs.problems });
  const owner = ownerOrCaller(input.objectOwner, ctx.actorId === null ? null : { id: ctx.actorId, name: ctx.actorName ?? "" });
  const id = ctx.uuid();
  const row: ActivityTemplateRow = {
    id,
    revision: 1,
    is_latest: 1,
    display_name: input.displayName,
    reference_id: input.referenceId,
    status: header.status,
    owner_id: owner.id,
    owner_name: owner.name,
    activity_type_id: header.activityTypeId,
    activity_type_name: header.activityTypeName,
    template_type: input.templateType,
    description: input.description,
    metadata: metadataText(input.metadata),
    etag: newEtagToken(),
    created_at: ctx.now,
    updated_at: ctx.now,
    created_by: ctx.actorId,
    in_use: 0,
  };
  const created = toActivityTemplate({ row, inputs: [...inputs.rows].sort(byPosition) });
  await ctx.db.batch([
    insertRevisionStatement(ctx.db, ACTIVITY_TEMPLATE_KIND, id, 1, headerOf(ACTIVITY_TEMPLATE_KIND, row)),
    ...insertDependentsStatements(ctx.db, INPUTS, id, 1, inputs.rows),
    ...outboxStatements(ctx.db, ctx, {
      entityKind: ENTITY_KIND,
      entityId: id,
      action: "created",
      payload: created.value,
      etag: created.etag,
    }),
  ]);
  return created;
}
