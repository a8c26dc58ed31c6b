/**
 * Rows of a chunk written a few batches at a time, for a kind whose write is one D1 batch it can
 * compose without running (`prepare`: every rule checked, nothing written). A batch that fails (a
 * unique key another row took, a record changed meanwhile) wrote nothing, so its rows are written
 * again one by one with the kind's own `write`, each with its own answer: one row's problem never
 * undoes another row.
 */
import type { WriteContext } from "../../pkg/db";
import type { ManyRow } from "./kind";

/** Prepared rows written in one batch. */
const GROUP_ROWS = 25;
/** Rows prepared (their reads) at once. */
const PREPARING_AT_ONCE = 6;

/** The write context of one row: a new record's id is the first id its write mints. */
export function rowContextOf(ctx: WriteContext, id: string, existing: boolean): WriteContext {
  if (existing) return ctx;
  let used = false;
  return {
    ...ctx,
    uuid: () => {
      if (used) return ctx.uuid();
      used = true;
      return id;
    },
  };
}

export interface BatchedWriter<Plan> {
  /** The row's statements (its `extra` among them), every rule checked, nothing run; throws as `write` would. */
  prepare(ctx: WriteContext, plan: Plan, extra: readonly D1PreparedStatement[]): Promise<D1PreparedStatement[]>;
  write(ctx: WriteContext, plan: Plan, extra: readonly D1PreparedStatement[]): Promise<string>;
  existingId(plan: Plan): string | null;
}

/** {@link ImportKind.writeMany} for a kind that can prepare its writes. */
export async function writeInBatches<Plan>(
  ctx: WriteContext,
  rows: readonly ManyRow<Plan>[],
  writer: BatchedWriter<Plan>,
): Promise<(string | Error)[]> {
  const answers: (string | Error)[] = new Array<string | Error>(rows.length);
  const prepared: { at: number; statements: D1PreparedStatement[] }[] = [];
  let next = 0;
  const worker = async () => {
    for (let at = next++; at < rows.length; at = next++) {
      const row = rows[at]!;
      try {
        const rowCtx = rowContextOf(ctx, row.id, writer.existingId(row.plan) !== null);
        prepared.push({ at, statements: await writer.prepare(rowCtx, row.plan, row.extra) });
      } catch (error) {
        answers[at] = error instanceof Error ? error : new Error(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PREPARING_AT_ONCE, rows.length) }, worker));
  prepared.sort((a, b) => a.at - b.at);
  for (let from = 0; from < prepared.length; from += GROUP_ROWS) {
    const group = prepared.slice(from, from + GROUP_ROWS);
    try {
      await ctx.db.batch(group.flatMap((p) => p.statements));
      for (const p of group) answers[p.at] = rows[p.at]!.id;
    } catch {
      for (const p of group) {
        const row = rows[p.at]!;
        try {
          answers[p.at] = await writer.write(rowContextOf(ctx, row.id, writer.existingId(row.plan) !== null), row.plan, row.extra);
        } catch (error) {
          answers[p.at] = error instanceof Error ? error : new Error(String(error));
        }
      }
    }
  }
  return answers;
}
