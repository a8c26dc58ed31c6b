/**
 * Work item writes. Each create, update and delete is ONE db.batch(): the work item, its properties,
 * tags, designations and, for the templates newly in basedOn, the instantiated activities, inputs,
 * file references and basedOn rows, plus the outbox events. The batch opens with assertions that the
 * work item (on update/delete) and every template revision read are unchanged; when one fails the
 * whole batch rolls back and the write starts over from fresh reads (the service's one write retry,
 * src/pkg/resource.ts), at most {@link MAX_ATTEMPTS} times. A first use of an activity template
 * recorded meanwhile by another request (a primary key clash in work_item_activity_templates /
 * work_item_templates) is retried the same way. The loop is
 * shared with activities.
 */
import { readBatch, typedRead, type Database } from "../db/statements";
import { guardedOutboxStatements, outboxManyStatements, outboxStatements } from "../events/outbox";
import { ApiError, notFound, type FieldProblem } from "../pkg/errors";
import { assertStatement, isAssertionFailure, isUniqueViolation, newEtagToken, type WriteContext } from "../pkg/db";
import { replacePropertyValuesStatements, deletePropertyValuesStatement } from "../properties/values";
import { deleteDesignationsStatement, replaceDesignationsStatements } from "../assets/designations";
import { assertVersion, READ_AGAIN, retryWrite, type Versioned } from "../pkg/resource";
import { normaliseTags, replaceTagsStatements } from "../work/common";
import { deleteFileReferencesOfStatement, WORK_ITEM_OWNER } from "../file-references/store";
import { unlinkWorkItemStatement } from "../deviations/store";
import { deleteActivitiesOfWorkItemStatements } from "./activities/store";
import { checkWorkItemFields, propertyRows, readableDesignations, readableProperties, type WorkItemFields } from "./fields";
import { prepareInstantiation, type Instantiation, type InstantiationSources } from "./instantiate";
import {
  deleteWorkItemStatements,
  findWorkItemRow,
  insertWorkItemStatement,
  KIND,
  updateWorkItemStatement,
  type WorkItemRow,
} from "./store";
import type { CreateWorkItemInput, UpdateWorkItemInput, WorkItem } from "./schema";
import { readUsedRevisions } from "./template-revisions";

/** Attempts of one write: a guard that fails because a template revision changed meanwhile makes it read again. */
const MAX_ATTEMPTS = 3;

/** Test seam: runs between the reads of an attempt and its batch (e.g. to change a template meanwhile). */
export interface WriteHooks {
  beforeWrite?: (attempt: number) => Promise<void>;
}

/** Runs `attempt` through the service's write retry ({@link retryWrite}): at most 3 times, then a 409 naming what kept changing. */
export function retrying<T>(ctx: WriteContext, what: string, attempt: (n: number) => Promise<T | typeof READ_AGAIN>): Promise<T> {
  return retryWrite(ctx, attempt, {
    attempts: MAX_ATTEMPTS,
    exhausted: () =>
      new ApiError(
        "Conflict",
        `The ${what} or the templates it is based on kept changing while it was written (${MAX_ATTEMPTS} attempts); try again.`,
        { headers: { "retry-after": "1" } },
      ),
  });
}

/** Runs a guarded batch; undefined when a guard failed (the batch changed nothing: read again). */
export async function runGuarded(db: Database, statements: D1PreparedStatement[]): Promise<D1Result[] | undefined> {
  try {
    return await db.batch(statements);
  } catch (error) {
    if (isAssertionFailure(error) || isUniqueViolation(error)) return undefined;
    throw error;
  }
}

/** Asserts that a row of `table` (our constant) still carries the etag that was read. */
export function etagAssertion(db: Database, table: "work_items" | "activities", id: string, etag: string): D1PreparedStatement {
  return assertStatement(db, `EXISTS (SELECT 1 FROM ${table} WHERE id = ?1 AND etag = ?2)`, id, etag);
}

function duplicateBasedOn(basedOn: readonly { id: string }[]): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  basedOn.forEach((b, i) => {
    const id = b.id.toLowerCase();
    if (seen.has(id))
      problems.push({ field: `body.basedOn.${i}.id`, rule: "unique", message: `The work template ${id} is listed more than once.` });
    seen.add(id);
  });
  return problems;
}

