/**
 * Recording readings: checked entry by entry (every problem names its entry's index and rule, and a
 * refused request stores nothing), written to each channel's series, then projected onto the
 * channels' rows with their events in one D1 batch: one `readings` event per request however many
 * readings it carried, and a `channelAnalysis` event per thickness channel whose analysis changed.
 *
 * A request that spans channels is checked by every series first (a dry run, in parallel), then
 * written: a conflict found in the check refuses it whole. Each series' write is one transaction;
 * across channels, a conflict that appears between the check and the write (another writer, the same
 * timestamp, another value) refuses that channel's part only, and the answer says so (409).
 */
import type { Bindings } from "../../env";
import { outboxStatements, type EventContext } from "../../events/outbox";
import { ApiError, type FieldProblem } from "../../pkg/errors";
import { parseDateValue } from "../../pkg/query";
import type { IncomingReading, WriteOutcome } from "../../../durable-objects/channel-series";
import type { ThicknessAnalysis } from "../analysis";
import { evaluateChannels } from "../channels/alarms";
import { analysisEventStatement, channelsByKeys, projectionStatement, type ChannelRecord } from "../channels/store";
import { seriesOf, settingsOf } from "../series";
import { EARLIEST_MS, FUTURE_TOLERANCE_MS, MAX_READINGS_PER_REQUEST, SignalSchema } from "./schema";

/** Problems listed in one answer at most (the count says how many there were). */
const MAX_PROBLEMS = 200;

interface Parsed {
  index: number;
  channelNumber?: number;
  channelId?: string;
  ts: number;
  value: number;
  unit?: string;
}

export interface ChannelRecorded {
  channelId: string;
  channelNumber: number;
  accepted: number;
  duplicates: number;
  readingCount: number;
  analysis: ThicknessAnalysis | null;
}

/** The readings of one request for one channel. */
export interface ChannelGroup {
  channel: ChannelRecord;
  readings: IncomingReading[];
}

export interface Recorded {
  batchId: string;
  accepted: number;
  duplicates: number;
  channels: ChannelRecorded[];
}

/** A timestamp as sent: integer milliseconds, or an ISO 8601 date-time. */
export function parseTimestamp(raw: unknown): number | undefined {
  if (typeof raw === "number") return Number.isInteger(raw) ? raw : undefined;
  if (typeof raw === "string") {
    if (/^-?\d+$/.test(raw.trim())) return Number(raw.trim());
    return parseDateValue(raw);
  }
  return undefined;
}

function refuse(problems: FieldProblem[], what: string): never {
  const shown = problems.slice(0, MAX_PROBLEMS);
  const more = problems.length > shown.length ? ` (the first ${MAX_PROBLEMS} of ${problems.length} listed)` : "";
  throw new ApiError(
    "ValidationFailed",
    `${problems.length} ${what}${more}; nothing was stored. ${shown[0]!.field}: ${shown[0]!.message}`,
    {
      errors: shown,
    },
  );
}

/** Checks the entries' shapes and values; `prefix` is `body` (one signal) or `body.{i}` per entry. */
function parseEntries(entries: readonly unknown[], bulk: boolean, nowMs: number): { parsed: Parsed[]; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const parsed: Parsed[] = [];
  const latest = nowMs + FUTURE_TOLERANCE_MS;
  entries.forEach((entry, index) => {
    const at = (field: string) => (bulk ? `body.${index}.${field}` : `body.${field}`);
    const problem = (field: string, rule: string, message: string) =>
      problems.push({ field: at(field), rule, message: bulk ? `Entry ${index}: ${message}` : message });
    const shape = SignalSchema.strict().safeParse(entry);
    if (!shape.success) {
      for (const issue of shape.error.issues) {
        const field = issue.path.join(".") || "";
        const rule = issue.code === "unrecognized_keys" ? "unknownField" : issue.code === "invalid_type" ? "type" : issue.code;
        problem(field || "value", rule, issue.message);
      }
      return;
    }
    const s = shape.data;
    if (!Number.isFinite(s.value)) problem("value", "finite", "The value must be a finite number (no NaN or infinity).");
    if (s.channelNumber === undefined && s.channelId === undefined)
      problem("channelNumber", "required", "Name the channel: channelNumber or channelId.");
    const ts = parseTimestamp(s.timestamp);
    if (ts === undefined)
      problem("timestamp", "format", `'${String(s.timestamp)}' is neither integer milliseconds nor an ISO 8601 date-time.`);
    else if (ts < EARLIEST_MS) problem("timestamp", "range", `${new Date(ts).toISOString()} is before 1900.`);
    else if (ts > latest) problem("timestamp", "future", `${new Date(ts).toISOString()} is more than a day ahead of the service's clock.`);
    else if (Number.isFinite(s.value))
      parsed.push({ index, channelNumber: s.channelNumber, channelId: s.channelId?.toLowerCase(), ts, value: s.value, unit: s.unit });
  });
  return { parsed, problems };
}

