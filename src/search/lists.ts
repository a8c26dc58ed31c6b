/** The lists of indices, saved queries and an index's log lines, on the shared query engine. */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import type { Principal } from "../pkg/auth";
import { PERMISSIONS } from "../pkg/permissions";
import {
  compileListQuery,
  csvInList,
  defineList,
  enumCondition,
  equals,
  inList,
  listQueryShape,
  noProperties,
  parseUuidList,
  runListQuery,
  splitCsv,
  type Condition,
} from "../pkg/query";
import type { IndexRow } from "./store";
import type { QueryRow } from "./queries";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

const indexList = defineList({
  table: "search_indices",
  alias: "si",
  entityKind: "searchIndex",
  idColumn: "id",
  fields: {
    name: { column: "lower(si.name)", displayColumn: "si.name" },
    displayName: { column: "lower(si.display_name)", displayColumn: "si.display_name" },
    type: { column: "si.type" },
    status: { column: "si.status" },
    "objectOwner.name": { column: "lower(si.owner_name)" },
    documentCount: { column: "si.document_count", type: "number" },
    createdAt: { column: "si.created_at", type: "datetime" },
  },
  searchColumns: ["si.name", "si.display_name"],
  defaultOrder: "type desc, name asc",
  select:
    "si.id, si.name, si.display_name, si.description, si.type, si.owner_id, si.owner_name, si.trigger_schedule, " +
    "si.mapping, si.library_file_name, si.status, si.document_count, si.last_sync, si.etag, si.created_at, " +
    "si.updated_at, (SELECT next_run_at FROM schedules WHERE kind = 'search-index' AND owner_id = si.id) AS " +
    "next_run_at",
});

export const IndexListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or display name." }),
  types: z.string().optional().openapi({ description: "Comma-separated: standard, custom." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over name, displayName, type, status, objectOwner.name, documentCount, " +
      "createdAt. Default: standard first, then by name.",
  }),
  skip,
  take,
  includeTotal,
});

/** What a caller sees of the index list (standard indices, own custom ones, all with index_read_all; 1.0: standard only). */
function visibleIndices(principal: Principal, apiVersion: string): Condition {
  return (values) => {
    if (apiVersion === "1.0") return "si.type = 'standard'";
    if (principal.permissions.has(PERMISSIONS.indexReadAll)) return "1 = 1";
    return `(si.type = 'standard' OR si.owner_id = ${values.value(principal.id)})`;
  };
}

export async function listIndexRows(db: Database, principal: Principal, apiVersion: string, query: z.infer<typeof IndexListQuery>) {
  const conditions: Condition[] = [visibleIndices(principal, apiVersion)];
  conditions.push(...enumCondition(query.types, ["standard", "custom"], "query.types", "si.type"));
  conditions.push(...csvInList("si.owner_id", query.objectOwnerIds));
  return runListQuery<IndexRow>(db, await compileListQuery(indexList, query, noProperties, conditions));
}

const queryList = defineList({
  table: "search_queries",
  alias: "sq",
  entityKind: "searchQuery",
  idColumn: "id",
  fields: {
    name: { column: "lower(sq.name)", displayColumn: "sq.name" },
    "objectOwner.name": { column: "lower(sq.owner_name)" },
    "index.name": { column: "lower(qi.name)", joins: ["LEFT JOIN search_indices qi ON qi.id = sq.index_id"] },
    "metadata.action.order": { column: "json_extract(sq.metadata, '$.action.order')", type: "number" },
    createdAt: { column: "sq.created_at", type: "datetime" },
    updatedAt: { column: "sq.updated_at", type: "datetime" },
  },
  searchColumns: ["sq.name", "sq.description"],
  defaultOrder: "name asc",
  // The index's name in the page's own statement: a page costs the same D1 round trips however many indices it names.
  select: "sq.*, (SELECT name FROM search_indices WHERE id = sq.index_id) AS index_name",
});

export const QueryListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or description." }),
  indexIds: z.string().optional().openapi({ description: "Only queries of these indices (comma-separated ids)." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids (others' need query_read_all)." }),
  isVisible: z.enum(["true", "false"]).optional().openapi({
    description:
      "Only queries whose metadata.action.isVisible is this (the My Actions page: `isVisible=true&order=metadata.action.order`).",
  }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over name, objectOwner.name, index.name, metadata.action.order, " +
      "createdAt, updatedAt. Default: name.",
  }),
  skip,
  take,
  includeTotal,
});

export async function listQueryRows(db: Database, principal: Principal, query: z.infer<typeof QueryListQuery>) {
  const conditions: Condition[] = [];
  if (!principal.permissions.has(PERMISSIONS.queryReadAll)) conditions.push((values) => `sq.owner_id = ${values.value(principal.id)}`);
  const indexIds = parseUuidList(query.indexIds, "query.indexIds");
  if (indexIds.length > 0) conditions.push(inList("sq.index_id", indexIds));
  conditions.push(...csvInList("sq.owner_id", query.objectOwnerIds));
  if (query.isVisible !== undefined) {
    conditions.push(
      query.isVisible === "true"
        ? () => "json_extract(sq.metadata, '$.action.isVisible') = 1"
        : () => "COALESCE(json_extract(sq.metadata, '$.action.isVisible'), 0) = 0",
    );
  }
  return runListQuery<QueryRow & { index_name: string | null }>(db, await compileListQuery(queryList, query, noProperties, conditions));
}

// --- An index's log lines (GET /Indices/{id}/Logs): synchronisations and its library's logger, newest first.

const logList = defineList({
  table: "search_index_logs",
  alias: "lg",
  entityKind: "searchIndexLog",
  // Log lines are numbered, not identified by UUIDs; the number is the final tie-breaker.
  idColumn: "seq",
  idFormat: "text",
  fields: {
    seq: { column: "lg.seq", type: "number" },
    at: { column: "lg.at", type: "datetime" },
    level: { column: "lg.level" },
    syncId: { column: "lg.sync_id" },
  },
  searchColumns: ["lg.message"],
  defaultOrder: "seq desc",
  select: "lg.seq, lg.at, lg.level, lg.message, lg.sync_id AS syncId",
});

export const IndexLogLineSchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  level: z.string(),
  message: z.string(),
  syncId: z.string().nullable(),
});
export type IndexLogLine = z.infer<typeof IndexLogLineSchema>;

export const IndexLogQuery = z.object({
  syncId: z.string().max(64).optional().openapi({ description: "Only the lines of this synchronisation." }),
  levels: z.string().optional().openapi({ description: "Only lines of these levels. Comma-separated.", example: "warn,error" }),
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the message.", example: "timeout" }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over seq, at, level, syncId. Default: seq desc (newest first).",
    example: "seq asc",
  }),
  skip,
  take,
  includeTotal,
});

export async function listIndexLogs(
  db: Database,
  indexId: string,
  query: z.infer<typeof IndexLogQuery>,
): Promise<{ items: IndexLogLine[]; total: number | undefined }> {
  const levels = splitCsv(query.levels);
  const conditions = [
    equals("lg.index_id", indexId),
    ...(query.syncId === undefined ? [] : [equals("lg.sync_id", query.syncId)]),
    ...(levels.length > 0 ? [inList("lg.level", levels)] : []),
  ];
  return runListQuery<IndexLogLine>(db, await compileListQuery(logList, query, noProperties, conditions));
}
