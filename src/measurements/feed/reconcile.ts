/**
 * Inspection feeds the series (issue 35): the value an inspector enters in an activity input whose
 * template names a channel (or a channel type) becomes a reading of that channel, its source
 * `activity:{activityId}:{inputTemplateId}`; a changed value voids that reading and records the new
 * one, a cleared value (or a deleted activity) voids it.
 *
 * It runs from the events queue (an `activity` event), not in the request: the activity's write
 * commits with its event in one batch, and the queue retries the feed until it succeeds, so a value
 * never misses its reading because a Durable Object call failed (docs/decisions.md, "Inspection feeds
 * the series"). Each run reconciles: it reads the activity as it is NOW, and makes the series hold
 * exactly what its inputs say, so a replayed, late or reordered event changes nothing wrong; a run
 * that sees the activity change under it runs again. Readings are written and voided through the
 * same functions as the API's (writeGroups, voidReading): the same projection, events and analysis.
 */
import type { Bindings } from "../../env";
import { serviceEventContext } from "../../events/outbox";
import type { DomainEvent } from "../../events/outbox";
import type { Logger } from "../../pkg/logger";
import { ApiError } from "../../pkg/errors";
import { CHANNEL_JOINS, CHANNEL_SELECT, channelRecord, channelsByKeys, type ChannelRecord } from "../channels/store";
import { writeGroups, type RecordContext } from "../readings/record";
import { EARLIEST_MS, FUTURE_TOLERANCE_MS } from "../readings/schema";
import { voidReading } from "../readings/void";
import { seriesOf } from "../series";
import { deleteFeedRowsStatement, feedRowsOf, saveFeedRowStatement, type FeedRow } from "./store";
import { parseInputReading, type InputReading } from "./targets";

/** What a deleted activity's version is: after every ISO date, so it wins over any computation before it. */
const DELETED = "~deleted";
/** Runs of one event at most when the activity keeps changing under it (the next event runs it again). */
const MAX_ROUNDS = 3;

export const sourceOf = (activityId: string, inputTemplateId: string) => `activity:${activityId}:${inputTemplateId}`;

interface ActivityState {
  id: string;
  workItemId: string | null;
  dateOfActivity: string | null;
  version: string;
}

interface FedInput {
  inputTemplateId: string;
  name: string;
  value: number | null;
  reading: InputReading;
}

interface Designated {
  assetId: string;
  name: string;
}

type Wanted = { status: "unresolved"; problem: string } | { status: "recorded"; channel: ChannelRecord; ts: number; value: number };

/** Activities of one work item fed again after its change, at most (the others wait for their own next change). */
const MAX_ACTIVITIES_PER_WORK_ITEM_EVENT = 200;

/**
 * The outbox event handler (src/handlers.ts): an activity's event feeds its inputs; a work item's
 * (its designations may have changed) feeds again those of its activities whose values the feed holds
 * or could not place.
 */
export async function feedInspection(event: DomainEvent, env: Bindings, log: Logger): Promise<void> {
  if (event.entityKind === "activity") return feedActivity(env, event.entityId.toLowerCase(), log);
  if (event.entityKind !== "workItem" || event.action !== "updated") return;
  const { results } = await env.DB.prepare(
    `SELECT DISTINCT r.activity_id FROM activity_input_readings r JOIN activities x ON x.id = r.activity_id
     WHERE x.work_item_id = ?1 AND r.status <> 'cleared' LIMIT ${MAX_ACTIVITIES_PER_WORK_ITEM_EVENT}`,
  )
    .bind(event.entityId.toLowerCase())
    .all<{ activity_id: string }>();
  for (const { activity_id } of results) await feedActivity(env, activity_id, log);
}

/** Makes every series hold what the activity's feeding inputs say now. */
export async function feedActivity(env: Bindings, activityId: string, log: Logger): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const version = await reconcile(env, activityId, log);
    if (version === null) return;
    const now = await env.DB.prepare("SELECT updated_at FROM activities WHERE id = ?1").bind(activityId).first<{ updated_at: string }>();
    if ((now?.updated_at ?? DELETED) === version) return;
  }
}

