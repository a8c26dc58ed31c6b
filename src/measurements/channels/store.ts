/**
 * Channels in D1: the owner of `channels`. A channel is numbered (its `channelNumber`, the counters'
 * sequence `channel`), names its asset (the asset's plant kept beside it for the plant filter) and its
 * catalogue entries. What its series says (latest reading, count, analysis, next inspection) is
 * projected onto the row by {@link projectionStatement} after each write of readings, guarded by the
 * series' version so an older projection never overwrites a newer one.
 */
import { tableStatements, type Database, type Row } from "../../db/statements";
import { channels } from "../../db/schema";
import { guardedOutboxStatements, outboxStatements, type EventContext, type EventInput } from "../../events/outbox";
import { checkControllers } from "../../monitors/monitors/controllers";
import type { Controller } from "../../monitors/monitors/schema";
import { nextNumber } from "../../monitors/numbers";
import { storedEnum } from "../../monitors/stored";
import { isForeignKeyViolation, newEtagToken, type WriteContext } from "../../pkg/db";
import { ApiError, notFound, type FieldProblem } from "../../pkg/errors";
import { assertVersion, commitVersioned, retryWrite, type Versioned } from "../../pkg/resource";
import type { ThicknessAnalysis } from "../analysis";
import { QUANTITIES, unitsOf, type Quantity } from "../catalogue/schema";
import { catalogueRows, type CatalogueRow } from "../catalogue/store";
import { channelControllerProblems } from "./controllers";
import { CHANNEL_ASSET_KINDS, type Channel, type ChannelInput } from "./schema";

const channelTable = tableStatements(channels);
export type ChannelRow = Row<typeof channels>;
export const channelRow = (raw: Record<string, unknown>): ChannelRow => channelTable.row(raw);
export const CHANNEL_EVENT_KIND = "channel";

const COLUMNS = channelTable.columns
  .split(", ")
  .map((c) => `ch.${c}`)
  .join(", ");
/** Every column of a channel with its asset's and catalogue entries' names (alias ch). */
export const CHANNEL_SELECT = `${COLUMNS}, a.name AS asset_name, t.name AS type_name, t.quantity AS type_quantity, o.name AS origin_name,
  v.name AS availability_name, v.accepts_readings AS availability_accepts`;
export const CHANNEL_JOINS = [
  "JOIN assets a ON a.id = ch.asset_id",
  "JOIN channel_catalogue t ON t.id = ch.channel_type_id",
  "JOIN channel_catalogue o ON o.id = ch.data_origin_id",
  "JOIN channel_catalogue v ON v.id = ch.availability_id",
];
const SELECT = `SELECT ${CHANNEL_SELECT} FROM channels ch ${CHANNEL_JOINS.join(" ")}`;

/** A channel as read with {@link CHANNEL_SELECT}: the row and the names it shows. */
export interface ChannelRecord {
  row: ChannelRow;
  assetName: string;
  typeName: string;
  quantity: Quantity;
  originName: string;
  availabilityName: string;
  acceptsReadings: boolean;
}

export function channelRecord(raw: Record<string, unknown>): ChannelRecord {
  return {
    row: channelRow(raw),
    assetName: String(raw.asset_name),
    typeName: String(raw.type_name),
    quantity: storedEnum(QUANTITIES, String(raw.type_quantity ?? "other"), "channel_catalogue.quantity"),
    originName: String(raw.origin_name),
    availabilityName: String(raw.availability_name),
    acceptsReadings: raw.availability_accepts === 1 || raw.availability_accepts === true,
  };
}