function validationFailed(problems: FieldProblem[]): ApiError {
  return new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
}

function rowOf(
  id: string,
  input: { displayName: string; referenceId: string | null; metadata: Record<string, unknown> | null },
  fields: WorkItemFields,
  tags: string[],
  etag: string,
  createdAt: string,
  now: string,
): WorkItemRow {
  return {
    id,
    display_name: input.displayName,
    reference_id: input.referenceId,
    status: fields.status,
    due_date: fields.dueDate,
    type_id: fields.typeId,
    owner_id: fields.owner.id,
    owner_name: fields.owner.name,
    tags: JSON.stringify(tags),
    metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
    etag,
    created_at: createdAt,
    updated_at: now,
  };
}

function workItemOf(
  row: WorkItemRow,
  fields: WorkItemFields,
  basedOn: { id: string; revision: number }[],
  deviationIds: string[],
): WorkItem {
  return {
    id: row.id,
    displayName: row.display_name,
    referenceId: row.reference_id,
    status: row.status,
    dueDate: row.due_date,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    typeId: row.type_id,
    tags: JSON.parse(row.tags) as string[],
    properties: readableProperties(fields),
    basedOn,
    designations: readableDesignations(fields.designations),
    deviationIds,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The statements every write of the work item's own fields makes. */
function fieldStatements(ctx: WriteContext, id: string, fields: WorkItemFields, tags: string[]): D1PreparedStatement[] {
  return [
    ...replacePropertyValuesStatements(ctx.db, KIND, id, propertyRows(id, fields)),
    ...replaceTagsStatements(ctx.db, KIND, id, tags),
    ...replaceDesignationsStatements(ctx.db, KIND, id, fields.designations),
  ];
}

function activityEvents(ctx: WriteContext, instantiation: Instantiation): D1PreparedStatement[] {
  return outboxManyStatements(
    ctx.db,
    ctx,
    instantiation.activities.map((a) => ({ entityKind: "activity", entityId: a.id, action: "created" as const, payload: a })),
  );
}

/**
 * The statements that create work item `id` from checked fields and a prepared instantiation, for a
 * caller's own batch (the instantiation's assertions first). `deviationIds` are the deviations the
 * same batch links to it, so its `created` event shows them. Used by createWorkItem and by the
 * monitoring loop (issue 25), which makes the work item in the batch that enters the alarm.
 */
export function workItemCreateStatements(
  ctx: WriteContext,
  id: string,
  input: { displayName: string; referenceId: string | null; metadata: Record<string, unknown> | null },
  fields: WorkItemFields,
  instantiation: Instantiation,
  deviationIds: string[] = [],
): { statements: D1PreparedStatement[]; value: WorkItem; etag: string } {
  const tags = normaliseTags([...fields.tags, ...instantiation.tags]);
  const row = rowOf(id, input, fields, tags, newEtagToken(), ctx.now, ctx.now);
  const item = workItemOf(row, fields, instantiation.basedOn, deviationIds);
  const statements = [
    ...instantiation.assertions,
    insertWorkItemStatement(ctx.db, row, ctx.actorId),
    ...fieldStatements(ctx, id, fields, tags),
    ...instantiation.writes,
    ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: item }),
    ...activityEvents(ctx, instantiation),
  ];
  return { statements, value: item, etag: row.etag };
}

/** The checks of a create before its batch: basedOn's duplicates, then the fields (every problem together). */
async function checkCreate(ctx: WriteContext, input: CreateWorkItemInput): Promise<WorkItemFields> {
  const duplicates = duplicateBasedOn(input.basedOn);
  if (duplicates.length > 0) throw validationFailed(duplicates);
  return checkWorkItemFields(ctx, input, null);
}

/** Reads the templates of a new work item's basedOn and prepares their instantiation (a template that does not exist is a 400). */
function instantiateNew(
  ctx: WriteContext,
  id: string,
  input: CreateWorkItemInput,
  fields: WorkItemFields,
  sources?: InstantiationSources,
): Promise<Instantiation> {
  return prepareInstantiation(
    ctx,
    {
      workItemId: id,
      owner: fields.owner,
      templates: input.basedOn.map((b, i) => ({ id: b.id.toLowerCase(), field: `body.basedOn.${i}.id` })),
      usedRevisions: new Map(),
      firstActivityPosition: 0,
      firstBasedOnPosition: 0,
    },
    sources,
  );
}

