/** File references (spec 2.5): a Platform file by id, or an External http(s) url; optional name. */
import { z } from "@hono/zod-openapi";

export const FILE_LOCATIONS = ["Platform", "External"] as const;

export const FileReferenceSchema = z
  .object({
    id: z.uuid(),
    location: z.enum(FILE_LOCATIONS),
    platformFile: z.object({ id: z.string() }).nullable().openapi({ description: "The file (POST /Files) when location = Platform." }),
    url: z.string().nullable().openapi({ description: "The http(s) address when location = External." }),
    name: z.string().nullable(),
    inheritedFrom: z.uuid().nullable().openapi({ description: "For a reference copied from a work template: the template's reference." }),
    createdAt: z.iso.datetime(),
  })
  .openapi("FileReference");

export type FileReference = z.infer<typeof FileReferenceSchema>;

export const CreateFileReferenceSchema = z
  .object({
    location: z.enum(FILE_LOCATIONS),
    platformFile: z
      .object({ id: z.string().trim().min(1).max(200) })
      .strict()
      .nullable()
      .default(null)
      .openapi({ description: "Required when location = Platform." }),
    url: z
      .string()
      .trim()
      .max(2048)
      .nullable()
      .default(null)
      .openapi({ description: "Required when location = External; http or https only." }),
    name: z.string().trim().max(500).nullable().default(null),
  })
  .strict()
  .openapi("CreateFileReference");

export type FileReferenceInput = z.infer<typeof CreateFileReferenceSchema>;
