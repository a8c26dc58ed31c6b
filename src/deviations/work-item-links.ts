/**
 * Links between deviations and work items, managed from either side (/Deviations/{id}/WorkItems and
 * /WorkItems/{id}/Deviations). Linking is idempotent; each real change writes one batch: the link
 * row, an `updated` event for both entities, and new etags for both (each shows the other's id).
 * The statements after the link are chained on changes(), so a link that already existed (or a
 * concurrent duplicate) writes nothing else.
 */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { guardedOutboxStatements } from "../events/outbox";
import { ApiError, notFound } from "../pkg/errors";
import { isForeignKeyViolation, newEtagToken, type WriteContext } from "../pkg/db";
import type { Versioned } from "../pkg/resource";
import { toPerson } from "../work/common";
import {
  DEVIATION_COLUMNS,
  DEVIATION_KIND,
  hydrateDeviations,
  linkWorkItemStatement,
  newDeviationVersionIfChangedStatement,
  unlinkStatement,
  type DeviationRow,
} from "./store";
import { newWorkItemVersionsStatement } from "../work-items/store";
import type { Deviation } from "./schema";

const WORK_ITEM_KIND = "workItem";

export const LinkedWorkItemSchema = z
  .object({
    id: z.uuid(),
    displayName: z.string(),
    referenceId: z.string().nullable(),
    status: z.string(),
    dueDate: z.string().nullable(),
    objectOwner: z.object({ id: z.string(), name: z.string().nullable() }),
  })
  .openapi("LinkedWorkItem");

export type LinkedWorkItem = z.infer<typeof LinkedWorkItemSchema>;

interface WorkItemRow {
  id: string;
  display_name: string;
  reference_id: string | null;
  status: string;
  due_date: string | null;
  owner_id: string;
  owner_name: string | null;
}

/** 404 naming the side that does not exist. */
async function assertBothExist(db: Database, deviationId: string, workItemId: string): Promise<void> {
  const row = await db
    .prepare(
      "SELECT EXISTS (SELECT 1 FROM deviations WHERE id = ?1) AS deviation, EXISTS (SELECT 1 FROM work_items WHERE id = ?2) AS workItem",
    )
    .bind(deviationId, workItemId)
    .first<{ deviation: number; workItem: number }>();
  if (!row?.deviation) throw notFound("Deviation", deviationId);
  if (!row.workItem) throw notFound("Work item", workItemId);
}

export async function workItemsOfDeviation(db: Database, deviationId: string): Promise<LinkedWorkItem[]> {
  const id = deviationId.toLowerCase();
  const exists = await db.prepare("SELECT 1 AS found FROM deviations WHERE id = ?1").bind(id).first();
  if (!exists) throw notFound("Deviation", id);
  const { results } = await db
    .prepare(
      `SELECT w.id, w.display_name, w.reference_id, w.status, w.due_date, w.owner_id, w.owner_name
         FROM deviation_work_items l JOIN work_items w ON w.id = l.work_item_id
        WHERE l.deviation_id = ?1 ORDER BY w.id`,
    )
    .bind(id)
    .all<WorkItemRow>();
  return results.map((w) => ({
    id: w.id,
    displayName: w.display_name,
    referenceId: w.reference_id,
    status: w.status,
    dueDate: w.due_date,
    objectOwner: toPerson(w.owner_id, w.owner_name)!,
  }));
}

export async function deviationsOfWorkItem(db: Database, workItemId: string): Promise<Versioned<Deviation>[]> {
  const id = workItemId.toLowerCase();
  const exists = await db.prepare("SELECT 1 AS found FROM work_items WHERE id = ?1").bind(id).first();
  if (!exists) throw notFound("Work item", id);
  const { results } = await db
    .prepare(
      `SELECT ${DEVIATION_COLUMNS.split(", ")
        .map((c) => `d.${c}`)
        .join(", ")}
         FROM deviation_work_items l JOIN deviations d ON d.id = l.deviation_id
        WHERE l.work_item_id = ?1 ORDER BY d.reference_id, d.id`,
    )
    .bind(id)
    .all<DeviationRow>();
  return hydrateDeviations(db, results);
}

/** The events and etag changes that follow a link change, each run only when the statement before it changed a row. */
function followUps(ctx: WriteContext, deviationId: string, workItemId: string, linked: boolean): D1PreparedStatement[] {
  const payload = { deviationId, workItemId, linked };
  return [
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      {
        entityKind: DEVIATION_KIND,
        entityId: deviationId,
        action: "updated",
        payload,
        link: { field: "workItemIds", id: workItemId, linked },
      },
      "previousChanged",
    ),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      {
        entityKind: WORK_ITEM_KIND,
        entityId: workItemId,
        action: "updated",
        payload,
        link: { field: "deviationIds", id: deviationId, linked },
      },
      "previousChanged",
    ),
    newDeviationVersionIfChangedStatement(ctx.db, deviationId),
    newWorkItemVersionsStatement(ctx.db, { sql: "id = ?1", bindings: [workItemId] }, newEtagToken(), true),
  ];
}

/** Links; linking twice is not an error (nothing changes). */
export async function linkWorkItem(ctx: WriteContext, deviationId: string, workItemId: string): Promise<void> {
  const [d, w] = [deviationId.toLowerCase(), workItemId.toLowerCase()];
  await assertBothExist(ctx.db, d, w);
  try {
    await ctx.db.batch([
      linkWorkItemStatement(ctx.db, { deviationId: d, workItemId: w, now: ctx.now, by: ctx.actorId }),
      ...followUps(ctx, d, w, true),
    ]);
  } catch (error) {
    // One side was deleted between the check and the write.
    if (isForeignKeyViolation(error)) await assertBothExist(ctx.db, d, w);
    throw error;
  }
}

/** Unlinks; 404 when either side does not exist or they are not linked. */
export async function unlinkWorkItem(ctx: WriteContext, deviationId: string, workItemId: string): Promise<void> {
  const [d, w] = [deviationId.toLowerCase(), workItemId.toLowerCase()];
  await assertBothExist(ctx.db, d, w);
  const [removed] = await ctx.db.batch([unlinkStatement(ctx.db, d, w), ...followUps(ctx, d, w, false)]);
  if (removed?.meta.changes !== 1) throw new ApiError("NotFound", `The deviation ${d} and the work item ${w} are not linked.`);
}
