/** The lists of indices and saved queries, on the shared query engine. */
import { z } from "@hono/zod-openapi";
import type { Principal } from "../pkg/auth";
import { PERMISSIONS } from "../pkg/permissions";
import { compileListQuery, csvInList, defineList, enumCondition, inList, listQueryShape, noProperties, parseUuidList, runListQuery, type Condition } from "../pkg/query";
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
  select: "si.id, si.name, si.display_name, si.description, si.type, si.owner_id, si.owner_name, si.trigger_schedule, si.mapping, si.library_file_name, si.status, si.document_count, si.last_sync, si.etag, si.created_at, si.updated_at, (SELECT next_run_at FROM schedules WHERE kind = 'search-index' AND owner_id = si.id) AS next_run_at",
});

export const IndexListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or display name." }),
  types: z.string().optional().openapi({ description: "Comma-separated: standard, custom." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids." }),
  order: order.openapi({ description: "Comma-separated `{field} [asc|desc]` over name, displayName, type, status, objectOwner.name, documentCount, createdAt. Default: standard first, then by name." }),
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

export async function listIndexRows(db: D1Database, principal: Principal, apiVersion: string, query: z.infer<typeof IndexListQuery>) {
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
});

export const QueryListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or description." }),
  indexIds: z.string().optional().openapi({ description: "Only queries of these indices (comma-separated ids)." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids (others' need query_read_all)." }),
  isVisible: z.enum(["true", "false"]).optional().openapi({ description: "Only queries whose metadata.action.isVisible is this (the My Actions page: `isVisible=true&order=metadata.action.order`)." }),
  order: order.openapi({ description: "Comma-separated `{field} [asc|desc]` over name, objectOwner.name, index.name, metadata.action.order, createdAt, updatedAt. Default: name." }),
  skip,
  take,
  includeTotal,
});

export async function listQueryRows(db: D1Database, principal: Principal, query: z.infer<typeof QueryListQuery>) {
  const conditions: Condition[] = [];
  if (!principal.permissions.has(PERMISSIONS.queryReadAll)) conditions.push((values) => `sq.owner_id = ${values.value(principal.id)}`);
  const indexIds = parseUuidList(query.indexIds, "query.indexIds");
  if (indexIds.length > 0) conditions.push(inList("sq.index_id", indexIds));
  conditions.push(...csvInList("sq.owner_id", query.objectOwnerIds));
  if (query.isVisible !== undefined) {
    conditions.push(query.isVisible === "true" ? () => "json_extract(sq.metadata, '$.action.isVisible') = 1" : () => "COALESCE(json_extract(sq.metadata, '$.action.isVisible'), 0) = 0");
  }
  return runListQuery<QueryRow>(db, await compileListQuery(queryList, query, noProperties, conditions));
}
