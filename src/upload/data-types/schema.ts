import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";

/**
 * Data type ids are chosen by the client (or derived from the name): a lower-case slug such as
 * `inspection-report`. Upload clients name the data type in code (`DataTypeId`), so the same id in
 * every environment matters more than a generated UUID would.
 */
export const DATA_TYPE_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
/** An extension without its dot; inner dots allowed for compound ones such as `tar.gz`. */
export const EXTENSION = /^[a-z0-9]+(?:[._+-][a-z0-9]+)*$/;

export const MAX_EXTENSIONS = 50;

const dataTypeId = z
  .string()
  .regex(DATA_TYPE_ID, { message: "An id is 2 to 63 lower-case letters, digits and hyphens, starting with a letter or digit." })
  .openapi({ example: "thickness-measurements" });

const extension = z
  .string()
  .trim()
  .toLowerCase()
  .overwrite((value) => value.replace(/^\./, ""))
  .max(20)
  .regex(EXTENSION, { message: "An extension is letters and digits, optionally with inner dots, e.g. xlsx or tar.gz." });

const allowedExtensions = z
  .array(extension)
  .min(1)
  .max(MAX_EXTENSIONS)
  .openapi({
    description: "Extensions a file of this type may have; stored lower-case without the dot and without repeats (`.XLSX` becomes `xlsx`).",
    example: ["xlsx", "xls", "csv"],
  });

const name = z.string().trim().min(1).max(200).openapi({ example: "Thickness measurements" });

export const DataTypeSchema = z
  .object({
    id: dataTypeId,
    name: z.string(),
    allowedExtensions: z.array(z.string()).openapi({ example: ["xlsx", "xls", "csv"] }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("DataType");

export type DataType = z.infer<typeof DataTypeSchema>;

export const CreateDataTypeSchema = z
  .object({
    id: dataTypeId.optional().openapi({
      description:
        "Optional; derived from the name when absent (`Thickness measurements` → `thickness-measurements`). Unique across the API.",
    }),
    name,
    allowedExtensions,
  })
  .strict()
  .openapi("CreateDataType");

export const UpdateDataTypeSchema = updateBodyOf(DataTypeSchema, { id: dataTypeId, name, allowedExtensions }, "UpdateDataType");

export type CreateDataTypeInput = z.infer<typeof CreateDataTypeSchema>;
export type UpdateDataTypeInput = z.infer<typeof UpdateDataTypeSchema>;

export const DataTypeIdParam = z.object({
  id: dataTypeId.openapi({ param: { name: "id", in: "path" } }),
});
