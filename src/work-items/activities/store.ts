/**
 * Activities as stored: the owner of activities and activity_inputs. It reads them, maps rows to what
 * the API shows, makes the rows that instantiate an activity from an activity template revision
 * (POST /Activities and work item instantiation make the same activity from the same revision) and
 * builds the statements others compose into their own batches.
 */
import { tableStatements, type Database, type Insert } from "../../db/statements";
import { activities, activityInputs } from "../../db/schema";
import { deleteDesignationsOfManyStatement, readDesignations, type AssetRef } from "../../assets/designations";
import { deleteActivityLinksStatement } from "../../media-references/store";
import { parseJson } from "../../pkg/db";
import { notFound } from "../../pkg/errors";
import type { Versioned } from "../../pkg/resource";
import type { ActivityTemplateRevision } from "../template-revisions";
import type { Activity, InputFormat } from "./schema";

export const KIND = "activity";

export interface ActivityRow {
  id: string;
  work_item_id: string | null;
  based_on_id: string;
  based_on_revision: number;
  display_name: string;
  reference_id: string | null;
  status: string;
  date_of_activity: string | null;
  owner_id: string;
  owner_name: string | null;
  responsible_id: string | null;
  responsible_name: string | null;
  activity_type_id: string | null;
  activity_type_name: string | null;
  position: number;
  metadata: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

export interface ActivityInputRow {
  activity_id: string;
  input_template_id: string;
  name: string;
  display_name: string | null;
  format: string;
  required: number;
  position: number;
  /** JSON text of the value, or null. */
  value: string | null;
}

export const ACTIVITY_COLUMNS = `a.id, a.work_item_id, a.based_on_id, a.based_on_revision, a.display_name, a.reference_id, a.status,
  a.date_of_activity,
  a.owner_id, a.owner_name, a.responsible_id, a.responsible_name, a.activity_type_id, ty.name AS activity_type_name, a.position, a.metadata,
  a.etag, a.created_at, a.updated_at`;
export const ACTIVITY_JOINS = ["LEFT JOIN activity_types ty ON ty.id = a.activity_type_id"];

export function toActivity(row: ActivityRow, inputs: readonly ActivityInputRow[], designations: AssetRef[]): Activity {
  return {
    id: row.id,
    workItemId: row.work_item_id,
    basedOn: { id: row.based_on_id, revision: row.based_on_revision },
    displayName: row.display_name,
    referenceId: row.reference_id,
    status: row.status,
    dateOfActivity: row.date_of_activity,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    responsible: row.responsible_id === null ? null : { id: row.responsible_id, name: row.responsible_name },
    type: row.activity_type_id === null ? null : { id: row.activity_type_id, name: row.activity_type_name ?? "" },
    designations,
    inputs: inputs.map((i) => ({
      id: i.input_template_id,
      name: i.name,
      displayName: i.display_name,
      format: i.format as InputFormat,
      required: i.required === 1,
      value: parseJson<string | number | boolean>(i.value),
    })),
    metadata: parseJson<Record<string, unknown>>(row.metadata),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Inputs and designations of many activities, then the API shapes in the rows' order. */
export async function toActivities(db: Database, rows: readonly ActivityRow[]): Promise<Activity[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [{ results: inputs }, designations] = await Promise.all([
    db
      .prepare(
        "SELECT * FROM activity_inputs WHERE activity_id IN (SELECT value FROM json_each(?1)) ORDER BY activity_id, " +
          "position, input_template_id",
      )
      .bind(JSON.stringify(ids))
      .all<ActivityInputRow>(),
    readDesignations(db, "activity", ids),
  ]);
  const byActivity = new Map<string, ActivityInputRow[]>();
  for (const input of inputs) byActivity.set(input.activity_id, [...(byActivity.get(input.activity_id) ?? []), input]);
  return rows.map((row) => toActivity(row, byActivity.get(row.id) ?? [], designations.get(row.id) ?? []));
}

export async function findActivityRow(db: Database, id: string): Promise<ActivityRow | null> {
  return db
    .prepare(`SELECT ${ACTIVITY_COLUMNS} FROM activities a ${ACTIVITY_JOINS.join(" ")} WHERE a.id = ?1`)
    .bind(id)
    .first<ActivityRow>();
}

/** What a new activity takes from outside its template. */
export interface NewActivity {
  id: string;
  workItemId: string | null;
  template: ActivityTemplateRevision;
  displayName: string;
  referenceId: string | null;
  status: string;
  dateOfActivity: string | null;
  owner: { id: string; name: string | null };
  responsible: { id: string; name: string | null } | null;
  activityTypeId: string | null;
  activityTypeName: string | null;
  position: number;
  metadata: Record<string, unknown> | null;
  /** Values by input template id (JSON text); inputs not named start empty. */
  values?: ReadonlyMap<string, string | null>;
  etag: string;
  now: string;
  actorId: string | null;
}

/** The stored rows of a new activity, as a read would return them. */
export function newActivityRows(a: NewActivity): { row: ActivityRow; inputs: ActivityInputRow[] } {
  const row: ActivityRow = {
    id: a.id,
    work_item_id: a.workItemId,
    based_on_id: a.template.row.id,
    based_on_revision: a.template.row.revision,
    display_name: a.displayName,
    reference_id: a.referenceId,
    status: a.status,
    date_of_activity: a.dateOfActivity,
    owner_id: a.owner.id,
    owner_name: a.owner.name,
    responsible_id: a.responsible?.id ?? null,
    responsible_name: a.responsible?.name ?? null,
    activity_type_id: a.activityTypeId,
    activity_type_name: a.activityTypeName,
    position: a.position,
    metadata: a.metadata === null ? null : JSON.stringify(a.metadata),
    etag: a.etag,
    created_at: a.now,
    updated_at: a.now,
  };
  const inputs = a.template.inputs.map((t) => ({
    activity_id: a.id,
    input_template_id: t.id,
    name: t.name,
    display_name: t.display_name,
    format: t.format,
    required: t.required,
    position: t.position,
    value: a.values?.get(t.id) ?? null,
  }));
  return { row, inputs };
}

export async function getActivity(db: Database, id: string): Promise<Versioned<Activity>> {
  const row = await findActivityRow(db, id);
  if (!row) throw notFound("Activity", id);
  return { value: (await toActivities(db, [row]))[0]!, etag: row.etag };
}

/** An activity's input slots in order (what a PUT checks its values against). */
export async function readInputSlots(db: Database, activityId: string): Promise<ActivityInputRow[]> {
  const { results } = await db
    .prepare("SELECT * FROM activity_inputs WHERE activity_id = ?1 ORDER BY position, input_template_id")
    .bind(activityId)
    .all<ActivityInputRow>();
  return results;
}

// --- Statements ------------------------------------------------------------------------------------

const activityTable = tableStatements(activities);
const inputTable = tableStatements(activityInputs);

function activityValues(row: ActivityRow, createdBy: string | null): Insert<typeof activities> {
  return {
    id: row.id,
    workItemId: row.work_item_id,
    basedOnId: row.based_on_id,
    basedOnRevision: row.based_on_revision,
    displayName: row.display_name,
    referenceId: row.reference_id,
    status: row.status,
    dateOfActivity: row.date_of_activity,
    ownerId: row.owner_id,
    ownerName: row.owner_name,
    responsibleId: row.responsible_id,
    responsibleName: row.responsible_name,
    activityTypeId: row.activity_type_id,
    position: row.position,
    metadata: row.metadata,
    etag: row.etag,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy,
  };
}

/**
 * Inserts of many activities and their inputs, the rows in JSON parameters (chunked by size), so
 * a work template with hundreds of inputs is still a handful of statements in the write's batch.
 */
export function insertActivitiesStatements(
  db: Database,
  rows: readonly ActivityRow[],
  inputs: readonly ActivityInputRow[],
  actorId: string | null,
): D1PreparedStatement[] {
  return [
    ...activityTable.insertMany(
      db,
      rows.map((row) => activityValues(row, actorId)),
    ),
    ...inputTable.insertMany(
      db,
      inputs.map((i) => ({
        activityId: i.activity_id,
        inputTemplateId: i.input_template_id,
        name: i.name,
        displayName: i.display_name,
        format: i.format,
        required: i.required === 1,
        position: i.position,
        value: i.value,
      })),
    ),
  ];
}

/** Replaces an activity's own fields (its batch asserts the version read first). */
export function updateActivityStatement(db: Database, row: ActivityRow): D1PreparedStatement {
  const {
    id,
    workItemId: _workItemId,
    basedOnId: _basedOnId,
    basedOnRevision: _basedOnRevision,
    position: _position,
    createdAt: _createdAt,
    createdBy: _createdBy,
    ...changed
  } = activityValues(row, null);
  return activityTable.update(db, changed, { id });
}

/** Sets the values of some inputs (by input template id; JSON text, or null to clear). */
export function setInputValuesStatement(db: Database, activityId: string, values: ReadonlyMap<string, string | null>): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE activity_inputs SET value = (SELECT j.value FROM json_each(?2) j WHERE j.key = activity_inputs.input_template_id)
        WHERE activity_id = ?1 AND input_template_id IN (SELECT key FROM json_each(?2))`,
    )
    .bind(activityId, JSON.stringify(Object.fromEntries(values)));
}

/** Deletes an activity with its inputs and media reference links (its designations are the caller's: they go by kind). */
export function deleteActivityStatements(db: Database, id: string): D1PreparedStatement[] {
  return [
    inputTable.delete(db, { activityId: id }),
    deleteActivityLinksStatement(db, { sql: "activity_id = ?1", bindings: [id] }),
    activityTable.delete(db, { id }),
  ];
}

/** Deletes every activity of a work item with its inputs, media reference links and designations. */
export function deleteActivitiesOfWorkItemStatements(db: Database, workItemId: string): D1PreparedStatement[] {
  const ofWorkItem = "(SELECT id FROM activities WHERE work_item_id = ?1)";
  return [
    db.prepare(`DELETE FROM activity_inputs WHERE activity_id IN ${ofWorkItem}`).bind(workItemId),
    deleteActivityLinksStatement(db, { sql: `activity_id IN ${ofWorkItem}`, bindings: [workItemId] }),
    deleteDesignationsOfManyStatement(db, KIND, { sql: ofWorkItem, bindings: [workItemId] }),
    activityTable.delete(db, { workItemId }),
  ];
}
