/**
 * Activity writes: POST creates one from an activity template revision (in a work item, the revision
 * the work item used first), PUT changes its own fields and input values, DELETE removes it. Each
 * is one guarded db.batch() (see ../write.ts). The rows and their statements are the store's.
 */
import type { Database } from "../../db/statements";
import { deleteDesignationsStatement, replaceDesignationsStatements, resolveDesignations, type AssetRef } from "../../assets/designations";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { ApiError, invalid, notFound, type FieldProblem } from "../../pkg/errors";
import { assertStatement, newEtagToken, type WriteContext } from "../../pkg/db";
import type { Versioned } from "../../pkg/resource";
import { checkStatus, DEFAULT_STATUS, ownerOrCaller } from "../../work/common";
import { readDesignationsSorted } from "../designation-order";
import { toUtcDateTime } from "../dates";
import { readActivityTemplateRevisions, templateAssertions } from "../template-revisions";
import { etagAssertion, retrying, runGuarded, type WriteHooks } from "../write";
import { checkInputValues } from "./inputs";
import {
  deleteActivityStatements,
  findActivityRow,
  insertActivitiesStatements,
  KIND,
  newActivityRows,
  readInputSlots,
  setInputValuesStatement,
  toActivity,
  updateActivityStatement,
} from "./store";
import { firstUseStatements } from "../store";
import type { Activity, CreateActivityInput, UpdateActivityInput } from "./schema";
import { assertVersion, READ_AGAIN } from "../../pkg/resource";

async function activityType(db: Database, id: string | null | undefined): Promise<{ id: string; name: string } | null | undefined> {
  if (id === null || id === undefined) return id;
  const row = await db
    .prepare("SELECT id, name FROM activity_types WHERE id = ?1")
    .bind(id.toLowerCase())
    .first<{ id: string; name: string }>();
  if (!row) throw invalid("body.typeId", "exists", `The activity type ${id} does not exist (GET /ActivityTypes).`);
  return row;
}

async function designationsOf(db: Database, input: { designations: { id: string }[] }): Promise<AssetRef[]> {
  return resolveDesignations(
    db,
    input.designations.map((d, i) => ({ id: d.id, field: `body.designations.${i}.id` })),
  );
}

export async function createActivity(ctx: WriteContext, input: CreateActivityInput, hooks: WriteHooks = {}): Promise<Versioned<Activity>> {
  const db = ctx.db;
  const templateId = input.basedOn.id.toLowerCase();
  const workItemId = input.workItemId?.toLowerCase() ?? null;
  const [status, type, designations] = await Promise.all([
    checkStatus(db, input.status ?? DEFAULT_STATUS),
    activityType(db, input.typeId),
    designationsOf(db, input),
  ]);
  const dateOfActivity = toUtcDateTime(input.dateOfActivity, "body.dateOfActivity");
  const id = ctx.uuid();
  return retrying(ctx, "activity", async (attempt) => {
    let used: number | undefined;
    if (workItemId !== null) {
      const [item, recorded] = await db.batch<Record<string, unknown>>([
        db.prepare("SELECT id FROM work_items WHERE id = ?1").bind(workItemId),
        db
          .prepare(
            "SELECT activity_template_revision AS revision FROM work_item_activity_templates WHERE work_item_id = ?1 AND " +
              "activity_template_id = ?2",
          )
          .bind(workItemId, templateId),
      ]);
      if (!item?.results.length) throw invalid("body.workItemId", "exists", `The work item ${workItemId} does not exist.`);
      used = (recorded?.results[0] as { revision: number } | undefined)?.revision;
      if (used !== undefined && input.basedOn.revision !== undefined && input.basedOn.revision !== used) {
        throw invalid(
          "body.basedOn.revision",
          "workItemRevision",
          `The work item uses revision ${used} of this activity template; activities are added to it only from that revision.`,
        );
      }
    }
    const wanted = used ?? input.basedOn.revision ?? "latest";
    const template = (await readActivityTemplateRevisions(db, [{ id: templateId, revision: wanted }])).get(templateId);
    if (!template) {
      const what =
        wanted === "latest" ? `The activity template ${templateId}` : `Revision ${wanted} of the activity template ${templateId}`;
      throw invalid(wanted === "latest" ? "body.basedOn.id" : "body.basedOn.revision", "exists", `${what} does not exist.`);
    }
    const values = checkInputValues(
      template.inputs.map((i) => ({ input_template_id: i.id, format: i.format, required: i.required, value: null })),
      input.inputs,
    );
    const position =
      workItemId === null
        ? 0
        : ((
            await db
              .prepare("SELECT coalesce(max(position) + 1, 0) AS p FROM activities WHERE work_item_id = ?1")
              .bind(workItemId)
              .first<{ p: number }>()
          )?.p ?? 0);
    const made = newActivityRows({
      id,
      workItemId,
      template,
      displayName: input.displayName ?? template.row.display_name,
      referenceId: input.referenceId === undefined ? template.row.reference_id : input.referenceId,
      status,
      dateOfActivity,
      owner: ownerOrCaller(input.objectOwner, ctx.actorId === null ? null : { id: ctx.actorId, name: ctx.actorName ?? "" }),
      responsible: input.responsible,
      activityTypeId: type === undefined ? template.row.activity_type_id : (type?.id ?? null),
      activityTypeName: type === undefined ? template.row.activity_type_name : (type?.name ?? null),
      position,
      metadata: input.metadata,
      values,
      etag: newEtagToken(),
      now: ctx.now,
      actorId: ctx.actorId,
    });
    const activity = toActivity(made.row, made.inputs, readDesignationsSorted(designations));
    await hooks.beforeWrite?.(attempt);
    const done = await runGuarded(db, [
      ...templateAssertions(db, [], [template]),
      ...(workItemId === null ? [] : [assertStatement(db, "EXISTS (SELECT 1 FROM work_items WHERE id = ?1)", workItemId)]),
      ...insertActivitiesStatements(db, [made.row], made.inputs, ctx.actorId),
      ...(workItemId !== null && used === undefined
        ? firstUseStatements(db, workItemId, [{ id: templateId, revision: template.row.revision }], ctx.now)
        : []),
      ...replaceDesignationsStatements(db, KIND, id, designations),
      ...outboxStatements(db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: activity }),
    ]);
    return done ? { value: activity, etag: made.row.etag } : READ_AGAIN;
  });
}