async function readState(env: Bindings, activityId: string) {
  const db = env.DB;
  const [activity, inputs, designated] = await db.batch<Record<string, unknown>>([
    db.prepare("SELECT id, work_item_id, date_of_activity, updated_at FROM activities WHERE id = ?1").bind(activityId),
    db
      .prepare(
        `SELECT i.input_template_id, t.name, i.value, t.reading FROM activity_inputs i JOIN activities x ON x.id = i.activity_id
           JOIN input_templates t ON t.activity_template_id = x.based_on_id AND t.activity_template_revision = x.based_on_revision
             AND t.id = i.input_template_id
         WHERE i.activity_id = ?1 AND t.reading IS NOT NULL`,
      )
      .bind(activityId),
    // The activity's own designations, and its work item's (the activity's win when it has any).
    db
      .prepare(
        `SELECT g.entity_kind, g.asset_id, a.name FROM designations g JOIN assets a ON a.id = g.asset_id
         WHERE g.derived = 0 AND ((g.entity_kind = 'activity' AND g.entity_id = ?1) OR (g.entity_kind = 'workItem' AND
           g.entity_id = (SELECT work_item_id FROM activities WHERE id = ?1)))`,
      )
      .bind(activityId),
  ]);
  const row = activity?.results[0] as
    { id: string; work_item_id: string | null; date_of_activity: string | null; updated_at: string } | undefined;
  const state: ActivityState | null = row
    ? { id: row.id, workItemId: row.work_item_id, dateOfActivity: row.date_of_activity, version: row.updated_at }
    : null;
  const fed: FedInput[] = (inputs?.results as { input_template_id: string; name: string; value: string | null; reading: string }[]).map(
    (r) => ({ inputTemplateId: r.input_template_id, name: r.name, value: numberOf(r.value), reading: parseInputReading(r.reading)! }),
  );
  const rows = (designated?.results ?? []) as { entity_kind: string; asset_id: string; name: string }[];
  const own = rows.filter((r) => r.entity_kind === "activity");
  const assets: Designated[] = (own.length > 0 ? own : rows).map((r) => ({ assetId: r.asset_id, name: r.name }));
  return { state, fed, assets };
}

/** An input's stored value (JSON text) as a number, or null (cleared, or not a number). */
function numberOf(text: string | null): number | null {
  if (text === null) return null;
  const raw = JSON.parse(text) as unknown;
  const n = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
  return Number.isFinite(n) ? n : null;
}

/** One reconciliation; answers the activity version it worked from (null: nothing to feed). */
async function reconcile(env: Bindings, activityId: string, log: Logger): Promise<string | null> {
  const [{ state, fed, assets }, previous] = await Promise.all([readState(env, activityId), feedRowsOf(env.DB, activityId)]);
  if (fed.length === 0 && previous.length === 0) return null;
  const version = state?.version ?? DELETED;
  const ctx: RecordContext & { actorId: null } = { ...serviceEventContext("inspection feed"), db: env.DB, actorId: null };
  const before = new Map(previous.map((r) => [r.input_template_id, r]));
  const inputs = new Map(fed.map((f) => [f.inputTemplateId, f]));
  const ids = new Set([...before.keys(), ...inputs.keys()]);
  const channels = await resolveChannels(env, [...inputs.values()], assets, before);
  const saved: FeedRow[] = [];
  for (const inputTemplateId of ids) {
    const old = before.get(inputTemplateId);
    if (old && old.activity_version > version) continue; // a newer run already fed it
    const input = state ? inputs.get(inputTemplateId) : undefined;
    const source = sourceOf(activityId, inputTemplateId);
    const label = input ? `Input '${input.name}' of activity ${activityId}` : `Activity ${activityId}`;
    const wanted =
      input && input.value !== null && state
        ? await want(env, state, input, input.value, channels.get(inputTemplateId)!, old, ctx.now)
        : null;
    // Void the reading wherever it is no longer wanted: another channel, or none at all.
    if (old?.channel_id && (wanted?.status !== "recorded" || wanted.channel.row.id !== old.channel_id)) {
      const reason = !state
        ? `${label} was deleted.`
        : wanted === null
          ? `${label} was cleared.`
          : wanted.status === "unresolved"
            ? `${label} changed; its value feeds no reading: ${wanted.problem}`
            : `${label} now feeds channel ${wanted.channel.row.channelNumber}.`;
      await voidBySource(env, ctx, old.channel_id, source, reason);
    }
    let row: FeedRow = {
      activity_id: activityId,
      input_template_id: inputTemplateId,
      status: "cleared",
      channel_id: null,
      timestamp: null,
      value: null,
      problem: null,
      activity_version: version,
      updated_at: ctx.now,
    };
    if (wanted?.status === "unresolved") row = { ...row, status: "unresolved", problem: wanted.problem, value: input?.value ?? null };
    if (wanted?.status === "recorded") {
      // Say where the reading goes before writing it: should the run fail after the series was written and
      // the activity change before the retry, the next run still knows which series to void it in.
      if (old?.channel_id !== wanted.channel.row.id)
        await saveFeedRowStatement(env.DB, {
          ...row,
          status: "unresolved",
          channel_id: wanted.channel.row.id,
          value: wanted.value,
          problem: "Not fed yet: the feed was interrupted and runs again.",
        }).run();
      const problem = await record(env, ctx, wanted, source, label);
      row =
        problem === null
          ? { ...row, status: "recorded", channel_id: wanted.channel.row.id, timestamp: wanted.ts, value: wanted.value }
          : { ...row, status: "unresolved", problem, value: wanted.value };
      if (problem !== null) log.warn("inspection value not fed", { activityId, inputTemplateId, problem });
    }
    saved.push(row);
  }
  await env.DB.batch(state ? saved.map((r) => saveFeedRowStatement(env.DB, r)) : [deleteFeedRowsStatement(env.DB, activityId)]);
  return version;
}

