import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { listQueryShape } from "../../pkg/query";

export const ActivityTypeSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("ActivityType");

export type ActivityType = z.infer<typeof ActivityTypeSchema>;

const fields = {
  name: z.string().trim().min(1).max(200).openapi({ description: "Unique (case-insensitive)." }),
  description: z.string().trim().max(2000).nullable().default(null),
};

export const CreateActivityTypeSchema = z.object(fields).strict().openapi("CreateActivityType");
export const UpdateActivityTypeSchema = updateBodyOf(ActivityTypeSchema, fields, "UpdateActivityType");

export type ActivityTypeInput = z.infer<typeof CreateActivityTypeSchema>;

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const ActivityTypeListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of name or description." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, createdAt, updatedAt. Default: name asc.",
    example: "name asc",
  }),
  skip,
  take,
  includeTotal,
});
