/**
 * Edits of an existing work template: the whole-object PUT, the dependent routes and DELETE. Each
 * runs inside the template's TemplateWriter (writer.ts) and becomes ONE guarded batch
 * (revisions.ts): in place while the latest revision is not in use, else a copy as revision + 1.
 */
import { deleteFileReferencesOfStatement, WORK_TEMPLATE_OWNER } from "../../file-references/store";
import { noPlanUsesTemplateAssertion, plansUsingTemplate } from "../../plans/store";
import type { WriteContext } from "../../pkg/db";
import { ApiError, notFound } from "../../pkg/errors";
import {
  deletePropertyValuesStatement,
  toPropertyValueRows,
  replacePropertyValuesStatements,
  type ResolvedProperty,
} from "../../properties/values";
import { replaceTagsStatements } from "../../work/common";
import { deleteLatestRevision, editLatestRevision, type EditPlan } from "../edit";
import type { Written } from "../writer";
import {
  deleteDependentsStatement,
  insertDependentsStatements,
  replaceDependentsStatements,
  unsectionStatement,
  WORK_TEMPLATE_KIND,
} from "../revisions";
import { metadataText, throwProblems } from "../shared";
import type { SectionTemplateInput, UpdateWorkTemplateInput, WorkTemplate, WorkTemplateActivityTemplateInput } from "./schema";
import {
  activityTemplatesExistStatement,
  ENTITY_KIND,
  LINKS,
  latestIndexStatements,
  linkRows,
  loadWorkTemplateState,
  prepareHeader,
  SECTIONS,
  sectionRows,
  toWorkTemplate,
  type LinkRow,
  type SectionRow,
  type WorkTemplateRow,
  type WorkTemplateState,
} from "./store";

type Op<A extends string, T> = { template: "work"; action: A; id: string } & T;

export type WorkTemplateOperation =
  | Op<"update", { input: UpdateWorkTemplateInput }>
  | Op<"replaceActivityTemplates", { items: WorkTemplateActivityTemplateInput[] }>
  | Op<"addActivityTemplate", { item: WorkTemplateActivityTemplateInput }>
  | Op<"replaceSectionTemplates", { items: SectionTemplateInput[] }>
  | Op<"addSectionTemplate", { item: SectionTemplateInput }>
  | Op<"deleteSectionTemplate", { sectionTemplateId: string }>
  | Op<"delete", object>;

/** What one edit changes, computed from the revision it starts from. */
interface Plan extends EditPlan<WorkTemplateRow> {
  sections: SectionRow[];
  links: LinkRow[];
  /** Statements for the latest revision's properties and tags, when they change. */
  index: D1PreparedStatement[];
}

export async function runWorkTemplateOperation(ctx: WriteContext, op: WorkTemplateOperation): Promise<Written<WorkTemplate | null>> {
  const id = op.id.toLowerCase();
  if (op.action === "delete") {
    await deleteWorkTemplate(ctx, id);
    return { value: null, etag: null };
  }
  return editLatestRevision<WorkTemplateRow, WorkTemplateState, Plan, WorkTemplate>(ctx, id, {
    kind: WORK_TEMPLATE_KIND,
    entityKind: ENTITY_KIND,
    what: "Work template",
    load: loadWorkTemplateState,
    plan: (state) => planFor(ctx, op, state),
    compose: (row, plan) => toWorkTemplate({ row, sections: plan.sections, links: plan.links }),
  });
}