/** Makes the channel's series hold exactly the wanted reading of this source; a problem when it cannot. */
async function record(
  env: Bindings,
  ctx: RecordContext & { actorId: null },
  wanted: Extract<Wanted, { status: "recorded" }>,
  source: string,
  label: string,
): Promise<string | null> {
  const series = seriesOf(env, wanted.channel.row.id);
  const held = await series.bySource(source);
  if (held && held.ts === wanted.ts && held.value === wanted.value) return null;
  if (held) {
    const what = held.ts === wanted.ts ? `changed from ${held.value} to ${wanted.value}` : `moved to ${new Date(wanted.ts).toISOString()}`;
    await voidReading(env, ctx, wanted.channel, { source }, `${label} ${what}.`);
  }
  try {
    await writeGroups(
      env,
      ctx,
      [{ channel: wanted.channel, readings: [{ index: 0, ts: wanted.ts, value: wanted.value, source }] }],
      source,
      false,
    );
    return null;
  } catch (error) {
    if (error instanceof ApiError && error.status === 409)
      return (
        `Channel ${wanted.channel.row.channelNumber} already has another reading at ${new Date(wanted.ts).toISOString()}: ` +
        "void it, or change the activity's date."
      );
    throw error;
  }
}

async function voidBySource(env: Bindings, ctx: RecordContext & { actorId: null }, channelId: string, source: string, reason: string) {
  const [channel] = await channelsByKeys(env.DB, [channelId], []);
  if (!channel) return; // deleted: its series went with it
  // Void every reading of the source (one, unless two runs once raced).
  for (let i = 0; i < 5; i++) if ((await voidReading(env, ctx, channel, { source }, reason)) === null) return;
}

/**
 * The channel each feeding input names, as far as the activity's assets tell: the named channel, or
 * the one channel of the named type on the designated assets (or the one it fed before, while that
 * one still fits); otherwise the problem.
 */
