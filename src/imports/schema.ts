/** Spreadsheet imports (issue 37): what POST /Imports takes and what an import reads as. */
import { z } from "@hono/zod-openapi";

export const IMPORT_KINDS = ["deviations", "workItems", "assets", "propertyValues", "readings"] as const;
export type ImportKindName = (typeof IMPORT_KINDS)[number];
export const IMPORT_STATUSES = ["queued", "running", "completed", "failed"] as const;

/** Rows a dry run answers at once; a larger file's dry run is queued like a commit. */
export const INLINE_DRY_RUN_ROWS = 1000;
/** Largest file content the body carries itself (larger: upload it and name its fileId). */
export const MAX_INLINE_CONTENT_CHARS = 512 * 1024;

export const CreateImportSchema = z
  .object({
    kind: z.enum(IMPORT_KINDS).openapi({ description: "What each row becomes." }),
    fileId: z.uuid().optional().openapi({
      description: "An uploaded file (POST /Files or /Uploads) the caller may see: a .csv or .xlsx of any size the upload takes.",
    }),
    fileName: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .optional()
      .openapi({ description: "With content or contentBase64: the file's name, whose extension (.csv or .xlsx) says its format." }),
    content: z
      .string()
      .max(MAX_INLINE_CONTENT_CHARS)
      .optional()
      .openapi({ description: "A small CSV given in the body (instead of fileId)." }),
    contentBase64: z
      .base64()
      .max(MAX_INLINE_CONTENT_CHARS)
      .optional()
      .openapi({ description: "A small file (CSV or XLSX) given in the body, base64 (instead of fileId)." }),
    mapping: z
      .record(z.string().max(255), z.string().max(300).nullable())
      .optional()
      .openapi({
        description:
          "Column header -> what it becomes: a field (`description`, `risk.id`, `assetReference.equipment`...), `property:Name`, " +
          "or null (not imported). Given columns override the proposed mapping; every named column must exist in the file.",
      }),
    rowKey: z
      .string()
      .max(255)
      .optional()
      .openapi({ description: "The header of the column whose value identifies a row: a row is written once per import key and row key." }),
    importKey: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .openapi({
        description:
          "Rows written under the same import key are written once (committed twice, or restarted). Default: the file's id (or a " +
          "hash of the content); give one to span several files (with rowKey).",
      }),
    dryRun: z
      .boolean()
      .default(false)
      .openapi({ description: "Validate every row as its single request would and write nothing; answers the proposed mapping too." }),
  })
  .strict()
  .superRefine((body, ctx) => {
    const sources = [body.fileId, body.content, body.contentBase64].filter((s) => s !== undefined).length;
    if (sources !== 1)
      ctx.addIssue({
        code: "custom",
        path: [],
        params: { rule: "oneOf" },
        message: "Give exactly one of fileId, content and contentBase64.",
      });
    if (body.fileId === undefined && body.fileName === undefined && sources === 1)
      ctx.addIssue({
        code: "custom",
        path: ["fileName"],
        params: { rule: "required" },
        message: "fileName is required with content or contentBase64.",
      });
  })
  .openapi("CreateImport");
export type CreateImport = z.infer<typeof CreateImportSchema>;

export const ImportProblemSchema = z
  .object({
    row: z.number().int().openapi({ description: "The row's number in the file (the header is row 1 of a typical sheet)." }),
    column: z.string().nullable().openapi({ description: "The column the value came from; null for the row as a whole." }),
    field: z.string().openapi({ description: "The field of the single request's body (`body.description`)." }),
    rule: z.string(),
    message: z.string(),
  })
  .openapi("ImportProblem");

const Counts = {
  total: z.number().int().nullable().openapi({ description: "Rows in the file (empty rows left out); null until the file is split." }),
  processed: z.number().int(),
  created: z.number().int().openapi({ description: "Rows written (created or replaced); in a dry run, rows valid." }),
  skipped: z.number().int().openapi({
    description: "Rows already written under the import key (committed twice, restarted), and replacements that change nothing.",
  }),
  failed: z.number().int().openapi({ description: "Rows with problems (GET /Imports/{id}/Problems)." }),
};

export const ImportSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(IMPORT_KINDS),
    status: z.enum(IMPORT_STATUSES),
    dryRun: z.boolean(),
    fileName: z.string(),
    format: z.enum(["csv", "xlsx"]),
    fileId: z.uuid().nullable(),
    importKey: z.string(),
    rowKey: z.string().nullable(),
    mapping: z.record(z.string(), z.string().nullable()),
    ...Counts,
    problem: z
      .object({ rule: z.string(), message: z.string() })
      .nullable()
      .openapi({ description: "Why a failed import failed (a problem of the file as a whole)." }),
    createdBy: z.object({ id: z.string(), name: z.string().nullable() }).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .openapi("Import");
export type ImportResource = z.infer<typeof ImportSchema>;

export const DryRunAnswerSchema = z
  .object({
    dryRun: z.literal(true),
    kind: z.enum(IMPORT_KINDS),
    format: z.enum(["csv", "xlsx"]),
    headers: z.array(z.string()),
    proposedMapping: z.record(z.string(), z.string().nullable()).openapi({ description: "The default mapping of the file's headers." }),
    mapping: z.record(z.string(), z.string().nullable()).openapi({ description: "The mapping the rows were checked with." }),
    total: z.number().int(),
    valid: z.number().int(),
    invalid: z.number().int(),
    problems: z.array(ImportProblemSchema),
  })
  .openapi("ImportDryRun");
export type DryRunAnswer = z.infer<typeof DryRunAnswerSchema>;