export function toChannel(record: ChannelRecord): Versioned<Channel> {
  const r = record.row;
  return {
    value: {
      id: r.id,
      channelNumber: r.channelNumber,
      name: r.name,
      description: r.description,
      assetId: r.assetId,
      asset: { id: r.assetId, kind: storedEnum(CHANNEL_ASSET_KINDS, r.assetKind, "channels.asset_kind"), name: record.assetName },
      plantId: r.plantId,
      channelTypeId: r.channelTypeId,
      channelType: { id: r.channelTypeId, name: record.typeName, quantity: record.quantity },
      dataOriginId: r.dataOriginId,
      dataOrigin: { id: r.dataOriginId, name: record.originName },
      availabilityId: r.availabilityId,
      availability: { id: r.availabilityId, name: record.availabilityName, acceptsReadings: record.acceptsReadings },
      unit: r.unit,
      nominalThickness: r.nominalThickness,
      minimumThickness: r.minimumThickness,
      maxIntervalYears: r.maxIntervalYears,
      controllers: JSON.parse(r.controllers) as Controller[],
      maxShelveMinutes: r.maxShelveMinutes,
      analysis: r.analysis === null ? null : (JSON.parse(r.analysis) as ThicknessAnalysis),
      nextInspectionAt: r.nextInspectionAt,
      alarmState: r.alarmState === "alarm" ? "alarm" : "normal",
      readingCount: r.readingCount,
      lastReadingAt: r.lastReadingAt,
      lastValue: r.lastValue,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    },
    etag: r.etag,
  };
}

/** One channel with its names (map with {@link channelRecord}). */
export function channelRecordStatement(db: Database, id: string): D1PreparedStatement {
  return db.prepare(`${SELECT} WHERE ch.id = ?1`).bind(id.toLowerCase());
}

export async function getChannelRecord(db: Database, id: string): Promise<ChannelRecord> {
  const raw = await channelRecordStatement(db, id).first<Record<string, unknown>>();
  if (!raw) throw notFound("Channel", id);
  return channelRecord(raw);
}

export async function getChannel(db: Database, id: string): Promise<Versioned<Channel>> {
  return toChannel(await getChannelRecord(db, id));
}

/** Channels by id or by number (what a batch of readings names), in one statement. */
export async function channelsByKeys(db: Database, ids: readonly string[], numbers: readonly number[]): Promise<ChannelRecord[]> {
  if (ids.length === 0 && numbers.length === 0) return [];
  const { results } = await db
    .prepare(`${SELECT} WHERE ch.id IN (SELECT value FROM json_each(?1)) OR ch.channel_number IN (SELECT value FROM json_each(?2))`)
    .bind(JSON.stringify([...new Set(ids.map((i) => i.toLowerCase()))]), JSON.stringify([...new Set(numbers)]))
    .all<Record<string, unknown>>();
  return results.map(channelRecord);
}

interface Checked {
  asset: { id: string; kind: string; name: string; plantId: string | null };
  type: CatalogueRow;
  origin: CatalogueRow;
  availability: CatalogueRow;
  unit: string;
}

