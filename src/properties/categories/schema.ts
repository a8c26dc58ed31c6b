import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";

export const CategorySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    isDefault: z.boolean().openapi({
      description: "The default category (Ungrouped) is set on definitions created without one. It can be renamed and stays the default.",
    }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Category");

export type Category = z.infer<typeof CategorySchema>;

const name = z.string().trim().min(1).max(200);

export const CreateCategorySchema = z.object({ name }).strict().openapi("CreateCategory");
export const UpdateCategorySchema = updateBodyOf(CategorySchema, { name }, "UpdateCategory");
