/**
 * The edit loop every template kind shares: read the latest revision, check If-Match, plan the
 * change, write it as ONE guarded batch (revisions.ts: in place while unused, else a copy as
 * revision + 1), and start over from a fresh read when a guard failed because the revision changed
 * or came into use meanwhile. Runs inside the template's TemplateWriter (writer.ts).
 */
import type { Database } from "../db/statements";
import { outboxStatements, type EntityKind } from "../events/outbox";
import { conflict, isAssertionFailure, newEtagToken, type WriteContext } from "../pkg/db";
import { notFound } from "../pkg/errors";
import { deleteLatestRevisionStatements, headerOf, revisionWriteStatements, targetOf, type RevisionedKind } from "./revisions";
import { revisionEtag } from "./shared";
import { assertVersion, READ_AGAIN, retryWrite } from "../pkg/resource";

/** Attempts of one edit: a guard that fails because the revision became in use meanwhile makes it retry as a copy. */
const MAX_ATTEMPTS = 3;

/** The columns of a revision row the loop itself sets. */
export interface RevisionRow {
  revision: number;
  etag: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  in_use: number;
}

/** What one edit changes, computed from the revision it starts from. */
export interface EditPlan<Row> {
  header: Partial<Row>;
  dependentChanges(db: Database, id: string, revision: number): D1PreparedStatement[];
  /** Further statements of the batch (e.g. re-indexing the latest revision's properties). */
  index?: D1PreparedStatement[];
}

export interface TemplateEdit<Row extends RevisionRow, State extends { row: Row }, Plan extends EditPlan<Row>, Value> {
  kind: RevisionedKind;
  /** The outbox entity kind. */
  entityKind: EntityKind;
  /** For messages, e.g. "Work template". */
  what: string;
  load(db: Database, id: string): Promise<State | null>;
  plan(state: State): Promise<Plan>;
  /** The representation of the written revision. */
  compose(row: Row, plan: Plan): { value: Value; etag: string };
  /** Maps a failure of the batch other than a guard (e.g. a foreign key) to an API error; rethrows otherwise. */
  onBatchError?(error: unknown): never;
}

export async function editLatestRevision<Row extends RevisionRow, State extends { row: Row }, Plan extends EditPlan<Row>, Value>(
  ctx: WriteContext,
  id: string,
  edit: TemplateEdit<Row, State, Plan, Value>,
): Promise<{ value: Value; etag: string }> {
  const exhausted = () => conflict(`The ${edit.what.toLowerCase()} kept changing while this edit was written; read it again and retry.`);
  return retryWrite(
    ctx,
    async () => {
      const state = await edit.load(ctx.db, id);
      if (!state) throw notFound(edit.what, id);
      const inUse = state.row.in_use === 1;
      assertVersion(ctx, revisionEtag(state.row.etag, inUse));
      const plan = await edit.plan(state);
      const read = { id, revision: state.row.revision, etag: state.row.etag, inUse };
      const target = targetOf(read);
      const row: Row = {
        ...state.row,
        ...plan.header,
        revision: target.revision,
        etag: newEtagToken(),
        updated_at: ctx.now,
        // A copy is a new revision: created now, by the caller.
        created_at: target.copies ? ctx.now : state.row.created_at,
        created_by: target.copies ? ctx.actorId : state.row.created_by,
        in_use: 0,
      };
      const written = edit.compose(row, plan);
      const statements = revisionWriteStatements(ctx.db, edit.kind, read, {
        header: headerOf(edit.kind, row),
        dependentChanges: (revision) => plan.dependentChanges(ctx.db, id, revision),
        sideEffects: () => [
          ...(plan.index ?? []),
          ...outboxStatements(ctx.db, ctx, {
            entityKind: edit.entityKind,
            entityId: id,
            action: "updated",
            payload: written.value,
            etag: written.etag,
          }),
        ],
      });
      try {
        await ctx.db.batch(statements);
        return written;
      } catch (error) {
        if (isAssertionFailure(error)) return READ_AGAIN;
        if (edit.onBatchError) edit.onBatchError(error);
        throw error;
      }
    },
    { attempts: MAX_ATTEMPTS, exhausted },
  );
}

export interface TemplateDelete<Row extends RevisionRow, State extends { row: Row }> {
  kind: RevisionedKind;
  /** The outbox entity kind. */
  entityKind: EntityKind;
  /** For messages, e.g. "Work template". */
  what: string;
  load(db: Database, id: string): Promise<State | null>;
  /** Throws (409 InUse, saying why) when the latest revision cannot be deleted. */
  refuse(state: State): Promise<void>;
  /** Further statements of the delete batch (re-indexing the previous revision, guards). */
  statements(state: State): Promise<D1PreparedStatement[]>;
}

/**
 * Deletes the latest revision when nothing was created from it; an older revision (revisions are
 * numbered without gaps) becomes the latest again. One guarded batch, retried from a fresh read when
 * the revision changed meanwhile.
 */
export async function deleteLatestRevision<Row extends RevisionRow & { id: string }, State extends { row: Row }>(
  ctx: WriteContext,
  id: string,
  remove: TemplateDelete<Row, State>,
): Promise<void> {
  const exhausted = () => conflict(`The ${remove.what.toLowerCase()} kept changing while it was being deleted; read it again and retry.`);
  await retryWrite(
    ctx,
    async () => {
      const state = await remove.load(ctx.db, id);
      if (!state) throw notFound(remove.what, id);
      const inUse = state.row.in_use === 1;
      assertVersion(ctx, revisionEtag(state.row.etag, inUse));
      await remove.refuse(state);
      const read = { id, revision: state.row.revision, etag: state.row.etag, inUse };
      const latestRevision = read.revision > 1 ? read.revision - 1 : null;
      try {
        await ctx.db.batch([
          ...deleteLatestRevisionStatements(ctx.db, remove.kind, read),
          ...(await remove.statements(state)),
          ...outboxStatements(ctx.db, ctx, {
            entityKind: remove.entityKind,
            entityId: id,
            action: "deleted",
            payload: { revision: read.revision, latestRevision },
          }),
        ]);
        return true;
      } catch (error) {
        if (isAssertionFailure(error)) return READ_AGAIN;
        throw error;
      }
    },
    { attempts: MAX_ATTEMPTS, exhausted },
  );
}
