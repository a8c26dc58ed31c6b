/** The Worker's side of a channel's series: its Durable Object (durable-objects/channel-series.ts) and the settings it analyses with. */
import type { Bindings } from "../env";
import type { SeriesSettings } from "../../durable-objects/channel-series";
import type { EventContext } from "../events/outbox";
import type { Database } from "../db/statements";
import { analysisEventStatement, getChannel, getChannelRecord, projectionStatement, type ChannelRecord } from "./channels/store";

/** The series of one channel. */
export function seriesOf(env: Pick<Bindings, "SERIES">, channelId: string) {
  return env.SERIES.get(env.SERIES.idFromName(channelId));
}

export function settingsOf(channel: ChannelRecord): SeriesSettings {
  return {
    thickness: channel.quantity === "thickness",
    unit: channel.row.unit,
    nominalThickness: channel.row.nominalThickness,
    minimumThickness: channel.row.minimumThickness,
    maxIntervalYears: channel.row.maxIntervalYears,
  };
}

/** Drops a deleted channel's readings. */
export async function dropSeries(env: Pick<Bindings, "SERIES">, channelId: string): Promise<void> {
  await seriesOf(env, channelId).drop();
}

/**
 * Recomputes a thickness channel's analysis after its settings changed (nominal, minimum, maximum
 * interval) and projects it; answers the channel as it is then, or null when nothing changed.
 */
export async function reanalyse(env: Bindings, ctx: EventContext & { db: Database }, channelId: string) {
  const channel = await getChannelRecord(ctx.db, channelId);
  if (channel.quantity !== "thickness" || channel.row.readingCount === 0) return null;
  const done = await seriesOf(env, channel.row.id).reanalyse(settingsOf(channel), Date.parse(ctx.now));
  if (!done.analysisChanged) return null;
  await ctx.db.batch([
    projectionStatement(
      ctx.db,
      { channelId: channel.row.id, version: done.version, readingCount: done.readingCount, last: done.last, analysis: done.analysis },
      ctx.now,
    ),
    ...analysisEventStatement(ctx.db, ctx, channel.row.id, done.analysis),
  ]);
  return getChannel(ctx.db, channel.row.id);
}