/** Checks the entries against their channels: they exist, accept readings, and the unit (when sent) is theirs. */
function resolve(parsed: readonly Parsed[], records: readonly ChannelRecord[], bulk: boolean) {
  const byId = new Map(records.map((r) => [r.row.id, r]));
  const byNumber = new Map(records.map((r) => [r.row.channelNumber, r]));
  const problems: FieldProblem[] = [];
  const groups = new Map<string, { channel: ChannelRecord; readings: IncomingReading[] }>();
  for (const p of parsed) {
    const at = (field: string) => (bulk ? `body.${p.index}.${field}` : `body.${field}`);
    const say = (message: string) => (bulk ? `Entry ${p.index}: ${message}` : message);
    const channel = p.channelId !== undefined ? byId.get(p.channelId) : byNumber.get(p.channelNumber!);
    if (!channel) {
      const field = p.channelId !== undefined ? "channelId" : "channelNumber";
      problems.push({ field: at(field), rule: "exists", message: say(`No channel ${p.channelId ?? p.channelNumber}.`) });
      continue;
    }
    if (p.channelId !== undefined && p.channelNumber !== undefined && channel.row.channelNumber !== p.channelNumber) {
      problems.push({
        field: at("channelNumber"),
        rule: "conflict",
        message: say(`Channel ${p.channelId} is number ${channel.row.channelNumber}, not ${p.channelNumber}.`),
      });
      continue;
    }
    if (!channel.acceptsReadings) {
      problems.push({
        field: at(p.channelId !== undefined ? "channelId" : "channelNumber"),
        rule: "notWritable",
        message: say(`Channel ${channel.row.channelNumber} is ${channel.availabilityName}: it accepts no readings.`),
      });
      continue;
    }
    if (p.unit !== undefined && p.unit !== channel.row.unit) {
      problems.push({
        field: at("unit"),
        rule: "unit",
        message: say(`Channel ${channel.row.channelNumber} measures in ${channel.row.unit}, not ${p.unit}.`),
      });
      continue;
    }
    let group = groups.get(channel.row.id);
    if (!group) groups.set(channel.row.id, (group = { channel, readings: [] }));
    group.readings.push({ index: p.index, ts: p.ts, value: p.value, source: null });
  }
  // Two entries of one request for one channel and timestamp: the same value once, another a conflict.
  for (const group of groups.values()) {
    const seen = new Map<number, IncomingReading>();
    const kept: IncomingReading[] = [];
    for (const r of group.readings) {
      const first = seen.get(r.ts);
      if (!first) {
        seen.set(r.ts, r);
        kept.push(r);
      } else if (first.value !== r.value)
        problems.push({
          field: bulk ? `body.${r.index}.timestamp` : "body.timestamp",
          rule: "duplicateTimestamp",
          message:
            `Entry ${r.index}: entry ${first.index} gives channel ${group.channel.row.channelNumber} another value at the ` +
            "same timestamp.",
        });
    }
    group.readings = kept;
  }
  return { groups: [...groups.values()], problems };
}

