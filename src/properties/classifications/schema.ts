import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { checkTreeShape, checkUniqueElementNames } from "./tree";

/** A HEX colour as the frontend renders it: #RRGGBB or #RGB. Shared with entity type icons. */
export const hexColor = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})$/, { message: "Expected a HEX colour: #RRGGBB or #RGB." })
  .openapi({ example: "#E53935" });

/** The only classification format the interface names; others are not shown, so none is accepted. */
export const CLASSIFICATION_FORMATS = ["valueHierarchy"] as const;

const elementName = z.string().trim().min(1).max(200);
const label = (max: number) => z.string().trim().max(max).nullable().optional();

/** One element of a classification tree as written by a client; `children` nest the hierarchy. */
export interface ClassificationElementInput {
  name: string;
  displayName?: string | null | undefined;
  code?: string | null | undefined;
  applierCode?: string | null | undefined;
  color?: string | null | undefined;
  order?: number | null | undefined;
  grade?: number | null | undefined;
  children: ClassificationElementInput[];
}

// strictObject, not .strict(): .strict() reads the shape at once, before the recursive getter can.
export const ClassificationElementInputSchema: z.ZodType<ClassificationElementInput> = z
  .strictObject({
    name: elementName.openapi({ description: "Unique within the classification: it is the value a classification property stores." }),
    displayName: label(200),
    code: label(100),
    applierCode: label(100),
    color: hexColor.nullable().optional(),
    order: z.number().int().nullable().optional().openapi({ description: "A client-defined sort key, usable in ordering." }),
    grade: z.number().nullable().optional(),
    get children() {
      return z.array(ClassificationElementInputSchema).default([]);
    },
  })
  .openapi("ClassificationElementInput");

/**
 * The tree as a whole: the shape limits are checked on the raw input first (so a hostile, deeply
 * nested body is refused before the recursive parse), then names must be unique across the tree.
 */
const elementsInput = z
  .preprocess(checkTreeShape, z.array(ClassificationElementInputSchema))
  .superRefine(checkUniqueElementNames)
  .default([])
  .openapi({ description: "The element tree (at most 10 levels and 2000 elements). A PUT replaces the whole tree." });

export interface ClassificationElement {
  name: string;
  displayName: string | null;
  code: string | null;
  applierCode: string | null;
  color: string | null;
  order: number | null;
  grade: number | null;
  children: ClassificationElement[];
}

export const ClassificationElementSchema: z.ZodType<ClassificationElement> = z
  .object({
    name: z.string(),
    displayName: z.string().nullable(),
    code: z.string().nullable(),
    applierCode: z.string().nullable(),
    color: z.string().nullable(),
    order: z.number().int().nullable(),
    grade: z.number().nullable(),
    get children() {
      return z.array(ClassificationElementSchema);
    },
  })
  .openapi("ClassificationElement");

export const ClassificationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    format: z.enum(CLASSIFICATION_FORMATS),
    description: z.string().nullable(),
    elements: z.array(ClassificationElementSchema),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Classification");

export type Classification = z.infer<typeof ClassificationSchema>;

const fields = {
  name: z.string().trim().min(1).max(200).openapi({ description: "Unique (case-insensitive)." }),
  format: z
    .enum(CLASSIFICATION_FORMATS)
    .default("valueHierarchy")
    .openapi({ description: "valueHierarchy is the only format; it is the default." }),
  description: z.string().trim().max(2000).nullable().default(null),
  elements: elementsInput,
};

export const CreateClassificationSchema = z.object(fields).strict().openapi("CreateClassification");
export const UpdateClassificationSchema = updateBodyOf(ClassificationSchema, fields, "UpdateClassification");

export type ClassificationInput = z.infer<typeof CreateClassificationSchema>;