async function resolveChannels(
  env: Bindings,
  inputs: readonly FedInput[],
  assets: readonly Designated[],
  before: ReadonlyMap<string, FeedRow>,
): Promise<Map<string, ChannelRecord | string>> {
  const out = new Map<string, ChannelRecord | string>();
  const named = inputs.flatMap((i) => (i.reading.channelId ? [i.reading.channelId] : []));
  const types = [...new Set(inputs.flatMap((i) => (i.reading.channelTypeId ? [i.reading.channelTypeId] : [])))];
  const assetIds = assets.map((a) => a.assetId);
  const [byId, ofTypes] = await Promise.all([
    channelsByKeys(env.DB, named, []),
    types.length === 0 || assetIds.length === 0
      ? Promise.resolve([] as ChannelRecord[])
      : env.DB.prepare(
          `SELECT ${CHANNEL_SELECT} FROM channels ch ${CHANNEL_JOINS.join(" ")} WHERE ch.asset_id IN (SELECT value FROM json_each(?1)) ` +
            "AND ch.channel_type_id IN (SELECT value FROM json_each(?2)) ORDER BY ch.channel_number",
        )
          .bind(JSON.stringify(assetIds), JSON.stringify(types))
          .all<Record<string, unknown>>()
          .then((r) => r.results.map(channelRecord)),
  ]);
  const assetNames = assets.map((a) => a.name).join(", ");
  for (const input of inputs) {
    const { channelId, channelTypeId } = input.reading;
    if (channelId) {
      const channel = byId.find((c) => c.row.id === channelId);
      if (!channel) out.set(input.inputTemplateId, `Channel ${channelId} no longer exists.`);
      else if (assetIds.length > 0 && !assetIds.includes(channel.row.assetId))
        out.set(
          input.inputTemplateId,
          `Channel ${channel.row.channelNumber} is on ${channel.assetName}, not on an asset the work item designates (${assetNames}).`,
        );
      else out.set(input.inputTemplateId, channel);
      continue;
    }
    if (assetIds.length === 0) {
      out.set(input.inputTemplateId, "Neither the activity nor its work item designates an asset to find the channel on.");
      continue;
    }
    const found = ofTypes.filter((c) => c.row.channelTypeId === channelTypeId);
    // The channel fed before stays while it still fits (a second channel of the type does not move or void its reading).
    const fedBefore = found.find((c) => c.row.id === before.get(input.inputTemplateId)?.channel_id);
    if (fedBefore) out.set(input.inputTemplateId, fedBefore);
    else if (found.length === 1) out.set(input.inputTemplateId, found[0]!);
    else if (found.length === 0) out.set(input.inputTemplateId, `No channel of the input's channel type is on ${assetNames}.`);
    else
      out.set(
        input.inputTemplateId,
        `${found.length} channels of the input's channel type are on ${assetNames} (numbers ` +
          `${found.map((c) => c.row.channelNumber).join(", ")}): name the channel in the input template.`,
      );
  }
  return out;
}

/** The reading an input's value should be, or why it cannot be one. */
async function want(
  env: Bindings,
  state: ActivityState,
  input: FedInput,
  value: number,
  resolved: ChannelRecord | string,
  old: FeedRow | undefined,
  now: string,
): Promise<Wanted> {
  if (typeof resolved === "string") return { status: "unresolved", problem: resolved };
  const channel = resolved;
  if (channel.row.unit !== input.reading.unit)
    return {
      status: "unresolved",
      problem: `Channel ${channel.row.channelNumber} measures in ${channel.row.unit}; the input's values are in ${input.reading.unit}.`,
    };
  if (!channel.acceptsReadings)
    return {
      status: "unresolved",
      problem: `Channel ${channel.row.channelNumber} is ${channel.availabilityName}: it accepts no readings.`,
    };
  // The reading's time: the activity's date; without one, when the value was entered (kept while it stays the same).
  let ts: number;
  if (state.dateOfActivity !== null) ts = Date.parse(state.dateOfActivity);
  else if (old?.status === "recorded" && old.channel_id === channel.row.id && old.value === value && old.timestamp !== null)
    ts = old.timestamp;
  else {
    const held = await seriesOf(env, channel.row.id).bySource(sourceOf(state.id, input.inputTemplateId));
    ts = held && held.value === value ? held.ts : Date.parse(state.version);
  }
  if (!Number.isFinite(ts) || ts < EARLIEST_MS || ts > Date.parse(now) + FUTURE_TOLERANCE_MS)
    return {
      status: "unresolved",
      problem: `The activity's date ${state.dateOfActivity ?? state.version} is before 1900 or more than a day ahead.`,
    };
  return { status: "recorded", channel, ts, value };
}
