/**
 * Activities as stored (activities + activity_inputs + designations) and as the API shows them, and
 * the rows that instantiate an activity from an activity template revision. Shared by POST
 * /Activities and by work item instantiation, so both make the same activity from the same revision.
 */
import type { Database } from "../../db/statements";
import { readDesignations, type AssetRef } from "../../assets/designations";
import { parseJson } from "../../pkg/db";
import { jsonRowStatements } from "../sql";
import type { ActivityTemplateRevision } from "../template-revisions";
import type { Activity, InputFormat } from "./schema";

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
  const field = (name: string) => `json_extract(value, '$.${name}')`;
  const activityColumns = [
    "id",
    "work_item_id",
    "based_on_id",
    "based_on_revision",
    "display_name",
    "reference_id",
    "status",
    "date_of_activity",
    "owner_id",
    "owner_name",
    "responsible_id",
    "responsible_name",
    "activity_type_id",
    "position",
    "metadata",
    "etag",
    "created_at",
    "updated_at",
  ];
  const inputColumns = ["activity_id", "input_template_id", "name", "display_name", "format", "required", "position", "value"];
  return [
    ...jsonRowStatements(
      db,
      `INSERT INTO activities (${activityColumns.join(", ")}, created_by) SELECT ` +
        `${activityColumns.map(field).join(", ")}, ?2 FROM json_each(?1)`,
      rows.map((r) => Object.fromEntries(activityColumns.map((c) => [c, r[c as keyof ActivityRow]]))),
      actorId,
    ),
    ...jsonRowStatements(
      db,
      `INSERT INTO activity_inputs (${inputColumns.join(", ")}) SELECT ${inputColumns.map(field).join(", ")} FROM json_each(?1)`,
      inputs,
    ),
  ];
}
