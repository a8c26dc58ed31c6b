/**
 * Working an alarm (issue 33): acknowledge, assign and unassign, comment, shelve and unshelve. Each is
 * a write on the resource contract: read the alarm, check the caller's If-Match, write the new version
 * guarded on the version read, with its history entry (who, when, comment) and its event (`alarm`
 * `acknowledged`, `assigned`, ...) guarded on the version written, in one batch; a write that lost a race
 * is read and applied again (retryWrite). Asking for what already holds (acknowledging an acknowledged
 * alarm, unshelving one that is not shelved) changes nothing and answers the alarm as it is.
 */
import type { Database } from "../../db/statements";
import type { EventAction } from "../../events/kinds";
import { assertStatement, conflict, isAssertionFailure, newEtagToken, type WriteContext } from "../../pkg/db";
import { invalid, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { assertVersion, commitVersioned, retryWrite, type Versioned } from "../../pkg/resource";
import { findUser } from "../../users/store";
import { prepareRelease } from "./release";
import type { AlarmWithHistory } from "./schema";
import {
  alarmsStatement,
  changeAlarmStatement,
  latestHistoryStatements,
  minutesAfter,
  newerAlarmStatement,
  NOT_SHELVED,
  shelvedOfKeyStatement,
  versionedEventsStatements,
  versionedHistoryStatements,
  type AlarmChange,
  type HistoryValues,
} from "./store";
import { alarmRecord, sourceOfRecord, toAlarm, toAlarmEvent, type AlarmRecord } from "./view";

/** How many of its latest history entries GET /Alarms/{id} shows (GET /Alarms/{id}/History pages them all). */
export const HISTORY_SHOWN = 100;

async function findRecord(db: Database, id: string): Promise<AlarmRecord | null> {
  const raw = await alarmsStatement(db, [id]).first<Record<string, unknown>>();
  return raw ? alarmRecord(raw) : null;
}

export async function readRecord(db: Database, id: string): Promise<AlarmRecord> {
  const record = await findRecord(db, id);
  if (!record) throw notFound("Alarm", id);
  return record;
}

/** GET /Alarms/{id}: the alarm with its latest history (oldest first) and its version. */
export async function getAlarm(db: Database, id: string): Promise<Versioned<AlarmWithHistory>> {
  const [alarm, history, count] = await db.batch<Record<string, unknown>>([
    alarmsStatement(db, [id]),
    ...latestHistoryStatements(db, id, HISTORY_SHOWN),
  ]);
  const raw = alarm?.results[0];
  if (!raw) throw notFound("Alarm", id);
  const record = alarmRecord(raw);
  return {
    value: {
      ...toAlarm(record),
      history: (history?.results ?? []).map(toAlarmEvent).reverse(),
      historyCount: Number(count?.results[0]?.n ?? 0),
    },
    etag: record.row.etag,
  };
}

/** What a person's action writes: the alarm's change, and what its history entry and event say. */
interface Decision {
  action: EventAction & ("acknowledged" | "assigned" | "unassigned" | "commented" | "shelved");
  change: AlarmChange;
  comment: string | null;
  details: Record<string, unknown> | null;
}

const actorOf = (ctx: WriteContext) => (ctx.actorId === null ? null : { id: ctx.actorId, name: ctx.actorName });

/** An event's payload: the alarm as it is after the action, and who did what. */
function actionPayload(ctx: WriteContext, record: AlarmRecord, comment: string | null, details: Record<string, unknown> | null) {
  return { ...toAlarm(record), at: ctx.now, by: actorOf(ctx), comment, ...(details ? { details } : {}) };
}

function historyEntry(ctx: WriteContext, alarm: AlarmRecord["row"], decided: Pick<Decision, "comment" | "details">, action: string) {
  const entry: Omit<HistoryValues, "monitorJobId" | "conditions"> = {
    id: ctx.uuid(),
    alarmId: alarm.id,
    monitorRef: alarm.monitorRef,
    itemId: alarm.itemId,
    controller: alarm.controller,
    action,
    actorId: ctx.actorId,
    actorName: ctx.actorName,
    comment: decided.comment,
    details: decided.details ? JSON.stringify(decided.details) : null,
    recordedAt: ctx.now,
  };
  return entry;
}

/** Applies a person's action to alarm `id`: `decide` says what it changes, or null when it already holds. */
async function act(
  ctx: WriteContext,
  id: string,
  decide: (record: AlarmRecord) => Promise<Decision | null> | Decision | null,
): Promise<Versioned<AlarmWithHistory>> {
  return retryWrite(ctx, async () => {
    const record = await readRecord(ctx.db, id);
    const decided = await decide(record);
    if (!decided) return getAlarm(ctx.db, id);
    const version = assertVersion(ctx, record.row.etag);
    const etag = newEtagToken();
    const after: AlarmRecord = { ...record, row: { ...record.row, ...decided.change, etag, updatedAt: ctx.now } };
    await commitVersioned(ctx, [
      changeAlarmStatement(ctx.db, { id, version }, decided.change, etag, ctx.now),
      ...versionedHistoryStatements(ctx.db, [{ etag, entry: historyEntry(ctx, record.row, decided, decided.action) }]),
      ...versionedEventsStatements(ctx.db, ctx, decided.action, [
        { id, etag, payload: JSON.stringify(actionPayload(ctx, after, decided.comment, decided.details)) },
      ]),
    ]);
    return getAlarm(ctx.db, id);
  });
}

/** Acknowledges an alarm, active or cleared; its escalation stops. Acknowledging it again changes nothing. */
export function acknowledgeAlarm(ctx: WriteContext, id: string, comment: string | null) {
  return act(ctx, id, ({ row }) =>
    row.acknowledgedAt !== null
      ? null
      : {
          action: "acknowledged",
          change: {
            acknowledgedAt: ctx.now,
            acknowledgedById: ctx.actorId,
            acknowledgedByName: ctx.actorName,
            acknowledgedComment: comment,
            escalateAt: null,
          },
          comment,
          details: null,
        },
  );
}

/** Assigns an alarm to a user of the directory (400 naming body.userId when there is none such). */
export function assignAlarm(ctx: WriteContext, id: string, userId: string, comment: string | null) {
  return act(ctx, id, async ({ row }) => {
    const user = await findUser(ctx.db, userId);
    if (!user) throw invalid("body.userId", "exists", `There is no user ${userId} in the directory (GET /Users).`);
    if (row.assigneeId === user.id) return null;
    return {
      action: "assigned",
      change: { assigneeId: user.id, assigneeName: user.name, assignedAt: ctx.now },
      comment,
      details: {
        assignee: { id: user.id, name: user.name },
        previous: row.assigneeId === null ? null : { id: row.assigneeId, name: row.assigneeName },
      },
    };
  });
}

export function unassignAlarm(ctx: WriteContext, id: string, comment: string | null) {
  return act(ctx, id, ({ row }) =>
    row.assigneeId === null
      ? null
      : {
          action: "unassigned",
          change: { assigneeId: null, assigneeName: null, assignedAt: null },
          comment,
          details: { previous: { id: row.assigneeId, name: row.assigneeName } },
        },
  );
}

/** A comment in the alarm's thread (its history), a new version of the alarm. */
export function commentAlarm(ctx: WriteContext, id: string, text: string) {
  return act(ctx, id, () => ({ action: "commented", change: {}, comment: text, details: null }));
}

export interface ShelveInput {
  until?: string | undefined;
  durationMinutes?: number | undefined;
  oneShot?: boolean | undefined;
  comment?: string | undefined;
}

/** Until when a shelving asked now lasts: checked against the monitor's maximum (400s naming the field). */
function shelvedUntil(input: ShelveInput, record: AlarmRecord, now: string): string {
  const max = record.maxShelveMinutes;
  const latest = minutesAfter(now, max);
  const { source } = sourceOfRecord(record);
  const limit = `${max} minutes (until ${latest}), ${source} ${record.sourceNumber}'s maxShelveMinutes`;
  if (input.until !== undefined && input.durationMinutes !== undefined)
    throw invalid("body.durationMinutes", "conflict", "Send until or durationMinutes, not both: they both say how long.");
  if (input.durationMinutes !== undefined) {
    if (input.durationMinutes > max)
      throw invalid(
        "body.durationMinutes",
        "maxShelveDuration",
        `durationMinutes is ${input.durationMinutes}; an alarm is shelved at most ${limit}.`,
      );
    return minutesAfter(now, input.durationMinutes);
  }
  if (input.until !== undefined) {
    const until = new Date(input.until);
    if (until.getTime() <= Date.parse(now))
      throw invalid("body.until", "future", `until (${until.toISOString()}) is not in the future: it is ${now} now.`);
    if (until.toISOString() > latest)
      throw invalid("body.until", "maxShelveDuration", `until is ${until.toISOString()}; an alarm is shelved at most ${limit}.`);
    return until.toISOString();
  }
  if (input.oneShot) return latest;
  throw invalid("body.until", "required", "until (or durationMinutes) is required: how long the alarm is shelved; or oneShot true.");
}

/**
 * Shelves an alarm: timed (until a time), or one-shot (until it clears), never beyond the monitor's
 * maximum. Its escalations are held meanwhile, and while a timed shelving lasts, an alarm its
 * controller enters again for the item is held too. Shelving again replaces the shelving.
 */
export function shelveAlarm(ctx: WriteContext, id: string, input: ShelveInput) {
  return act(ctx, id, async (record) => {
    const { row } = record;
    const until = shelvedUntil(input, record, ctx.now);
    if (input.oneShot && row.activeKey === null)
      throw conflict(`Alarm ${id} has cleared: a one-shot shelving lasts until the alarm clears. Shelve it until a time instead.`);
    if (row.activeKey === null) {
      const newer = await newerAlarmStatement(ctx.db, row.itemId, row.controller, row.enteredAt, row.id).first<{ id: string }>();
      if (newer)
        throw conflict(`Alarm ${id} has cleared, and its controller entered a newer alarm for the item (${newer.id}): shelve that one.`);
    }
    const mode = input.oneShot ? "oneShot" : "timed";
    const comment = input.comment ?? null;
    return {
      action: "shelved",
      change: {
        shelveMode: mode,
        shelvedAt: ctx.now,
        shelvedUntil: until,
        shelvedById: ctx.actorId,
        shelvedByName: ctx.actorName,
        shelveComment: comment,
      },
      comment,
      details: { mode, until },
    };
  });
}

/**
 * Unshelves an alarm, and with it every alarm of its controller and item that carries a shelving (the
 * alarms entered again while it was shelved): each held one that is still active is released (its
 * actions run, its `entered` event is written). Unshelving an alarm that is not shelved changes nothing.
 */
export function unshelveAlarm(ctx: WriteContext, id: string, comment: string | null): Promise<Versioned<AlarmWithHistory>> {
  return retryWrite(ctx, async () => {
    const record = await readRecord(ctx.db, id);
    if (record.row.shelveMode === null) return getAlarm(ctx.db, id);
    assertVersion(ctx, record.row.etag);
    const { results } = await shelvedOfKeyStatement(ctx.db, record.row.itemId, record.row.controller).all<Record<string, unknown>>();
    const records = results.map(alarmRecord);
    if (!records.some((r) => r.row.id === id)) records.push(record);
    const statements: D1PreparedStatement[] = [];
    const checks: D1PreparedStatement[] = [];
    for (const r of records) {
      // Every alarm changed here is as read, or nothing is written (its release's actions are not guarded themselves).
      checks.push(assertStatement(ctx.db, "EXISTS (SELECT 1 FROM monitor_alarms WHERE id = ?1 AND etag = ?2)", r.row.id, r.row.etag));
      const etag = newEtagToken();
      const release = r.row.held && r.row.activeKey !== null ? await prepareRelease(ctx.db, ctx, ctx.actorName, r, etag) : null;
      const change: AlarmChange = { ...NOT_SHELVED, ...(release?.change ?? {}) };
      const after: AlarmRecord = { ...r, row: { ...r.row, ...change, etag, updatedAt: ctx.now } };
      const also = r.row.id === id ? null : `Unshelved with alarm ${id} of the same controller and item.`;
      const said = { comment: [comment, also].filter(Boolean).join(" ") || null, details: { previous: shelvingOf(r) } };
      statements.push(
        changeAlarmStatement(ctx.db, { id: r.row.id, version: r.row.etag }, change, etag, ctx.now),
        ...versionedHistoryStatements(ctx.db, [{ etag, entry: historyEntry(ctx, r.row, said, "unshelved") }]),
        // A held alarm that cleared while shelved was never announced: its unshelving is not either, unless a person asked for it.
        ...(r.row.held && !release && r.row.id !== id
          ? []
          : versionedEventsStatements(ctx.db, ctx, "unshelved", [
              { id: r.row.id, etag, payload: JSON.stringify(actionPayload(ctx, after, said.comment, said.details)) },
            ])),
        ...(release?.statements ?? []),
      );
    }
    try {
      await ctx.db.batch([...checks, ...statements]);
    } catch (error) {
      // Another writer changed one of the alarms since they were read: read again (retryWrite), or 412 with If-Match.
      if (isAssertionFailure(error)) throw preconditionFailed();
      throw error;
    }
    return getAlarm(ctx.db, id);
  });
}

const shelvingOf = (r: AlarmRecord) => ({
  mode: r.row.shelveMode,
  until: r.row.shelvedUntil,
  by: r.row.shelvedById === null ? null : { id: r.row.shelvedById, name: r.row.shelvedByName },
});
