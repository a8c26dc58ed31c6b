/** GET /Files on the shared list query engine: only files the caller may see (./access.ts). */
import type { Database } from "../../db/statements";
import { ApiError } from "../../pkg/errors";
import { compileListQuery, csvInList, defineList, inList, runListQuery, splitCsv, type Condition, noProperties } from "../../pkg/query";
import { DATA_TYPE_ID } from "../data-types/schema";
import { visibleCondition, type Viewer } from "./access";
import { FILE_STATUSES, type FileDefinition, type ListFilesParams } from "./schema";
import { JOINS, SELECT_COLUMNS, toFile, type FileRow } from "./store";

export const fileList = defineList({
  table: "files",
  alias: "f",
  entityKind: "file",
  idColumn: "id",
  select: SELECT_COLUMNS,
  joins: JOINS,
  fields: {
    name: { column: "f.name" },
    size: { column: "f.size", type: "number" },
    status: { column: "f.status" },
    contentType: { column: "f.content_type" },
    createdAt: { column: "f.created_at", type: "datetime", indexed: true },
    updatedAt: { column: "f.updated_at", type: "datetime" },
    "dataType.name": { column: "dt.name" },
    "objectOwner.name": { column: "f.owner_name" },
  },
  searchColumns: ["f.name"],
  defaultOrder: "createdAt desc",
});

function filterError(field: string, rule: string, message: string): ApiError {
  return new ApiError("InvalidQuery", message, { errors: [{ field, rule, message }] });
}

function listConditions(params: ListFilesParams): Condition[] {
  const conditions: Condition[] = [];
  const statuses = splitCsv(params.statuses);
  for (const status of statuses) {
    if (!(FILE_STATUSES as readonly string[]).includes(status)) {
      throw filterError("query.statuses", "enum", `statuses: '${status}' is not a file status (${FILE_STATUSES.join(", ")}).`);
    }
  }
  if (statuses.length > 0) conditions.push(inList("f.status", statuses));
  const dataTypeIds = [...splitCsv(params.dataTypeIds), ...splitCsv(params.dataTypeId)];
  for (const id of dataTypeIds) {
    if (!DATA_TYPE_ID.test(id))
      throw filterError(
        params.dataTypeIds?.includes(id) ? "query.dataTypeIds" : "query.dataTypeId",
        "format",
        `'${id}' is not a data type id.`,
      );
  }
  if (dataTypeIds.length > 0) conditions.push(inList("f.data_type_id", dataTypeIds));
  conditions.push(...csvInList("f.owner_id", params.objectOwnerIds));
  return conditions;
}

/** One page of the files the viewer may see; `total` when the query engine counted (see includeTotal). */
export async function listFiles(
  db: Database,
  viewer: Viewer,
  params: ListFilesParams,
): Promise<{ items: FileDefinition[]; total?: number | undefined }> {
  const query = await compileListQuery(fileList, params, noProperties, [visibleCondition(viewer), ...listConditions(params)]);
  const { items, total } = await runListQuery<FileRow>(db, query);
  return { items: items.map((row) => toFile(row).value), total };
}
