/**
 * Readings from a spreadsheet (issue 37): a contractor's thickness survey, one reading a row. A row
 * is the entry `POST /signals` takes (`channelNumber` or `channelId`, `timestamp`, `value`, optional
 * `unit`), checked by the measurements area's own `resolveSignals` (SignalSchema, the timestamp's
 * range, the channel exists, accepts readings, measures in the unit) and written by its `writeGroups`
 * (the channel's series, its projection, the `readings` event, the channel's controllers): nothing here
 * repeats a rule of a reading.
 *
 * Readings are append-only and live in each channel's Durable Object, not D1: a write stores the
 * reading first (idempotent per channel and timestamp: the same value again is a duplicate, ignored),
 * then the row's import_rows entry. A step that stops between the two stores the reading again as a
 * duplicate (nothing changes) and then the entry, so a row's reading is written exactly once either
 * way. A reading is never replaced (a correction is a void): no `id` column.
 *
 * The timestamp column takes ISO 8601 (what an XLSX cell styled as a date reads as, ../xlsx-dates.ts),
 * integer milliseconds, or an Excel date serial typed into a cell not styled as a date (days since
 * 1899-12-30, fractions the time of day, read as UTC). A number with a fraction, or at most 2,958,465
 * (the serial of 9999-12-31), is a serial.
 *
 * The series' binding (SERIES) comes from `cloudflare:workers`' env: the kinds' interface hands a
 * kind the database and a write context, no bindings, and the channels' Durable Objects are the same
 * namespace in a request (an inline dry run) and in the queue's consumer.
 */
import { env } from "cloudflare:workers";
import { channelsByKeys, type ChannelRecord } from "../../measurements/channels/store";
import { checkGroups, resolveSignals, writeGroups, type ChannelGroup } from "../../measurements/readings/record";
import type { Database } from "../../db/statements";
import { isUniqueViolation, type WriteContext } from "../../pkg/db";
import { ApiError } from "../../pkg/errors";
import { PERMISSIONS } from "../../pkg/permissions";
import { platform } from "../../platform/services";
import { cached, type Column, type ImportKind, type Planned, type RowContext } from "./kind";
import { columnOf } from "./mapping";
import { LAST_SERIAL, serialToMs } from "../xlsx-dates";

/** The fields of a `POST /signals` body. */
const FIELDS = ["channelNumber", "channelId", "timestamp", "value", "unit"];

/** Columns of a channel's readings as read (`GET /Channels/{id}/Readings`) that are not imported. */
const READ_ONLY = /^(source|voided(\..*)?)$/;

/** What `event.source` and the series' analysis history say caused the readings. */
const CAUSE = "import";

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** One row: one reading on its channel. */
interface RowPlan {
  group: ChannelGroup;
}

/** A timestamp cell as the request's `timestamp`: an Excel serial becomes milliseconds; other text is the request's to check. */
function timestampOfCell(text: string): number | string | { problem: string } {
  if (/^-?\d+$/.test(text) && Math.abs(Number(text)) > LAST_SERIAL) return Number(text);
  if (!/^\d+(\.\d+)?$/.test(text)) return text;
  const serial = Number(text);
  if (serial >= 60 && serial < 61)
    return { problem: `Serial ${text} is 29 February 1900, a day that does not exist (Excel counts it in error).` };
  return serialToMs(serial) ?? text;
}

/** Channels by id or number, each looked up once for the rows of an import. */
function channelLookup(ctx: RowContext) {
  const one = (key: string, load: () => Promise<ChannelRecord[]>) => cached(ctx, `readings:channel:${key}`, load);
  return async (ids: readonly string[], numbers: readonly number[]): Promise<ChannelRecord[]> => {
    const found = await Promise.all([
      ...ids.map((id) => one(`id:${id.toLowerCase()}`, () => channelsByKeys(ctx.db, [id], []))),
      ...numbers.map((n) => one(`number:${n}`, () => channelsByKeys(ctx.db, [], [n]))),
    ]);
    return found.flat();
  };
}

/** The row's reading (checked as one `POST /signals` body is) or its problems. */
async function planRow(ctx: RowContext, columns: readonly Column[], cells: readonly string[]): Promise<Planned<RowPlan>> {
  const body: Record<string, unknown> = {};
  for (const column of columns) {
    if (column.target === null || !("field" in column.target)) continue;
    const text = (cells[column.index] ?? "").trim();
    if (text === "") continue;
    const field = column.target.field;
    if (field === "timestamp") {
      const timestamp = timestampOfCell(text);
      if (typeof timestamp === "object")
        return { plan: null, problems: [{ column: column.header, field: "body.timestamp", rule: "format", message: timestamp.problem }] };
      body.timestamp = timestamp;
    } else if (field === "channelNumber" || field === "value") body[field] = NUMBER.test(text) ? Number(text) : text;
    else body[field] = text;
  }
  const nowMs = platform().clock.now().getTime();
  const { groups, problems } = await resolveSignals([body], false, nowMs, channelLookup(ctx));
  if (problems.length > 0) return { plan: null, problems: problems.map((p) => ({ ...p, column: columnOf(columns, p.field, []) })) };
  return { plan: { group: groups[0]! }, problems: [] };
}

