/**
 * Edits of an existing activity template: the whole-object PUT, the input template routes and
 * DELETE, each one guarded batch run inside the template's TemplateWriter (see work/write.ts).
 */
import { assertStatement, conflict, isForeignKeyViolation, type WriteContext } from "../../pkg/db";
import { ApiError, notFound } from "../../pkg/errors";
import { deleteLatestRevision, editLatestRevision, type EditPlan } from "../edit";
import type { Written } from "../writer";
import { ACTIVITY_TEMPLATE_KIND, deleteDependentsStatement, insertDependentsStatements, replaceDependentsStatements } from "../revisions";
import { metadataText, throwProblems } from "../shared";
import type { ActivityTemplate, InputTemplateInput, UpdateActivityTemplateInput } from "./schema";
import {
  byPosition,
  checkedInputRows,
  ENTITY_KIND,
  INPUTS,
  loadActivityTemplateState,
  prepareActivityHeader,
  toActivityTemplate,
  type ActivityTemplateRow,
  type ActivityTemplateState,
  type InputRow,
} from "./store";

type Op<A extends string, T> = { template: "activity"; action: A; id: string } & T;

export type ActivityTemplateOperation =
  | Op<"update", { input: UpdateActivityTemplateInput }>
  | Op<"replaceInputTemplates", { items: InputTemplateInput[] }>
  | Op<"addInputTemplate", { item: InputTemplateInput }>
  | Op<"deleteInputTemplate", { inputTemplateId: string }>
  | Op<"delete", object>;

interface Plan extends EditPlan<ActivityTemplateRow> {
  inputs: InputRow[];
}

export async function runActivityTemplateOperation(
  ctx: WriteContext,
  op: ActivityTemplateOperation,
): Promise<Written<ActivityTemplate | null>> {
  const id = op.id.toLowerCase();
  if (op.action === "delete") {
    await deleteActivityTemplate(ctx, id);
    return { value: null, etag: null };
  }
  return editLatestRevision<ActivityTemplateRow, ActivityTemplateState, Plan, ActivityTemplate>(ctx, id, {
    kind: ACTIVITY_TEMPLATE_KIND,
    entityKind: ENTITY_KIND,
    what: "Activity template",
    load: loadActivityTemplateState,
    plan: (state) => planFor(ctx, op, state),
    compose: (row, plan) => toActivityTemplate({ row, inputs: plan.inputs }),
    onBatchError: (error) => {
      if (isForeignKeyViolation(error)) throw conflict("The activity type was deleted meanwhile; choose another.");
      throw error;
    },
  });
}

async function planFor(
  ctx: WriteContext,
  op: Exclude<ActivityTemplateOperation, { action: "delete" }>,
  state: ActivityTemplateState,
): Promise<Plan> {
  switch (op.action) {
    case "update": {
      const input = op.input;
      const header = await prepareActivityHeader(ctx.db, input);
      const inputs = input.inputTemplates
        ? await checkedInputRows(ctx.db, input.inputTemplates, (i) => `body.inputTemplates.${i}`, ctx.uuid)
        : { rows: state.inputs, problems: [] };
      throwProblems(inputs.problems);
      const owner = input.objectOwner ? { owner_id: input.objectOwner.id, owner_name: input.objectOwner.name ?? null } : {};
      return {
        header: {
          display_name: input.displayName,
          reference_id: input.referenceId,
          status: header.status,
          ...owner,
          activity_type_id: header.activityTypeId,
          activity_type_name: header.activityTypeName,
          template_type: input.templateType,
          description: input.description,
          metadata: metadataText(input.metadata),
        },
        inputs: [...inputs.rows].sort(byPosition),
        dependentChanges: (db, id, rev) => (input.inputTemplates ? replaceDependentsStatements(db, INPUTS, id, rev, inputs.rows) : []),
      };
    }
    case "replaceInputTemplates": {
      const inputs = await checkedInputRows(ctx.db, op.items, (i) => `body.${i}`, ctx.uuid);
      throwProblems(inputs.problems);
      return {
        header: {},
        inputs: [...inputs.rows].sort(byPosition),
        dependentChanges: (db, id, rev) => replaceDependentsStatements(db, INPUTS, id, rev, inputs.rows),
      };
    }
    case "addInputTemplate": {
      const next = state.inputs.reduce((max, r) => Math.max(max, r.position + 1), 0);
      const inputs = await checkedInputRows(ctx.db, [{ ...op.item, order: op.item.order ?? next }], () => "body", ctx.uuid, state.inputs);
      const added = inputs.rows[0]!;
      if (state.inputs.some((i) => i.id === added.id))
        inputs.problems.push({
          field: "body.id",
          rule: "duplicate",
          message: `The activity template already has an input template ${added.id}.`,
        });
      throwProblems(inputs.problems);
      return {
        header: {},
        inputs: [...state.inputs, added].sort(byPosition),
        dependentChanges: (db, id, rev) => insertDependentsStatements(db, INPUTS, id, rev, [added]),
      };
    }
    case "deleteInputTemplate": {
      const inputId = op.inputTemplateId.toLowerCase();
      if (!state.inputs.some((i) => i.id === inputId)) throw notFound("Input template", inputId);
      return {
        header: {},
        inputs: state.inputs.filter((i) => i.id !== inputId),
        dependentChanges: (db, id, rev) => [deleteDependentsStatement(db, INPUTS, id, rev, [inputId])],
      };
    }
  }
}

/**
 * Deletes the latest revision when nothing was created from it; an older revision becomes the latest
 * again. The last revision cannot go while a work template lists the activity template.
 */
function deleteActivityTemplate(ctx: WriteContext, id: string): Promise<void> {
  return deleteLatestRevision<ActivityTemplateRow, ActivityTemplateState>(ctx, id, {
    kind: ACTIVITY_TEMPLATE_KIND,
    entityKind: ENTITY_KIND,
    what: "Activity template",
    load: loadActivityTemplateState,
    async refuse(state) {
      if (state.row.in_use === 1) {
        throw new ApiError(
          "InUse",
          `Revision ${state.row.revision} of activity template ${id} is the base of activities or was used by a work ` +
            `item; only a latest revision nothing was created from can be deleted.`,
        );
      }
      if (state.row.revision !== 1) return;
      const listed = await ctx.db
        .prepare("SELECT count(DISTINCT work_template_id) AS n FROM work_template_activity_templates WHERE activity_template_id = ?1")
        .bind(id)
        .first<{ n: number }>();
      if ((listed?.n ?? 0) > 0)
        throw new ApiError("InUse", `Activity template ${id} is listed by ${listed?.n} work template(s); remove it from them first.`);
    },
    // A work template that starts listing the template meanwhile keeps the last revision alive.
    statements: async (state) => [
      assertStatement(
        ctx.db,
        "?2 = 0 OR NOT EXISTS (SELECT 1 FROM work_template_activity_templates WHERE activity_template_id = ?1)",
        id,
        state.row.revision === 1 ? 1 : 0,
      ),
    ],
  });
}