/** Checks a channel's input against its asset and catalogue; throws one ValidationFailed listing every problem. */
async function check(db: Database, input: ChannelInput, current: ChannelRow | null): Promise<Checked> {
  const problems: FieldProblem[] = [];
  const [asset, entries] = await Promise.all([
    db
      .prepare("SELECT id, kind, name, plant_id FROM assets WHERE id = ?1")
      .bind(input.assetId.toLowerCase())
      .first<{ id: string; kind: string; name: string; plant_id: string | null }>(),
    catalogueRows(db, [input.channelTypeId, input.dataOriginId, input.availabilityId]),
  ]);
  if (!asset) problems.push({ field: "body.assetId", rule: "exists", message: `The asset ${input.assetId} does not exist.` });
  else if (!(CHANNEL_ASSET_KINDS as readonly string[]).includes(asset.kind))
    problems.push({
      field: "body.assetId",
      rule: "assetKind",
      message: `A channel is measured on a plant, main system, equipment or design object, not a ${asset.kind}.`,
    });
  const entry = (id: string, kind: string, field: string, path: string) => {
    const found = entries.get(id.toLowerCase());
    if (!found || found.kind !== kind) problems.push({ field, rule: "exists", message: `${id} is not in ${path}.` });
    return found && found.kind === kind ? found : undefined;
  };
  const type = entry(input.channelTypeId, "channelType", "body.channelTypeId", "GET /ChannelTypes");
  const origin = entry(input.dataOriginId, "dataOrigin", "body.dataOriginId", "GET /DataOrigins");
  const availability = entry(input.availabilityId, "channelAvailability", "body.availabilityId", "GET /ChannelAvailabilities");
  let unit = input.unit ?? current?.unit ?? "";
  if (type) {
    const quantity = storedEnum(QUANTITIES, type.quantity ?? "other", "channel_catalogue.quantity");
    const units = unitsOf(quantity);
    if (input.unit === undefined && (!current || !units.includes(current.unit))) unit = units[0]!;
    if (!units.includes(unit))
      problems.push({ field: "body.unit", rule: "unit", message: `A ${type.name} channel measures in ${units.join(", ")}, not ${unit}.` });
    const thickness = quantity === "thickness";
    for (const field of ["nominalThickness", "minimumThickness"] as const) {
      if (!thickness && input[field] !== null)
        problems.push({
          field: `body.${field}`,
          rule: "thicknessOnly",
          message: `${field} belongs to thickness channels; a ${type.name} channel has none.`,
        });
    }
    if (thickness && input.nominalThickness !== null && input.minimumThickness !== null && input.minimumThickness >= input.nominalThickness)
      problems.push({
        field: "body.minimumThickness",
        rule: "belowNominal",
        message: "The minimum required thickness must be below the nominal thickness.",
      });
  }
  if (type) problems.push(...channelControllerProblems(input.controllers, type.quantity === "thickness"));
  if (current && current.readingCount > 0 && unit !== current.unit)
    problems.push({ field: "body.unit", rule: "fixed", message: `The channel has readings in ${current.unit}; its unit cannot change.` });
  if (problems.length > 0)
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
  await checkControllers(db, input.controllers);
  const plantId = asset!.kind === "plant" ? asset!.id : asset!.plant_id;
  return {
    asset: { id: asset!.id, kind: asset!.kind, name: asset!.name, plantId },
    type: type!,
    origin: origin!,
    availability: availability!,
    unit,
  };
}

function valuesOf(input: ChannelInput, checked: Checked) {
  return {
    name: input.name,
    description: input.description,
    assetId: checked.asset.id,
    assetKind: checked.asset.kind,
    plantId: checked.asset.plantId,
    channelTypeId: input.channelTypeId.toLowerCase(),
    dataOriginId: input.dataOriginId.toLowerCase(),
    availabilityId: input.availabilityId.toLowerCase(),
    unit: checked.unit,
    nominalThickness: input.nominalThickness,
    minimumThickness: input.minimumThickness,
    maxIntervalYears: input.maxIntervalYears,
    controllers: JSON.stringify(input.controllers),
    maxShelveMinutes: input.maxShelveMinutes,
  };
}

/** The channel a write leaves, as GET /Channels/{id} shows it, from the row and what {@link check} read (its event's payload). */
function writtenChannel(row: ChannelRow, checked: Checked): Channel {
  return toChannel({
    row,
    assetName: checked.asset.name,
    typeName: checked.type.name,
    quantity: storedEnum(QUANTITIES, checked.type.quantity ?? "other", "channel_catalogue.quantity"),
    originName: checked.origin.name,
    availabilityName: checked.availability.name,
    acceptsReadings: Boolean(checked.availability.acceptsReadings),
  }).value;
}

const catalogueGone = () =>
  new ApiError("Conflict", "A catalogue entry or the asset the channel names was deleted meanwhile; read them again.");

export async function createChannel(ctx: WriteContext, input: ChannelInput): Promise<Versioned<Channel>> {
  const checked = await check(ctx.db, input, null);
  const id = ctx.uuid();
  const channelNumber = await nextNumber(ctx.db, "channel");
  const row: ChannelRow = {
    id,
    channelNumber,
    ...valuesOf(input, checked),
    analysis: null,
    nextInspectionAt: null,
    alarmState: "normal",
    readingCount: 0,
    lastReadingAt: null,
    lastValue: null,
    seriesVersion: 0,
    etag: newEtagToken(),
    createdAt: ctx.now,
    updatedAt: ctx.now,
    createdBy: ctx.actorId,
  };
  try {
    await ctx.db.batch([
      channelTable.insert(ctx.db, row),
      ...outboxStatements(ctx.db, ctx, {
        entityKind: CHANNEL_EVENT_KIND,
        entityId: id,
        action: "created",
        payload: writtenChannel(row, checked),
      }),
    ]);
  } catch (error) {
    if (isForeignKeyViolation(error)) throw catalogueGone();
    throw error;
  }
  return getChannel(ctx.db, id);
}

