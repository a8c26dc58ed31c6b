/**
 * GET /Medias on the shared list query engine: ids, excludeIds, searchText (name), types,
 * objectOwnerIds, createdFrom/createdTo, order and paging. Every holder of media_read may read any
 * media by id, so the list shows them all.
 */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  csvInList,
  defineList,
  enumCondition,
  listQueryShape,
  noProperties,
  parseDateValue,
  queryError,
  runListQuery,
  type Condition,
} from "../pkg/query";
import { MEDIA_TYPES, type Media } from "./schema";
import { toRecord, type MediaRow } from "./store";

const mediaList = defineList({
  table: "medias",
  alias: "m",
  entityKind: "media",
  idColumn: "id",
  fields: {
    name: { column: "m.name" },
    type: { column: "m.declared_type" },
    contentType: { column: "m.content_type" },
    size: { column: "m.size", type: "number" },
    isImage: { column: "m.is_image", type: "boolean" },
    "owner.id": { column: "m.owner_id", displayColumn: "m.owner_name" },
    "owner.name": { column: "m.owner_name" },
    createdAt: { column: "m.created_at", type: "datetime", indexed: true },
  },
  searchColumns: ["m.name"],
  defaultOrder: "createdAt desc",
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const MediaListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name." }),
  types: z
    .string()
    .optional()
    .openapi({ description: `Only media of these types (comma-separated: ${MEDIA_TYPES.join(", ")}).`, example: "image" }),
  objectOwnerIds: z.string().optional().openapi({ description: "Only media uploaded by these users (comma-separated ids: owner.id)." }),
  createdFrom: z
    .string()
    .optional()
    .openapi({ description: "Only media uploaded at or after this instant (ISO 8601).", example: "2026-11-01T00:00:00Z" }),
  createdTo: z.string().optional().openapi({ description: "Only media uploaded before this instant (ISO 8601)." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over name, type, contentType, size, isImage, owner.id, owner.name, " +
      "createdAt. Default: createdAt desc (newest first).",
    example: "name asc",
  }),
  skip,
  take,
  includeTotal,
});

function instant(value: string | undefined, name: "createdFrom" | "createdTo"): string | null {
  if (value === undefined || value === "") return null;
  const parsed = parseDateValue(value);
  if (parsed === undefined) throw queryError(`query.${name}`, "format", `${name}: '${value}' is not an ISO 8601 date-time.`);
  return new Date(parsed).toISOString();
}

function listConditions(query: z.infer<typeof MediaListQuery>): Condition[] {
  const conditions: Condition[] = [];
  conditions.push(...enumCondition(query.types, MEDIA_TYPES, "query.types", "m.declared_type", "a media type"));
  conditions.push(...csvInList("m.owner_id", query.objectOwnerIds));
  const from = instant(query.createdFrom, "createdFrom");
  if (from) conditions.push((v) => `m.created_at >= ${v.value(from)}`);
  const to = instant(query.createdTo, "createdTo");
  if (to) conditions.push((v) => `m.created_at < ${v.value(to)}`);
  return conditions;
}

export async function listMedia(
  db: Database,
  query: z.infer<typeof MediaListQuery>,
): Promise<{ items: Media[]; total: number | undefined }> {
  const { items, total } = await runListQuery<MediaRow>(db, await compileListQuery(mediaList, query, noProperties, listConditions(query)));
  return { items: items.map((row) => toRecord(row).media), total };
}