async function planFor(
  ctx: WriteContext,
  op: Exclude<WorkTemplateOperation, { action: "delete" }>,
  state: WorkTemplateState,
): Promise<Plan> {
  const keep = { header: {}, sections: state.sections, links: state.links, index: [] as D1PreparedStatement[] };
  switch (op.action) {
    case "update":
      return planUpdate(ctx, op.input, state);
    case "replaceActivityTemplates": {
      const links = await linkRows(ctx.db, op.items, (i) => `body.${i}`, new Set(state.sections.map((s) => s.id)), ctx.uuid);
      throwProblems(links.problems);
      return {
        ...keep,
        links: links.rows,
        dependentChanges: (db, id, rev) => [
          ...activityTemplatesExistStatement(db, links.rows),
          ...replaceDependentsStatements(db, LINKS, id, rev, links.rows),
        ],
      };
    }
    case "addActivityTemplate": {
      const item = { ...op.item, order: op.item.order ?? nextPosition(state.links) };
      const links = await linkRows(ctx.db, [item], () => "body", new Set(state.sections.map((s) => s.id)), ctx.uuid);
      const added = links.rows[0]!;
      if (state.links.some((l) => l.id === added.id))
        links.problems.push({
          field: "body.id",
          rule: "duplicate",
          message: `The work template already has an activity template entry ${added.id}.`,
        });
      throwProblems(links.problems);
      return {
        ...keep,
        links: [...state.links, added].sort(byPosition),
        dependentChanges: (db, id, rev) => [
          ...activityTemplatesExistStatement(db, [added]),
          ...insertDependentsStatements(db, LINKS, id, rev, [added]),
        ],
      };
    }
    case "replaceSectionTemplates": {
      const sections = sectionRows(op.items, (i) => `body.${i}`, ctx.uuid);
      throwProblems(sections.problems);
      // Activity templates of a section that is gone stay in the template, outside any section.
      const kept = new Set(sections.rows.map((s) => s.id));
      const links = state.links.map((l) =>
        l.section_template_id !== null && !kept.has(l.section_template_id) ? { ...l, section_template_id: null } : l,
      );
      return {
        ...keep,
        sections: sections.rows,
        links,
        dependentChanges: (db, id, rev) => [
          ...replaceDependentsStatements(db, SECTIONS, id, rev, sections.rows),
          unsectionStatement(db, id, rev, kept),
        ],
      };
    }
    case "addSectionTemplate": {
      const sections = sectionRows([{ ...op.item, order: op.item.order ?? nextPosition(state.sections) }], () => "body", ctx.uuid);
      const added = sections.rows[0]!;
      if (state.sections.some((s) => s.id === added.id))
        sections.problems.push({
          field: "body.id",
          rule: "duplicate",
          message: `The work template already has a section template ${added.id}.`,
        });
      throwProblems(sections.problems);
      return {
        ...keep,
        sections: [...state.sections, added].sort(byPosition),
        dependentChanges: (db, id, rev) => insertDependentsStatements(db, SECTIONS, id, rev, [added]),
      };
    }
    case "deleteSectionTemplate": {
      const sectionId = op.sectionTemplateId.toLowerCase();
      if (!state.sections.some((s) => s.id === sectionId)) throw notFound("Section template", sectionId);
      const remaining = state.sections.filter((s) => s.id !== sectionId);
      const kept = new Set(remaining.map((s) => s.id));
      return {
        ...keep,
        sections: remaining,
        links: state.links.map((l) => (l.section_template_id === sectionId ? { ...l, section_template_id: null } : l)),
        dependentChanges: (db, id, rev) => [
          deleteDependentsStatement(db, SECTIONS, id, rev, [sectionId]),
          unsectionStatement(db, id, rev, kept),
        ],
      };
    }
  }
}