export async function updateChannel(ctx: WriteContext, input: ChannelInput & { id: string }): Promise<Versioned<Channel>> {
  return retryWrite(ctx, async () => {
    const current = await getChannelRecord(ctx.db, input.id);
    const expected = assertVersion(ctx, current.row.etag);
    const checked = await check(ctx.db, input, current.row);
    const etag = newEtagToken();
    const values = { ...valuesOf(input, checked), etag, updatedAt: ctx.now };
    const after = writtenChannel({ ...current.row, ...values }, checked);
    try {
      await commitVersioned(ctx, [
        channelTable.update(ctx.db, values, { id: current.row.id, etag: expected }),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: CHANNEL_EVENT_KIND, entityId: current.row.id, action: "updated", payload: after },
          { table: "channels", etag },
        ),
      ]);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw catalogueGone();
      throw error;
    }
    return getChannel(ctx.db, current.row.id);
  });
}

/** Deletes the channel's row (its series is dropped by the caller after, ./routes.ts). */
export async function deleteChannel(ctx: WriteContext, id: string): Promise<ChannelRow> {
  return retryWrite(ctx, async () => {
    const current = await getChannelRecord(ctx.db, id);
    const expected = assertVersion(ctx, current.row.etag);
    await commitVersioned(ctx, [
      channelTable.delete(ctx.db, { id: current.row.id, etag: expected }),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: CHANNEL_EVENT_KIND, entityId: current.row.id, action: "deleted", payload: null },
        "previousChanged",
      ),
    ]);
    return current.row;
  });
}

/** What a write of readings projects onto its channel's row. */
export interface Projection {
  channelId: string;
  version: number;
  readingCount: number;
  last: { ts: number; value: number } | null;
  analysis: ThicknessAnalysis | null;
}

/**
 * The update of a channel's row from its series (the latest reading, the count, the analysis and its
 * next inspection date), applied only when `version` is newer than the one it holds. Its etag changes
 * too: what a client read before the readings is not the channel any more.
 */
export function projectionStatement(db: Database, p: Projection, now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE channels SET reading_count = ?2, last_reading_at = ?3, last_value = ?4, analysis = ?5, next_inspection_at = ?6,
         series_version = ?7, etag = ?8, updated_at = ?9 WHERE id = ?1 AND series_version < ?7`,
    )
    .bind(
      p.channelId,
      p.readingCount,
      p.last ? new Date(p.last.ts).toISOString() : null,
      p.last?.value ?? null,
      p.analysis ? JSON.stringify(p.analysis) : null,
      p.analysis?.nextInspectionDate ?? null,
      p.version,
      newEtagToken(),
      now,
    );
}

/** The analysis event of a channel whose analysis a write changed (written only when its projection was). */
export function analysisEventStatement(
  db: Database,
  ctx: EventContext,
  channelId: string,
  analysis: ThicknessAnalysis | null,
): D1PreparedStatement[] {
  const event: EventInput = { entityKind: "channelAnalysis", entityId: channelId, action: "updated", payload: analysis };
  return guardedOutboxStatements(db, ctx, event, "previousChanged");
}

/**
 * The channel's alarm state from its active alarms (issue 35): `alarm` while one of its controllers'
 * alarms is active. A new version only when the state changes; the alarm's own events tell the change.
 */
export function alarmStateStatement(db: Database, channelId: string, now: string): D1PreparedStatement {
  const state =
    "CASE WHEN EXISTS (SELECT 1 FROM monitor_alarms WHERE source_kind = 'channel' AND monitor_ref = ?1 AND active_key IS NOT NULL) " +
    "THEN 'alarm' ELSE 'normal' END";
  return db
    .prepare(`UPDATE channels SET alarm_state = ${state}, etag = ?2, updated_at = ?3 WHERE id = ?1 AND alarm_state <> ${state}`)
    .bind(channelId, newEtagToken(), now);
}
