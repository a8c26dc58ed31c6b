/**
 * A channel's controllers (issue 35), evaluated by the monitoring loop after every batch of its
 * readings and every void: the same pass, alarms, actions and events as a monitor job's
 * (src/monitors/alarms/evaluation.ts), with the channel as its own one item on its asset.
 * The variables its conditions name are in ./controllers.ts.
 */
import type { Database } from "../../db/statements";
import type { EventContext } from "../../events/outbox";
import { evaluateSourceControllers, type AlarmItem, type AlarmSource } from "../../monitors/alarms/evaluation";
import { channelVariables, type ChannelValues } from "./controllers";
import { alarmStateStatement, channelRecord, channelRecordStatement, type ChannelRecord } from "./store";

const ASSET_TYPE: Record<string, string> = {
  plant: "Plant",
  mainSystem: "MainSystem",
  equipment: "Equipment",
  designObject: "DesignObject",
};

/** The channel as the loop sees it: its controllers and name, and its one item on its asset. */
export function channelAlarmSource(record: ChannelRecord): { source: AlarmSource; item: AlarmItem } {
  const r = record.row;
  return {
    source: {
      kind: "channel",
      id: r.id,
      number: String(r.channelNumber),
      name: r.name,
      // A channel has no owner of its own: what its alarms raise belongs to the user who made it.
      ownerId: r.createdBy ?? "system",
      ownerName: null,
      controllers: r.controllers,
    },
    item: {
      id: r.id,
      populationId: null,
      assetId: r.assetId,
      assetName: record.assetName,
      assetType: ASSET_TYPE[r.assetKind] ?? r.assetKind,
    },
  };
}

/**
 * Evaluates the controllers of the channels a batch wrote (`batchId` names the batch in the alarms'
 * history and events), then sets each channel's alarm state. Channels without controllers and without
 * active alarms cost nothing.
 */
export async function evaluateChannels(
  db: Database,
  events: EventContext,
  batchId: string,
  written: readonly { channel: ChannelRecord; values: ChannelValues }[],
): Promise<{ entered: number; left: number; notes: string[] }> {
  const total = { entered: 0, left: 0, notes: [] as string[] };
  for (const { channel, values } of written) {
    if (channel.row.controllers === "[]" && channel.row.alarmState === "normal") continue;
    const id = channel.row.id;
    const result = await evaluateSourceControllers(
      db,
      { id: batchId, monitor_ref: id, created_at: events.now, trigger_depth: 0 },
      async () => {
        const raw = await channelRecordStatement(db, id).first<Record<string, unknown>>();
        if (!raw) return null;
        const { source, item } = channelAlarmSource(channelRecord(raw));
        return { source, items: [item] };
      },
      new Map([[channel.row.assetId, channelVariables(values)]]),
      events,
    );
    if (result.entered > 0 || result.left > 0) await alarmStateStatement(db, id, events.now).run();
    total.entered += result.entered;
    total.left += result.left;
    total.notes.push(...result.notes);
  }
  return total;
}
