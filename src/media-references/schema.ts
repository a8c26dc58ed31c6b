/** Media references: the row, what the API shows and the bodies it takes (store.ts writes them, list.ts lists them). */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../pkg/resource";

export const MEDIA_REFERENCE_KIND = "mediaReference";

export interface MediaReferenceRow {
  id: string;
  media_id: string;
  display_name: string | null;
  description: string | null;
  owner_id: string;
  owner_name: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  media_name?: string | null;
  media_type?: string | null;
}

export const MediaReferenceSchema = z
  .object({
    id: z.uuid(),
    mediaId: z.uuid().openapi({ description: "The referenced media (GET /Medias/{id}, /Medias/{id}/Data)." }),
    media: z.object({ id: z.uuid(), name: z.string().nullable(), type: z.string().nullable() }),
    displayName: z.string().nullable(),
    description: z.string().nullable(),
    objectOwner: z.object({ id: z.string(), name: z.string().nullable() }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("MediaReference");

const fields = {
  mediaId: z.uuid().openapi({ description: "An existing media." }),
  displayName: z.string().trim().max(200).nullable().optional(),
  description: z.string().max(4000).nullable().optional(),
};
export const CreateMediaReferenceSchema = z.object(fields).strict().openapi("CreateMediaReference");
export const UpdateMediaReferenceSchema = updateBodyOf(MediaReferenceSchema, fields, "UpdateMediaReference");

export function toMediaReference(row: MediaReferenceRow) {
  return {
    id: row.id,
    mediaId: row.media_id,
    media: { id: row.media_id, name: row.media_name ?? null, type: row.media_type ?? null },
    displayName: row.display_name,
    description: row.description,
    objectOwner: { id: row.owner_id, name: row.owner_name },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
