/**
 * Instantiation (spec section 3, rule 6): a work item based on work templates gets, for each
 * template's latest revision, every WorkTemplateActivityTemplate as an activity (from the activity
 * template's latest revision, or the revision this work item already used for it), each input
 * template as an input, the template's tags and copies of its file references.
 *
 * This module reads what to copy and returns the statements that write it; the caller puts them in
 * the work item's own batch, behind the assertions that the revisions read are unchanged.
 */
import type { Database } from "../db/statements";
import { DEFAULT_STATUS } from "../work/common";
import { ApiError, type FieldProblem } from "../pkg/errors";
import { newEtagToken, type WriteContext } from "../pkg/db";
import { insertActivitiesStatements, newActivityRows, toActivity, type ActivityInputRow, type ActivityRow } from "./activities/store";
import { basedOnStatements, firstUseStatements } from "./store";
import { insertFileReferencesStatements, WORK_ITEM_OWNER } from "../file-references/store";
import type { Activity } from "./activities/schema";
import {
  readActivityTemplateRevisions,
  readLatestWorkTemplates,
  templateAssertions,
  type ActivityTemplateRevision,
  type WorkTemplateRevision,
} from "./template-revisions";

export interface InstantiationRequest {
  workItemId: string;
  owner: { id: string; name: string | null };
  /** The work templates to instantiate, with where each is named in the request. */
  templates: { id: string; field: string }[];
  /** Revisions the work item already used, by activity template id. */
  usedRevisions: ReadonlyMap<string, number>;
  /** Position of the first new activity (after the work item's existing ones). */
  firstActivityPosition: number;
  /** Position of the first new basedOn entry. */
  firstBasedOnPosition: number;
}

export interface Instantiation {
  /** Assertions to run first in the batch (the revisions read are unchanged). */
  assertions: D1PreparedStatement[];
  /** The writes: activities, inputs, basedOn and first-use rows, file references. */
  writes: D1PreparedStatement[];
  basedOn: { id: string; revision: number }[];
  tags: string[];
  activities: Activity[];
}

const EMPTY: Omit<Instantiation, "assertions" | "writes"> = { basedOn: [], tags: [], activities: [] };

/** What an instantiation copies from: the work templates' latest revisions and their activity templates' revisions. */
export interface InstantiationSources {
  works: Map<string, WorkTemplateRevision>;
  revisions: Map<string, ActivityTemplateRevision>;
}

/**
 * Reads what instantiating `templateIds` copies. Callers that make many work items from the same
 * templates (the monitoring loop, issue 25) read once and pass the sources to each prepareInstantiation.
 */
export async function readInstantiationSources(
  db: Database,
  templateIds: readonly string[],
  usedRevisions: ReadonlyMap<string, number> = new Map(),
): Promise<InstantiationSources> {
  const works = await readLatestWorkTemplates(db, templateIds);
  const activityTemplateIds = [...new Set([...works.values()].flatMap((w) => w.activityTemplates.map((a) => a.activityTemplateId)))];
  const revisions = await readActivityTemplateRevisions(
    db,
    activityTemplateIds.map((id) => ({ id, revision: usedRevisions.get(id) ?? "latest" })),
  );
  return { works, revisions };
}

/** Reads the templates (unless given) and prepares the statements; throws ValidationFailed naming missing templates. */
export async function prepareInstantiation(
  ctx: WriteContext,
  request: InstantiationRequest,
  sources?: InstantiationSources,
): Promise<Instantiation> {
  if (request.templates.length === 0) return { ...EMPTY, assertions: [], writes: [] };
  const db = ctx.db;
  const { works, revisions } =
    sources ??
    (await readInstantiationSources(
      db,
      request.templates.map((t) => t.id),
      request.usedRevisions,
    ));
  const errors: FieldProblem[] = request.templates
    .filter((t) => !works.has(t.id))
    .map((t) => ({ field: t.field, rule: "exists", message: `The work template ${t.id} does not exist.` }));
  if (errors.length > 0) throw new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
  const ordered = request.templates.map((t) => works.get(t.id)!);
  const missing = request.templates.filter((t) => works.get(t.id)!.activityTemplates.some((a) => !revisions.has(a.activityTemplateId)));
  if (missing.length > 0) {
    const problems = missing.map((t) => ({
      field: t.field,
      rule: "activityTemplate",
      message: `The work template ${t.id} uses an activity template that does not exist.`,
    }));
    throw new ApiError("ValidationFailed", problems.map((e) => e.message).join("; "), { errors: problems });
  }

  const rows: ActivityRow[] = [];
  const inputs: ActivityInputRow[] = [];
  const activities: Activity[] = [];
  let position = request.firstActivityPosition;
  for (const work of ordered) {
    for (const wtat of work.activityTemplates) {
      const template = revisions.get(wtat.activityTemplateId)!;
      const made = newActivityRows({
        id: ctx.uuid(),
        workItemId: request.workItemId,
        template,
        displayName: template.row.display_name,
        referenceId: template.row.reference_id,
        status: DEFAULT_STATUS,
        dateOfActivity: null,
        owner: request.owner,
        responsible: null,
        activityTypeId: template.row.activity_type_id,
        activityTypeName: template.row.activity_type_name,
        position: position++,
        metadata: null,
        etag: newEtagToken(),
        now: ctx.now,
        actorId: ctx.actorId,
      });
      rows.push(made.row);
      inputs.push(...made.inputs);
      activities.push(toActivity(made.row, made.inputs, []));
    }
  }

  const firstUses = [...revisions.values()].filter((r) => !request.usedRevisions.has(r.row.id));
  const basedOn = ordered.map((w) => ({ id: w.id, revision: w.revision }));
  return {
    assertions: templateAssertions(db, ordered, [...revisions.values()]),
    writes: [
      ...insertActivitiesStatements(db, rows, inputs, ctx.actorId),
      ...basedOnStatements(db, request.workItemId, basedOn, request.firstBasedOnPosition, ctx.now),
      // A plain INSERT: a first use recorded meanwhile by another request fails the batch, which is then retried.
      ...firstUseStatements(
        db,
        request.workItemId,
        firstUses.map((r) => ({ id: r.row.id, revision: r.row.revision })),
        ctx.now,
      ),
      ...fileReferenceCopies(ctx, request.workItemId, ordered),
    ],
    basedOn,
    tags: ordered.flatMap((w) => w.tags),
    activities,
  };
}

/** Copies of the templates' file references, owned by the work item and pointing back at their origin. */
function fileReferenceCopies(ctx: WriteContext, workItemId: string, works: readonly WorkTemplateRevision[]): D1PreparedStatement[] {
  const copies = works.flatMap((w) =>
    w.fileReferences.map((f) => ({
      id: ctx.uuid(),
      location: f.location,
      platformFileId: f.platformFileId,
      url: f.url,
      name: f.name,
      inheritedFrom: f.id,
    })),
  );
  return insertFileReferencesStatements(ctx.db, WORK_ITEM_OWNER, workItemId, copies, ctx);
}

export type { ActivityTemplateRevision };