/** A dry run: the reading against its channel's series (another value stored at its timestamp is a conflict), storing nothing. */
async function checkRow(_db: Database, plan: RowPlan): Promise<void> {
  await checkGroups(env, [plan.group], CAUSE, platform().clock.now().getTime(), false);
}

/** The row's import_rows entry, after its readings: a second entry for its key (another run wrote it) is a conflict. */
async function writeEntries(db: Database, extra: readonly D1PreparedStatement[]): Promise<void> {
  if (extra.length === 0) return;
  try {
    await db.batch([...extra]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError("Conflict", "Another run of the import wrote this row first.");
    throw error;
  }
}

/** Writes the row's reading (idempotent), then its entry; answers the batch id of the `readings` event that recorded it. */
async function writeRow(ctx: WriteContext, plan: RowPlan, extra: readonly D1PreparedStatement[]): Promise<string> {
  const recorded = await writeGroups(env, ctx, [plan.group], CAUSE, false);
  await writeEntries(ctx.db, extra);
  return recorded.batchId;
}

/** The planned rows at `indexes` as readings per channel, each reading's index its row's position (as a bulk request's entries). */
function groupsOf(rows: readonly { plan: RowPlan }[], indexes: readonly number[]): ChannelGroup[] {
  const groups = new Map<string, ChannelGroup>();
  for (const i of indexes) {
    const { channel, readings } = rows[i]!.plan.group;
    let group = groups.get(channel.row.id);
    if (!group) groups.set(channel.row.id, (group = { channel, readings: [] }));
    group.readings.push({ ...readings[0]!, index: i });
  }
  return [...groups.values()];
}

/** The entries a 409 of a bulk write names (`body.{index}.timestamp`). */
const conflictingIndexes = (error: ApiError) =>
  new Set((error.errors ?? []).flatMap((p) => /^body\.(\d+)\./.exec(p.field)?.slice(1).map(Number) ?? []));

/** A row's own write's refusal as its answer (a problem of that row); a fault is thrown. */
async function answerOf(write: () => Promise<string>): Promise<string | Error> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return error;
    throw error;
  }
}

type Row = { plan: RowPlan; extra: readonly D1PreparedStatement[] };

/**
 * A chunk's rows together: their readings as one bulk write (one series write per channel, one
 * projection batch and one `readings` event), then their entries in one batch. A row whose reading
 * conflicts with a stored one, or whose channel and timestamp an earlier row of the chunk has, is then
 * written alone, as `write` writes it: the same value is a duplicate, another its row's conflict.
 */
async function writeRows(ctx: WriteContext, rows: readonly Row[]): Promise<(string | Error)[]> {
  const answers = new Map<number, string | Error>();
  const alone: number[] = [];
  let together: number[] = [];
  const seen = new Set<string>();
  rows.forEach(({ plan }, i) => {
    const key = `${plan.group.channel.row.id}:${plan.group.readings[0]!.ts}`;
    if (seen.has(key)) alone.push(i);
    else {
      seen.add(key);
      together.push(i);
    }
  });
  // A conflict refuses the bulk write (or its channel's part); its readings are left to their rows alone and the rest written again.
  while (together.length > 0) {
    try {
      const { batchId } = await writeGroups(env, ctx, groupsOf(rows, together), CAUSE, true);
      try {
        await ctx.db.batch(together.flatMap((i) => rows[i]!.extra));
        for (const i of together) answers.set(i, batchId);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // Another run wrote an entry of the chunk first: each entry alone, so that row is the conflict and the others are written.
        for (const i of together) answers.set(i, await answerOf(() => writeEntries(ctx.db, rows[i]!.extra).then(() => batchId)));
      }
      break;
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "Conflict")) throw error;
      const conflicting = conflictingIndexes(error);
      if (!together.some((i) => conflicting.has(i))) throw error;
      alone.push(...together.filter((i) => conflicting.has(i)));
      together = together.filter((i) => !conflicting.has(i));
    }
  }
  for (const i of alone.sort((a, b) => a - b)) answers.set(i, await answerOf(() => writeRow(ctx, rows[i]!.plan, rows[i]!.extra)));
  return rows.map((_, i) => answers.get(i)!);
}

export const readings: ImportKind<RowPlan> = {
  noun: "reading",
  permissions: { read: PERMISSIONS.measurementsRead, write: PERMISSIONS.readingsWrite },
  fields: FIELDS,
  aliases: {},
  readOnly: READ_ONLY,
  propertyNames: () => Promise.resolve(new Set()),
  plan: planRow,
  existingId: () => null,
  propertiesOf: () => [],
  check: checkRow,
  write: writeRow,
  writeMany: writeRows,
};