/**
 * Creates a work item. `extra` statements join the write's batch (an import's record of the row it
 * wrote, issue 37), so they are written exactly when the work item is. The work item's id is the
 * first id the write mints.
 */
export async function createWorkItem(
  ctx: WriteContext,
  input: CreateWorkItemInput,
  hooks: WriteHooks = {},
  extra: readonly D1PreparedStatement[] = [],
): Promise<Versioned<WorkItem>> {
  const fields = await checkCreate(ctx, input);
  const id = ctx.uuid();
  return retrying(ctx, "work item", async (attempt) => {
    const instantiation = await instantiateNew(ctx, id, input, fields);
    const { statements, value, etag } = workItemCreateStatements(ctx, id, input, fields, instantiation);
    await hooks.beforeWrite?.(attempt);
    const done = await runGuarded(ctx.db, [...statements, ...extra]);
    return done ? { value, etag } : READ_AGAIN;
  });
}

interface BasedOnRow {
  id: string;
  revision: number;
  position: number;
}

/** What an update writes, read and checked: every refusal of the update (404, 412, 400) is thrown from here. */
interface PreparedUpdate {
  current: WorkItemRow;
  fields: WorkItemFields;
  instantiation: Instantiation;
  row: WorkItemRow;
  item: WorkItem;
  tags: string[];
}

/** Reads the work item and what it is based on, checks the update and prepares the instantiation of templates new in basedOn. */
async function prepareUpdate(ctx: WriteContext, id: string, input: UpdateWorkItemInput): Promise<PreparedUpdate> {
  const duplicates = duplicateBasedOn(input.basedOn ?? []);
  if (duplicates.length > 0) throw validationFailed(duplicates);
  const current = await findWorkItemRow(ctx.db, id);
  if (!current) throw notFound("Work item", id);
  assertVersion(ctx, current.etag);
  const [basedOnRows, deviations, next] = await readBatch(ctx.db, [
    typedRead<BasedOnRow>(
      ctx.db
        .prepare(
          "SELECT work_template_id AS id, work_template_revision AS revision, position FROM work_item_templates WHERE " +
            "work_item_id = ?1 ORDER BY position",
        )
        .bind(id),
    ),
    typedRead<{ deviation_id: string }>(
      ctx.db.prepare("SELECT deviation_id FROM deviation_work_items WHERE work_item_id = ?1 ORDER BY created_at, deviation_id").bind(id),
    ),
    typedRead<{ position: number }>(
      ctx.db.prepare("SELECT coalesce(max(position) + 1, 0) AS position FROM activities WHERE work_item_id = ?1").bind(id),
    ),
  ]);
  const requested = (input.basedOn ?? basedOnRows).map((b) => b.id.toLowerCase());
  const removed = basedOnRows.filter((b) => !requested.includes(b.id));
  if (removed.length > 0) {
    throw validationFailed(
      removed.map((b) => ({
        field: "body.basedOn",
        rule: "instantiated",
        message:
          `The work template ${b.id} (revision ${b.revision}) was instantiated in this work item and cannot be removed ` + `from basedOn.`,
      })),
    );
  }
  const known = new Set(basedOnRows.map((b) => b.id));
  const templates = requested.map((tid, i) => ({ id: tid, field: `body.basedOn.${i}.id` })).filter((t) => !known.has(t.id));
  const fields = await checkWorkItemFields(ctx, input, current);
  const instantiation = await prepareInstantiation(ctx, {
    workItemId: id,
    owner: fields.owner,
    templates,
    usedRevisions: templates.length > 0 ? await readUsedRevisions(ctx.db, id) : new Map(),
    firstActivityPosition: next[0]?.position ?? 0,
    firstBasedOnPosition: basedOnRows.length === 0 ? 0 : Math.max(...basedOnRows.map((b) => b.position)) + 1,
  });
  const tags = normaliseTags([...fields.tags, ...instantiation.tags]);
  const row = rowOf(id, input, fields, tags, newEtagToken(), current.created_at, ctx.now);
  const basedOn = [...basedOnRows.map((b) => ({ id: b.id, revision: b.revision })), ...instantiation.basedOn];
  const item = workItemOf(
    row,
    fields,
    basedOn,
    deviations.map((d) => d.deviation_id),
  );
  return { current, fields, instantiation, row, item, tags };
}

