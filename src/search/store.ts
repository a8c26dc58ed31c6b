/**
 * Search indices in D1: the rows, their synchronisation outcome and logs. Documents are in each
 * index's SearchIndex Durable Object (durable-objects/search-index.ts).
 */
import { platform } from "../platform/services";
import { tableStatements, type Database } from "../db/statements";
import { searchIndices } from "../db/schema";
import { nameKey } from "../pkg/unicode";
import type { Bindings } from "../env";
import { outboxStatements, guardedOutboxStatements } from "../events/outbox";
import { conflict, isUniqueViolation, newEtagToken, parseJson, type WriteContext } from "../pkg/db";
import { notFound } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import type { Principal } from "../pkg/auth";
import { PERMISSIONS } from "../pkg/permissions";
import { scheduleStatement, type ScheduleRule } from "../pkg/schedule";
import type { Mapping } from "./mapping";
import { standardIndex } from "./standard";
import { assertVersion } from "../pkg/resource";

export const INDEX_KIND = "searchIndex";
export const SEARCH_SCHEDULE_KIND = "search-index";

export interface IndexRow {
  id: string;
  name: string;
  display_name: string;
  description: string | null;
  type: "standard" | "custom";
  owner_id: string;
  owner_name: string | null;
  trigger_schedule: string | null;
  mapping: string | null;
  library: string | null;
  library_file_name: string | null;
  grant_permissions: string | null;
  status: string;
  document_count: number;
  last_sync: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  /** The next scheduled synchronisation (custom: triggerSchedule; standard: daily). */
  next_run_at?: string | null;
}

export interface SyncOutcome {
  syncId: string;
  status: "Succeeded" | "Failed";
  message: string;
  documents: number;
  reason: string;
  startedAt: string;
  endedAt: string;
}

export const INDEX_COLUMNS =
  "id, name, display_name, description, type, owner_id, owner_name, trigger_schedule, mapping, library_file_name, " +
  "grant_permissions, status, document_count, last_sync, etag, created_at, updated_at, created_by, " +
  "(SELECT next_run_at FROM schedules WHERE kind = 'search-index' AND owner_id = search_indices.id) AS next_run_at";

export async function readIndexRow(db: Database, id: string): Promise<IndexRow | null> {
  return db.prepare(`SELECT ${INDEX_COLUMNS}, library FROM search_indices WHERE id = ?1`).bind(id).first<IndexRow>();
}

export async function readIndexByName(db: Database, name: string): Promise<IndexRow | null> {
  return db.prepare(`SELECT ${INDEX_COLUMNS}, library FROM search_indices WHERE name_key = ?1`).bind(nameKey(name)).first<IndexRow>();
}

/** The mapping an index searches with: the standard one, or the one its library last returned. */
export function mappingOf(row: Pick<IndexRow, "id" | "mapping">): Mapping | null {
  return standardIndex(row.id)?.mapping ?? parseJson<Mapping>(row.mapping);
}

/**
 * Who sees an index: every holder of index_read_owned sees the standard indices (their documents are
 * filtered by the resources' own read permissions) and the custom indices they own; index_read_all
 * also sees everyone else's custom indices. Version 1.0 of the search API knows standard indices only.
 */
export function maySeeIndex(principal: Principal, row: Pick<IndexRow, "type" | "owner_id">, apiVersion: string): boolean {
  if (row.type === "custom" && apiVersion === "1.0") return false;
  return row.type === "standard" || row.owner_id === principal.id || principal.permissions.has(PERMISSIONS.indexReadAll);
}

/** Changing an index (owner, file, schedule, deletion, resynchronisation): its owner with index_write, or an index_admin. */
export function mayChangeIndex(principal: Principal, row: Pick<IndexRow, "owner_id">): boolean {
  return (
    principal.permissions.has(PERMISSIONS.indexAdmin) ||
    (row.owner_id === principal.id && principal.permissions.has(PERMISSIONS.indexWrite))
  );
}

/** Reads an index the caller may see, or 404 (an index you may not see does not exist for you). */
export async function visibleIndex(
  db: Database,
  principal: Principal,
  idOrName: { id: string } | { name: string },
  apiVersion: string,
): Promise<IndexRow> {
  const row = "id" in idOrName ? await readIndexRow(db, idOrName.id) : await readIndexByName(db, idOrName.name);
  if (!row || !maySeeIndex(principal, row, apiVersion)) throw notFound("Index", "id" in idOrName ? idOrName.id : idOrName.name);
  return row;
}

