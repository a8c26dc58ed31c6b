import { z } from "@hono/zod-openapi";
import { listQueryShape } from "../../pkg/query";
import { updateBodyOf } from "../../pkg/resource";

/** The business statuses of section 3. Any transition is allowed: the caller sets a status. */
export const FILE_STATUSES = [
  "none",
  "pending",
  "processing",
  "validationError",
  "processingError",
  "processed",
  "new",
  "opened",
  "authorizationError",
] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

export const OBJECT_TYPES = ["equipment", "mainSystem", "plant", "organization"] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

const ownerId = z.string().trim().min(1).max(200);
const ownerName = z.string().trim().min(1).max(200);

export const ObjectOwnerSchema = z
  .object({
    id: z.string().openapi({ example: "5f0c2b7e-3d1a-4e8b-9c6f-7a2d1e0b3c4d" }),
    name: z.string().nullable().openapi({ example: "Jane Doe" }),
  })
  .openapi("FileObjectOwner");

export const ObjectOwnerInputSchema = z.object({ id: ownerId, name: ownerName.optional() }).strict();

export const FileMetadataSchema = z
  .object({
    objectType: z.enum(OBJECT_TYPES).openapi({ description: "The kind of asset the file belongs to." }),
    objectId: z.string().trim().min(1).max(200).openapi({ description: "The asset's id.", example: "EQ-23-PA-001" }),
  })
  .strict()
  .openapi("FileMetadata");

export const FileSchema = z
  .object({
    id: z.uuid(),
    name: z.string().openapi({ example: "wall-thickness-2026-q3.xlsx" }),
    dataType: z.object({ id: z.string(), name: z.string() }),
    size: z.number().int().openapi({ description: "Bytes." }),
    contentType: z.string().openapi({ example: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" }),
    checksum: z.string().openapi({
      description:
        "Names the bytes (it is also the download's ETag). Two forms: the SHA-256 of the bytes in lower-case hex, for a " +
        "file posted in one request " +
        "(POST /Files) or uploaded in one part; and for a resumable upload of n > 1 parts the composite " +
        "`sha256-parts:<hex>-<n>`, where <hex> is the " +
        "SHA-256 of the n parts' 32-byte SHA-256 digests concatenated in part order (as S3's multipart checksums), so " +
        "the file need not be read " +
        "again: a client recomputes it from its bytes and the upload's partSize.",
      example: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    }),
    objectOwner: ObjectOwnerSchema,
    status: z.enum(FILE_STATUSES),
    metadata: FileMetadataSchema.nullable().openapi({ description: "Access metadata; null until set with PUT /Files/{id}/Metadata." }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("File");

export type FileDefinition = z.infer<typeof FileSchema>;

export const UpdateFileStatusSchema = z
  .object({ id: z.uuid(), status: z.enum(FILE_STATUSES) })
  .strict()
  .openapi("UpdateFileStatus");

/** PUT /Files: the whole file object as older clients send it; only userStatus (or status) is read. */
export const WholeFileStatusSchema = updateBodyOf(
  FileSchema,
  {
    status: z.enum(FILE_STATUSES).optional(),
    userStatus: z.enum(FILE_STATUSES).optional().openapi({ description: "What older clients set; it wins over status." }),
  },
  "WholeFileStatus",
);

// The shared list parameters (ids, excludeIds, searchText, order, paging, ...) except the property
// filter: files carry no linked properties.
const { properties: _noProperties, ...commonListShape } = listQueryShape;

export const ListFilesQuery = z.object({
  ...commonListShape,
  searchText: listQueryShape.searchText.openapi({ description: "Case-insensitive (ASCII) substring of the file name." }),
  order: listQueryShape.order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]`: name, size, status, contentType, createdAt, updatedAt, dataType.name, " +
      "objectOwner.name. Default `createdAt desc`; ties by id.",
    example: "createdAt desc",
  }),
  dataTypeIds: z.string().optional().openapi({ description: "Comma-separated data type ids.", example: "thickness-measurements" }),
  dataTypeId: z.string().optional().openapi({
    description: "One data type id, as the original product's client sends it (the same as dataTypeIds).",
    example: "thickness-measurements",
  }),
  statuses: z
    .string()
    .optional()
    .openapi({ description: `Comma-separated statuses: ${FILE_STATUSES.join(", ")}.`, example: "none,pending" }),
  objectOwnerIds: z.string().optional().openapi({ description: "Comma-separated owner ids." }),
});

export type ListFilesParams = z.infer<typeof ListFilesQuery>;

/** The multipart form of POST /Files, for the OpenAPI document (read by the streaming form reader, not by zod). */
export const POST_FILE_FORM = {
  type: "object" as const,
  required: ["dataTypeId", "file"],
  description:
    "Field names are matched without regard to case, so the original clients' `DataTypeId`, `File`, `ObjectOwnerId` work as they are. " +
    "Other fields are refused. Send dataTypeId before file so the file streams to storage; after it, the file is " +
    "held in memory until the form ends.",
  properties: {
    dataTypeId: { type: "string", example: "thickness-measurements" },
    file: {
      type: "string",
      format: "binary",
      description: "The file; its name (with an extension the data type allows) is the part's filename.",
    },
    objectOwnerId: { type: "string", description: "Default: the caller (the token's sub)." },
    objectOwnerName: {
      type: "string",
      description: "Default: the caller's name when objectOwnerId is the caller or absent; otherwise null.",
    },
  } as Record<string, { type: "string"; format?: string; description?: string; example?: string }>,
};
