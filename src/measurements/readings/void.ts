/**
 * Voiding a reading: a correction never edits a reading, it voids it with a reason (kept beside it)
 * and the analysis is recomputed without it. The channel's row and a `readings` `voided` event (and a
 * `channelAnalysis` event when the analysis changed) are written in one batch.
 */
import type { Bindings } from "../../env";
import { outboxStatements } from "../../events/outbox";
import { ApiError } from "../../pkg/errors";
import type { ChannelRecord } from "../channels/store";
import { analysisEventStatement, projectionStatement } from "../channels/store";
import { seriesOf, settingsOf } from "../series";
import { evaluateChannels } from "../channels/alarms";
import type { RecordContext } from "./record";

export async function voidReading(
  env: Bindings,
  ctx: RecordContext & { actorId: string | null },
  channel: ChannelRecord,
  target: { ts?: number; source?: string },
  reason: string,
) {
  const done = await seriesOf(env, channel.row.id).void(target, reason, ctx.actorId, settingsOf(channel), Date.parse(ctx.now));
  if (!done) {
    if (target.source !== undefined) return null;
    throw new ApiError(
      "NotFound",
      `Channel ${channel.row.channelNumber} has no live reading at ${new Date(target.ts ?? 0).toISOString()}.`,
    );
  }
  const statements = [
    projectionStatement(
      ctx.db,
      { channelId: channel.row.id, version: done.version, readingCount: done.readingCount, last: done.last, analysis: done.analysis },
      ctx.now,
    ),
  ];
  if (done.analysisChanged) statements.push(...analysisEventStatement(ctx.db, ctx, channel.row.id, done.analysis));
  const batchId = ctx.uuid();
  statements.push(
    ...outboxStatements(ctx.db, ctx, {
      entityKind: "readings",
      entityId: batchId,
      action: "voided",
      payload: { batchId, channelId: channel.row.id, channelNumber: channel.row.channelNumber, ...done.voided, reason },
    }),
  );
  await ctx.db.batch(statements);
  await evaluateChannels(ctx.db, ctx, batchId, [{ channel, values: { last: done.last, batch: null, analysis: done.analysis } }]);
  return { voided: { ...done.voided, reason }, readingCount: done.readingCount, analysis: done.analysis };
}