function conflictProblems(group: { channel: ChannelRecord }, outcome: WriteOutcome, bulk: boolean): FieldProblem[] {
  return outcome.conflicts.map((c) => ({
    field: bulk ? `body.${c.index}.timestamp` : "body.timestamp",
    rule: "conflict",
    message:
      `${bulk ? `Entry ${c.index}: c` : "C"}hannel ${group.channel.row.channelNumber} already has ${c.existing} at ` +
      `${new Date(c.ts).toISOString()}; ` +
      "readings are never edited: void that one first (POST /Channels/{id}/Readings/{timestamp}/Void).",
  }));
}

export interface RecordContext extends EventContext {
  db: Bindings["DB"];
}

/** Records readings sent by a client (`POST /signals` and `/signals/bulk`). */
export async function recordSignals(env: Bindings, ctx: RecordContext, body: unknown, bulk: boolean): Promise<Recorded> {
  const entries = bulk ? (body as unknown[]) : [body];
  if (entries.length > MAX_READINGS_PER_REQUEST)
    throw new ApiError(
      "PayloadTooLarge",
      `${entries.length} readings in one request; at most ${MAX_READINGS_PER_REQUEST} are accepted. Send them in parts.`,
    );
  const { groups, problems } = await resolveSignals(entries, bulk, Date.parse(ctx.now), (ids, numbers) =>
    channelsByKeys(ctx.db, ids, numbers),
  );
  if (problems.length > 0) refuse(problems, "entries are not valid readings");
  return writeGroups(env, ctx, groups, "signals", bulk);
}

/** Channels by id or by number: {@link channelsByKeys}, or a caller's cache of it. */
export type ChannelLookup = (ids: readonly string[], numbers: readonly number[]) => Promise<ChannelRecord[]>;

/**
 * Checks entries as `POST /signals` (`bulk` false) or `/signals/bulk` checks them, writing nothing:
 * their shapes and values, then their channels (they exist, accept readings, the unit is theirs). Answers
 * the readings grouped per channel for {@link writeGroups}, or every problem (sorted by entry).
 */
export async function resolveSignals(
  entries: readonly unknown[],
  bulk: boolean,
  nowMs: number,
  channels: ChannelLookup,
): Promise<{ groups: ChannelGroup[]; problems: FieldProblem[] }> {
  const { parsed, problems } = parseEntries(entries, bulk, nowMs);
  const records = await channels(
    parsed.flatMap((p) => (p.channelId !== undefined ? [p.channelId] : [])),
    parsed.flatMap((p) => (p.channelId === undefined && p.channelNumber !== undefined ? [p.channelNumber] : [])),
  );
  const resolved = resolve(parsed, records, bulk);
  problems.push(...resolved.problems);
  return { groups: resolved.groups, problems: problems.sort((a, b) => fieldIndex(a) - fieldIndex(b)) };
}

const fieldIndex = (p: FieldProblem) => Number(/^body\.(\d+)/.exec(p.field)?.[1] ?? 0);

/** Checks grouped readings against their series (a dry run of each): another value stored at a timestamp refuses them all (409). */
export async function checkGroups(
  env: Pick<Bindings, "SERIES">,
  groups: readonly ChannelGroup[],
  cause: string,
  nowMs: number,
  bulk: boolean,
): Promise<void> {
  const checks = await Promise.all(
    groups.map((g) => seriesOf(env, g.channel.row.id).record(g.readings, settingsOf(g.channel), cause, nowMs, true)),
  );
  const conflicts = checks.flatMap((outcome, i) => conflictProblems(groups[i]!, outcome, bulk));
  if (conflicts.length > 0)
    throw new ApiError("Conflict", `${conflicts.length} reading(s) conflict with stored ones; nothing was stored.`, {
      errors: conflicts.slice(0, MAX_PROBLEMS),
    });
}