/** Replaces a work item; `extra` statements join the write's batch, as for {@link createWorkItem}. */
export async function updateWorkItem(
  ctx: WriteContext,
  input: UpdateWorkItemInput,
  hooks: WriteHooks = {},
  extra: readonly D1PreparedStatement[] = [],
): Promise<Versioned<WorkItem>> {
  const id = input.id.toLowerCase();
  return retrying(ctx, "work item", async (attempt) => {
    const { current, fields, instantiation, row, item, tags } = await prepareUpdate(ctx, id, input);
    await hooks.beforeWrite?.(attempt);
    const done = await runGuarded(ctx.db, [
      etagAssertion(ctx.db, "work_items", id, current.etag),
      ...instantiation.assertions,
      updateWorkItemStatement(ctx.db, row),
      ...fieldStatements(ctx, id, fields, tags),
      ...instantiation.writes,
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: KIND, entityId: id, action: "updated", payload: item },
        { table: "work_items", etag: row.etag },
      ),
      ...activityEvents(ctx, instantiation),
      ...extra,
    ]);
    return done ? { value: item, etag: row.etag } : READ_AGAIN;
  });
}

/**
 * Checks a create (or a replace) as {@link createWorkItem} ({@link updateWorkItem}) would, and writes
 * nothing: every refusal of the request short of a write that races it. Throws the same errors.
 * Spreadsheet imports dry-run rows with it (issue 37); `ctx.uuid` only names statements never run.
 * `sources`: what a create's basedOn instantiates, already read (readInstantiationSources), for many
 * rows from the same templates (a write reads them itself, in the attempt that asserts them).
 */
export async function validateWorkItem(
  ctx: WriteContext,
  write: { action: "create"; body: CreateWorkItemInput } | { action: "update"; body: UpdateWorkItemInput },
  sources?: () => Promise<InstantiationSources>,
): Promise<void> {
  if (write.action === "create") {
    const fields = await checkCreate(ctx, write.body);
    await instantiateNew(ctx, ctx.uuid(), write.body, fields, await sources?.());
    return;
  }
  await prepareUpdate({ ...ctx, expectedEtag: undefined }, write.body.id.toLowerCase(), write.body);
}

/**
 * Deletes the work item with everything that belongs to it: activities (and their inputs and
 * designations), designations, property values, tags, file references, deviation links, basedOn and
 * used-revision rows. The templates' revisions stay as they are (a revision once used stays frozen).
 */
export async function deleteWorkItem(ctx: WriteContext, id: string): Promise<void> {
  const db = ctx.db;
  await retrying(ctx, "work item", async () => {
    const current = await findWorkItemRow(db, id);
    if (!current) throw notFound("Work item", id);
    assertVersion(ctx, current.etag);
    const { results } = await db.prepare("SELECT id FROM activities WHERE work_item_id = ?1").bind(id).all<{ id: string }>();
    const done = await runGuarded(db, [
      etagAssertion(db, "work_items", id, current.etag),
      // An activity added meanwhile would go without its event: read again instead.
      assertStatement(db, "(SELECT count(*) FROM activities WHERE work_item_id = ?1) = ?2", id, results.length),
      ...deleteActivitiesOfWorkItemStatements(db, id),
      deleteDesignationsStatement(db, KIND, id),
      deletePropertyValuesStatement(db, KIND, id),
      ...replaceTagsStatements(db, KIND, id, []),
      deleteFileReferencesOfStatement(db, WORK_ITEM_OWNER, id),
      unlinkWorkItemStatement(db, id),
      ...deleteWorkItemStatements(db, id),
      ...outboxStatements(db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }),
      ...outboxManyStatements(
        db,
        ctx,
        results.map((a) => ({ entityKind: "activity", entityId: a.id, action: "deleted" as const, payload: { workItemId: id } })),
      ),
    ]);
    return done ? true : READ_AGAIN;
  });
}