export function toIndex(row: IndexRow) {
  const lastSync = parseJson<SyncOutcome>(row.last_sync);
  const standard = standardIndex(row.id);
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    description: row.description ?? standard?.description ?? null,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    triggerSchedule: row.trigger_schedule,
    type: row.type,
    source: standard ? (standard.source ? ("platform" as const) : ("library" as const)) : ("library" as const),
    status: row.status,
    documentCount: row.document_count,
    lastSynchronization: lastSync,
    nextSynchronizationAt: row.next_run_at ?? null,
    libraryFileName: row.library_file_name,
    mapping: mappingOf(row),
    createdDate: row.created_at,
    modifiedDate: row.updated_at,
  };
}

const scheduleRule = (cron: string | null): ScheduleRule | null => (cron ? { cron } : null);

export interface NewIndex {
  id: string;
  name: string;
  displayName: string;
  owner: { id: string; name: string | null };
  triggerSchedule: string | null;
  library: string;
  libraryFileName: string;
  grant: string[];
}

const indexTable = tableStatements(searchIndices);

export async function createIndex(ctx: WriteContext, input: NewIndex): Promise<IndexRow> {
  const etag = newEtagToken();
  const statements = [
    indexTable.insert(ctx.db, {
      id: input.id,
      name: input.name,
      nameKey: nameKey(input.name),
      displayName: input.displayName,
      description: null,
      type: "custom",
      ownerId: input.owner.id,
      ownerName: input.owner.name,
      triggerSchedule: input.triggerSchedule,
      mapping: null,
      library: input.library,
      libraryFileName: input.libraryFileName,
      grantPermissions: JSON.stringify(input.grant),
      status: "Pending",
      documentCount: 0,
      lastSync: null,
      etag,
      createdAt: ctx.now,
      updatedAt: ctx.now,
      createdBy: ctx.actorId,
    }),
    scheduleStatement(ctx.db, SEARCH_SCHEDULE_KIND, input.id, scheduleRule(input.triggerSchedule), new Date(ctx.now)),
    ...outboxStatements(ctx.db, ctx, {
      entityKind: INDEX_KIND,
      entityId: input.id,
      action: "created",
      payload: { id: input.id, name: input.name },
    }),
  ];
  try {
    await ctx.db.batch(statements);
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict(`An index named '${input.name}' already exists (names are unique, ignoring case).`, [
        { field: "body.name", rule: "unique", message: "An index with this name exists." },
      ]);
    throw error;
  }
  return (await readIndexRow(ctx.db, input.id))!;
}

export interface IndexUpdate {
  name: string;
  displayName: string;
  owner: { id: string; name: string | null };
  triggerSchedule: string | null;
  /** Set when the library file is replaced. */
  library?: { source: string; fileName: string; grant: string[] };
}

/** A guarded update (the etag read, or If-Match); a custom index's schedule follows its triggerSchedule. */
export async function updateIndex(ctx: WriteContext, current: IndexRow, update: IndexUpdate): Promise<IndexRow> {
  assertVersion(ctx, current.etag);
  const etag = newEtagToken();
  const library = update.library;
  const statements = [
    indexTable.update(
      ctx.db,
      {
        name: update.name,
        nameKey: nameKey(update.name),
        displayName: update.displayName,
        ownerId: update.owner.id,
        ownerName: update.owner.name,
        triggerSchedule: update.triggerSchedule,
        // A new library only when one was sent: the stored one stays otherwise.
        ...(library ? { library: library.source, libraryFileName: library.fileName, grantPermissions: JSON.stringify(library.grant) } : {}),
        etag,
        updatedAt: ctx.now,
      },
      { id: current.id, etag: current.etag },
    ),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: INDEX_KIND, entityId: current.id, action: "updated", payload: { id: current.id, name: update.name }, partial: true },
      { table: "search_indices", etag },
    ),
  ];
  if (current.type === "custom" || current.trigger_schedule !== update.triggerSchedule) {
    statements.push(scheduleStatement(ctx.db, SEARCH_SCHEDULE_KIND, current.id, scheduleRule(update.triggerSchedule), new Date(ctx.now)));
  }
  let results;
  try {
    results = await ctx.db.batch(statements);
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict(`An index named '${update.name}' already exists (names are unique, ignoring case).`, [
        { field: "body.name", rule: "unique", message: "An index with this name exists." },
      ]);
    throw error;
  }
  if (results[0]!.meta.changes === 0) throw preconditionFailed();
  return (await readIndexRow(ctx.db, current.id))!;
}