/** Writes grouped readings to their series and projects them (shared with the inspection feed and the imports). */
export async function writeGroups(
  env: Pick<Bindings, "SERIES">,
  ctx: RecordContext,
  groups: readonly ChannelGroup[],
  cause: string,
  bulk: boolean,
): Promise<Recorded> {
  const nowMs = Date.parse(ctx.now);
  const batchId = ctx.uuid();
  if (groups.length > 1) await checkGroups(env, groups, cause, nowMs, bulk);
  const outcomes = await Promise.all(
    groups.map((g) => seriesOf(env, g.channel.row.id).record(g.readings, settingsOf(g.channel), `${cause}:${batchId}`, nowMs)),
  );
  const conflicts = outcomes.flatMap((outcome, i) => conflictProblems(groups[i]!, outcome, bulk));
  const written = groups.map((group, i) => ({ group, outcome: outcomes[i]! })).filter((w) => w.outcome.ok);
  await project(ctx, batchId, written, cause);
  // The channels' controllers, on what the batch left (duplicates too: a retried request evaluates what a failed one did not).
  await evaluateChannels(
    ctx.db,
    ctx,
    batchId,
    written.map(({ group, outcome }) => ({
      channel: group.channel,
      values: { last: outcome.last, batch: outcome.inserted > 0 ? outcome.batch : null, analysis: outcome.analysis },
    })),
  );
  if (conflicts.length > 0) {
    const stored = written.filter((w) => w.outcome.inserted > 0).map((w) => w.group.channel.row.channelNumber);
    throw new ApiError(
      "Conflict",
      `${conflicts.length} reading(s) conflict with stored ones` +
        (stored.length > 0 ? `; channels ${stored.join(", ")} were written meanwhile.` : "; nothing was stored."),
      { errors: conflicts.slice(0, MAX_PROBLEMS) },
    );
  }
  return {
    batchId,
    accepted: written.reduce((n, w) => n + w.outcome.inserted, 0),
    duplicates: written.reduce((n, w) => n + w.outcome.duplicates, 0),
    channels: written.map((w) => ({
      channelId: w.group.channel.row.id,
      channelNumber: w.group.channel.row.channelNumber,
      accepted: w.outcome.inserted,
      duplicates: w.outcome.duplicates,
      readingCount: w.outcome.readingCount,
      analysis: w.outcome.analysis,
    })),
  };
}

/** The channels' rows from their series, the analysis events and the one `readings` event, in one batch. */
export async function project(
  ctx: RecordContext,
  batchId: string,
  written: readonly {
    group: { channel: ChannelRecord };
    outcome: Pick<WriteOutcome, "version" | "readingCount" | "last" | "analysis" | "analysisChanged" | "batch" | "inserted">;
  }[],
  cause: string,
): Promise<void> {
  const changed = written.filter((w) => w.outcome.inserted > 0);
  if (changed.length === 0) return;
  const statements: D1PreparedStatement[] = [];
  for (const { group, outcome } of changed) {
    statements.push(
      projectionStatement(
        ctx.db,
        {
          channelId: group.channel.row.id,
          version: outcome.version,
          readingCount: outcome.readingCount,
          last: outcome.last,
          analysis: outcome.analysis,
        },
        ctx.now,
      ),
    );
    if (outcome.analysisChanged) statements.push(...analysisEventStatement(ctx.db, ctx, group.channel.row.id, outcome.analysis));
  }
  statements.push(
    ...outboxStatements(ctx.db, ctx, {
      entityKind: "readings",
      entityId: batchId,
      action: "recorded",
      payload: {
        batchId,
        source: cause,
        channels: changed.map(({ group, outcome }) => ({
          channelId: group.channel.row.id,
          channelNumber: group.channel.row.channelNumber,
          count: outcome.batch?.count ?? outcome.inserted,
          first: outcome.batch?.first ?? null,
          last: outcome.batch?.last ?? null,
          min: outcome.batch?.min ?? null,
          max: outcome.batch?.max ?? null,
          lastValue: outcome.batch?.lastValue ?? null,
        })),
      },
    }),
  );
  await ctx.db.batch(statements);
}
