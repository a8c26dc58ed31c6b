import { z } from "@hono/zod-openapi";
import { MAX_REQUEST_BODY } from "../http";
import { MAX_PARTS, MIN_PART_SIZE } from "../storage";
import { ObjectOwnerInputSchema } from "../files/schema";

export const StartUploadSchema = z
  .object({
    dataTypeId: z.string().min(1).max(63).openapi({ example: "thickness-measurements" }),
    name: z
      .string()
      .min(1)
      .max(255)
      .openapi({ description: "The file name, with an extension the data type allows.", example: "scan-2026-11.csv" }),
    size: z
      .number()
      .int()
      .min(1)
      .max(MAX_PARTS * MAX_REQUEST_BODY)
      .optional()
      .openapi({
        description: "The file's size in bytes, when known: parts are then checked as they arrive, and the total at completion.",
      }),
    contentType: z.string().max(200).optional().openapi({ description: "Default application/octet-stream.", example: "text/csv" }),
    partSize: z.number().int().min(MIN_PART_SIZE).max(MAX_REQUEST_BODY).optional().openapi({
      description:
        "Bytes per part (all parts but the last have exactly this size). Default 10 MiB, or more when size needs more than 10,000 parts.",
    }),
    objectOwner: ObjectOwnerInputSchema.optional().openapi({ description: "Default: the caller." }),
  })
  .strict()
  .openapi("StartUpload");

export type StartUploadInput = z.infer<typeof StartUploadSchema>;

export const UploadPartSchema = z
  .object({
    partNumber: z.number().int(),
    size: z.number().int(),
    uploadedAt: z.iso.datetime(),
  })
  .openapi("UploadPart");

export const UploadSchema = z
  .object({
    uploadId: z.uuid(),
    fileId: z.uuid().openapi({ description: "The file the upload becomes; visible (GET /Files/{id}) once completed." }),
    name: z.string(),
    dataType: z.object({ id: z.string(), name: z.string() }),
    size: z.number().int().nullable().openapi({ description: "The declared size, or null." }),
    partSize: z.number().int(),
    maxParts: z.number().int().openapi({ example: MAX_PARTS }),
    expectedParts: z.number().int().nullable().openapi({ description: "ceil(size / partSize) when the size was declared." }),
    parts: z.array(UploadPartSchema).openapi({ description: "Parts received so far, by part number (empty once completed)." }),
    completed: z.boolean(),
    expiresAt: z.iso
      .datetime()
      .openapi({ description: "Without activity (a part or the completion) until then, the upload is aborted and removed." }),
  })
  .openapi("Upload");

export type Upload = z.infer<typeof UploadSchema>;

export const UploadIdParam = z.object({
  uploadId: z.uuid().openapi({ param: { name: "uploadId", in: "path" }, example: "7d0e8f4a-1b2c-4d3e-8f9a-0b1c2d3e4f5a" }),
});

export const PartParams = UploadIdParam.extend({
  partNumber: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PARTS)
    .openapi({ param: { name: "partNumber", in: "path" }, example: 1 }),
});

export const PresignedPartSchema = z
  .object({
    partNumber: z.number().int(),
    method: z.literal("PUT"),
    url: z
      .url()
      .openapi({ description: "SigV4-presigned S3 UploadPart URL of R2 (path-style: endpoint/bucket/key?partNumber&uploadId&X-Amz-...)." }),
    headers: z
      .record(z.string(), z.string())
      .openapi({ description: "Headers to send with exactly these values (signed): content-length when the part's size is known." }),
    expiresAt: z.iso.datetime(),
  })
  .openapi("PresignedPart");

export const DirectCompletionSchema = z
  .object({
    parts: z
      .array(
        z
          .object({
            partNumber: z.number().int().min(1).max(MAX_PARTS),
            etag: z.string().min(1).max(200).openapi({ description: "The ETag header R2 answered to the part's PUT (quotes optional)." }),
          })
          .strict(),
      )
      .min(1)
      .max(MAX_PARTS)
      .refine((parts) => new Set(parts.map((p) => p.partNumber)).size === parts.length, {
        message: "Each part number at most once.",
        params: { rule: "unique" },
      }),
  })
  .strict()
  .openapi("DirectCompletion");