export async function updateActivity(ctx: WriteContext, input: UpdateActivityInput): Promise<Versioned<Activity>> {
  const db = ctx.db;
  const id = input.id.toLowerCase();
  return retrying(ctx, "activity", async () => {
    const current = await findActivityRow(db, id);
    if (!current) throw notFound("Activity", id);
    assertVersion(ctx, current.etag);
    const problems: FieldProblem[] = [];
    if (input.basedOn?.id !== undefined && input.basedOn.id.toLowerCase() !== current.based_on_id)
      problems.push({ field: "body.basedOn.id", rule: "immutable", message: "basedOn cannot change." });
    if (input.basedOn?.revision !== undefined && input.basedOn.revision !== current.based_on_revision)
      problems.push({ field: "body.basedOn.revision", rule: "immutable", message: "basedOn cannot change." });
    if (input.workItemId !== undefined && (input.workItemId?.toLowerCase() ?? null) !== current.work_item_id)
      problems.push({ field: "body.workItemId", rule: "immutable", message: "workItemId cannot change." });
    if (problems.length > 0) throw new ApiError("ValidationFailed", problems.map((p) => p.message).join("; "), { errors: problems });
    const [status, type, designations] = await Promise.all([
      checkStatus(db, input.status ?? current.status),
      activityType(db, input.typeId),
      designationsOf(db, input),
    ]);
    const slots = await readInputSlots(db, id);
    const values = checkInputValues(slots, input.inputs);
    const row = {
      ...current,
      display_name: input.displayName ?? current.display_name,
      reference_id: input.referenceId === undefined ? current.reference_id : input.referenceId,
      status,
      date_of_activity: toUtcDateTime(input.dateOfActivity, "body.dateOfActivity"),
      owner_id: input.objectOwner?.id ?? current.owner_id,
      owner_name: input.objectOwner ? input.objectOwner.name : current.owner_name,
      responsible_id: input.responsible?.id ?? null,
      responsible_name: input.responsible?.name ?? null,
      activity_type_id: type === undefined ? current.activity_type_id : (type?.id ?? null),
      activity_type_name: type === undefined ? current.activity_type_name : (type?.name ?? null),
      metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
      etag: newEtagToken(),
      updated_at: ctx.now,
    };
    const inputs = slots.map((s) => (values.has(s.input_template_id) ? { ...s, value: values.get(s.input_template_id) ?? null } : s));
    const activity = toActivity(row, inputs, readDesignationsSorted(designations));
    const done = await runGuarded(db, [
      etagAssertion(db, "activities", id, current.etag),
      updateActivityStatement(db, row),
      ...(values.size === 0 ? [] : [setInputValuesStatement(db, id, values)]),
      ...replaceDesignationsStatements(db, KIND, id, designations),
      ...guardedOutboxStatements(
        db,
        ctx,
        { entityKind: KIND, entityId: id, action: "updated", payload: activity },
        { table: "activities", etag: row.etag },
      ),
    ]);
    return done ? { value: activity, etag: row.etag } : READ_AGAIN;
  });
}

/**
 * Deletes an activity with its inputs and designations. The revision it was based on stays frozen
 * if anything else uses it; the work item's record of the revision it used stays as well.
 */
export async function deleteActivity(ctx: WriteContext, id: string): Promise<void> {
  const db = ctx.db;
  await retrying(ctx, "activity", async () => {
    const current = await findActivityRow(db, id);
    if (!current) throw notFound("Activity", id);
    assertVersion(ctx, current.etag);
    const done = await runGuarded(db, [
      etagAssertion(db, "activities", id, current.etag),
      deleteDesignationsStatement(db, KIND, id),
      ...deleteActivityStatements(db, id),
      ...outboxStatements(db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: { workItemId: current.work_item_id } }),
    ]);
    return done ? true : READ_AGAIN;
  });
}