/**
 * The statements that delete a custom index's own rows (its logs, its schedule, the row itself at the
 * version read) with its event; its saved queries are the queries' owner's (src/search/index-removal.ts
 * composes both).
 */
export function deleteIndexStatements(ctx: WriteContext, row: IndexRow): D1PreparedStatement[] {
  return [
    ctx.db.prepare("DELETE FROM search_index_logs WHERE index_id = ?1").bind(row.id),
    scheduleStatement(ctx.db, SEARCH_SCHEDULE_KIND, row.id, null, new Date(ctx.now)),
    ctx.db.prepare("DELETE FROM search_indices WHERE id = ?1 AND etag = ?2").bind(row.id, row.etag),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: INDEX_KIND, entityId: row.id, action: "deleted", payload: null },
      "previousChanged",
    ),
  ];
}

/** Marks a synchronisation as started (status Synchronizing) and logs it. */
export async function markSyncStarted(db: Database, indexId: string, syncId: string, reason: string): Promise<void> {
  await db.batch([
    db.prepare("UPDATE search_indices SET status = 'Synchronizing' WHERE id = ?1").bind(indexId),
    logStatement(db, indexId, syncId, "info", `Synchronisation started (${reason}).`),
  ]);
}

/** Records a finished synchronisation; a library's mapping is stored with its first success. */
export async function finishSync(db: Database, indexId: string, outcome: SyncOutcome, mapping?: Mapping): Promise<void> {
  await db.batch([
    db
      .prepare("UPDATE search_indices SET status = ?2, document_count = ?3, last_sync = ?4, mapping = COALESCE(?5, mapping) WHERE id = ?1")
      .bind(
        indexId,
        outcome.status === "Succeeded" ? "Ready" : "Failed",
        outcome.documents,
        JSON.stringify(outcome),
        mapping ? JSON.stringify(mapping) : null,
      ),
    logStatement(
      db,
      indexId,
      outcome.syncId,
      outcome.status === "Succeeded" ? "info" : "error",
      `Synchronisation ${outcome.status === "Succeeded" ? "succeeded" : "failed"}: ${outcome.message}`,
    ),
  ]);
}

export const MAX_LOG_MESSAGE = 2000;
/** Log lines kept per index; older ones are pruned when new ones are written. */
export const MAX_LOG_LINES = 5000;

function logStatement(db: Database, indexId: string, syncId: string | null, level: string, message: string): D1PreparedStatement {
  return db
    .prepare("INSERT INTO search_index_logs (index_id, sync_id, level, message, at) VALUES (?1, ?2, ?3, ?4, ?5)")
    .bind(indexId, syncId, level, message.slice(0, MAX_LOG_MESSAGE), platform().clock.now().toISOString());
}

export async function writeLog(db: Database, indexId: string, syncId: string | null, level: string, message: string): Promise<void> {
  await logStatement(db, indexId, syncId, level, message).run();
}

/** Several lines at once (a library's logger output), then pruning to the newest {@link MAX_LOG_LINES}. */
export async function writeLogs(
  db: Database,
  indexId: string,
  syncId: string,
  lines: readonly { level: string; message: string }[],
): Promise<void> {
  const statements = lines.map((l) => logStatement(db, indexId, syncId, l.level, l.message));
  statements.push(
    db
      .prepare(
        "DELETE FROM search_index_logs WHERE index_id = ?1 AND seq <= (SELECT seq FROM search_index_logs WHERE index_id " +
          "= ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)",
      )
      .bind(indexId, MAX_LOG_LINES),
  );
  for (let i = 0; i < statements.length; i += 50) await db.batch(statements.slice(i, i + 50));
}

export function indexStub(env: Bindings, indexId: string) {
  return env.SEARCH.get(env.SEARCH.idFromName(indexId));
}

/** Starts a full synchronisation of an index in its Durable Object (which marks it started). */
export async function startSync(env: Bindings, indexId: string, reason: string): Promise<{ started: boolean; syncId: string }> {
  return indexStub(env, indexId).synchronize(indexId, platform().ids.uuid(), reason);
}
