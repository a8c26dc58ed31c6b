/** The Worker's side of a channel's series: its Durable Object (durable-objects/channel-series.ts) and the settings it analyses with. */
import type { Bindings } from "../env";
import type { SeriesSettings } from "../../durable-objects/channel-series";
import type { ChannelRecord } from "./channels/store";

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