async function planUpdate(ctx: WriteContext, input: UpdateWorkTemplateInput, state: WorkTemplateState): Promise<Plan> {
  const header = await prepareHeader(ctx.db, input);
  const sections = input.sectionTemplates
    ? sectionRows(input.sectionTemplates, (i) => `body.sectionTemplates.${i}`, ctx.uuid)
    : { rows: state.sections, problems: [] };
  const sectionIds = new Set(sections.rows.map((s) => s.id));
  const links = input.activityTemplates
    ? await linkRows(ctx.db, input.activityTemplates, (i) => `body.activityTemplates.${i}`, sectionIds, ctx.uuid)
    : {
        rows: state.links.map((l) =>
          l.section_template_id !== null && !sectionIds.has(l.section_template_id) ? { ...l, section_template_id: null } : l,
        ),
        problems: [],
      };
  throwProblems([...sections.problems, ...links.problems]);
  const owner = input.objectOwner ? { owner_id: input.objectOwner.id, owner_name: input.objectOwner.name ?? null } : {};
  return {
    header: {
      display_name: input.displayName,
      reference_id: input.referenceId,
      status: header.status,
      type_id: header.typeId,
      ...owner,
      tags: JSON.stringify(header.tags),
      properties: JSON.stringify(header.properties),
      metadata: metadataText(input.metadata),
    },
    sections: sections.rows,
    links: links.rows,
    dependentChanges: (db, id, rev) => [
      ...(input.sectionTemplates ? replaceDependentsStatements(db, SECTIONS, id, rev, sections.rows) : []),
      ...(input.activityTemplates
        ? [...activityTemplatesExistStatement(db, links.rows), ...replaceDependentsStatements(db, LINKS, id, rev, links.rows)]
        : [unsectionStatement(db, id, rev, sectionIds)]),
    ],
    index: latestIndexStatements(ctx.db, input.id.toLowerCase(), header.tags, header.properties),
  };
}

const byPosition = <T extends { position: number; id: string }>(a: T, b: T) =>
  a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function nextPosition(rows: readonly { position: number }[]): number {
  return rows.reduce((max, r) => Math.max(max, r.position + 1), 0);
}

/**
 * Deletes the latest revision (only when nothing was created from it) and its dependents; an older
 * revision, if any, becomes the latest again, with its properties and tags. With no revision left the
 * template is gone, its file references too.
 */
function deleteWorkTemplate(ctx: WriteContext, id: string): Promise<void> {
  return deleteLatestRevision<WorkTemplateRow, WorkTemplateState>(ctx, id, {
    kind: WORK_TEMPLATE_KIND,
    entityKind: ENTITY_KIND,
    what: "Work template",
    load: loadWorkTemplateState,
    async refuse(state) {
      // The last revision takes the template away: not while an inspection plan generates from it (issue 36).
      if (state.row.revision === 1) {
        const plans = await plansUsingTemplate(ctx.db, id);
        if (plans.length > 0)
          throw new ApiError(
            "InUse",
            `Work template ${id} is used by the inspection plan${plans.length > 1 ? "s" : ""} ` +
              `${plans.map((p) => `'${p.name}' (${p.id})`).join(", ")}; delete the plan or change its template first.`,
          );
      }
      if (state.row.in_use !== 1) return;
      const used = await ctx.db
        .prepare("SELECT count(*) AS n FROM work_item_templates WHERE work_template_id = ?1 AND work_template_revision = ?2")
        .bind(id, state.row.revision)
        .first<{ n: number }>();
      throw new ApiError(
        "InUse",
        `Revision ${state.row.revision} of work template ${id} is the base of ${used?.n ?? 0} work item(s); only a ` +
          `latest revision that no work item is based on can be deleted.`,
      );
    },
    // The previous revision's properties and tags become the indexed ones; with none left, the
    // template's file references go too.
    async statements(state) {
      const previous = await ctx.db
        .prepare(
          "SELECT tags, properties FROM work_templates WHERE id = ?1 AND revision = (SELECT max(revision) FROM " +
            "work_templates WHERE id = ?1 AND revision < ?2)",
        )
        .bind(id, state.row.revision)
        .first<{ tags: string; properties: string }>();
      return previous
        ? [
            ...replacePropertyValuesStatements(
              ctx.db,
              ENTITY_KIND,
              id,
              toPropertyValueRows(ENTITY_KIND, id, JSON.parse(previous.properties) as ResolvedProperty[]),
            ),
            ...replaceTagsStatements(ctx.db, ENTITY_KIND, id, JSON.parse(previous.tags) as string[]),
          ]
        : [
            // A plan created meanwhile fails the batch; the delete reads again and is refused.
            noPlanUsesTemplateAssertion(ctx.db, id),
            deletePropertyValuesStatement(ctx.db, ENTITY_KIND, id),
            ...replaceTagsStatements(ctx.db, ENTITY_KIND, id, []),
            deleteFileReferencesOfStatement(ctx.db, WORK_TEMPLATE_OWNER, id),
          ];
    },
  });
}
