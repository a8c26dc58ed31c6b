/** GET /MediaReferences on the shared list engine. */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import {
  compileListQuery,
  csvInList,
  defineList,
  inList,
  listQueryShape,
  noProperties,
  parseUuidList,
  runListQuery,
  type Condition,
} from "../pkg/query";
import { MEDIA_REFERENCE_KIND, type MediaReferenceRow } from "./schema";

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

const mediaReferenceList = defineList({
  table: "media_references",
  alias: "r",
  entityKind: MEDIA_REFERENCE_KIND,
  idColumn: "id",
  fields: {
    displayName: { column: "lower(r.display_name)", displayColumn: "r.display_name" },
    "objectOwner.name": { column: "lower(r.owner_name)" },
    createdAt: { column: "r.created_at", type: "datetime" },
    updatedAt: { column: "r.updated_at", type: "datetime" },
  },
  searchColumns: ["r.display_name", "r.description"],
  defaultOrder: "createdAt desc",
  select:
    "r.*, (SELECT name FROM medias WHERE id = r.media_id) AS media_name, (SELECT declared_type FROM medias WHERE id " +
    "= r.media_id) AS media_type",
});

export const MediaReferenceListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the display name or description." }),
  mediaIds: z.string().optional().openapi({ description: "Only references to these media (comma-separated ids)." }),
  activityIds: z.string().optional().openapi({ description: "Only references linked to any of these activities (comma-separated ids)." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over displayName, objectOwner.name, createdAt, updatedAt. Default: createdAt desc.",
  }),
  skip,
  take,
  includeTotal,
});

export async function listMediaReferences(db: Database, query: z.infer<typeof MediaReferenceListQuery>) {
  const conditions: Condition[] = [];
  const media = parseUuidList(query.mediaIds, "query.mediaIds");
  if (media.length > 0) conditions.push(inList("r.media_id", media));
  const activityIds = parseUuidList(query.activityIds, "query.activityIds");
  if (activityIds.length > 0)
    conditions.push(
      (values) => `r.id IN (SELECT media_reference_id FROM activity_media_references WHERE activity_id IN ${values.list(activityIds)})`,
    );
  conditions.push(...csvInList("r.owner_id", query.objectOwnerIds));
  return runListQuery<MediaReferenceRow>(db, await compileListQuery(mediaReferenceList, query, noProperties, conditions));
}
