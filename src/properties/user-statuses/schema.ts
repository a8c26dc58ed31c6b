import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";

export const UserStatusSchema = z
  .object({
    id: z.uuid(),
    order: z.number().int().openapi({ description: "Position in status pickers; lists sort by order, then name." }),
    name: z.string().openapi({ description: "Unique (case-insensitive)." }),
    status: z
      .string()
      .openapi({ description: "The system status this user status extends (see GET /SystemStatuses).", example: "inProgress" }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("UserStatus");

export type UserStatus = z.infer<typeof UserStatusSchema>;

const fields = {
  name: z.string().trim().min(1).max(200),
  status: z.string().trim().min(1).max(100).openapi({ description: "A system status name, e.g. new or active.", example: "active" }),
};
const order = z.number().int().min(-1_000_000).max(1_000_000);

export const CreateUserStatusSchema = z
  .object({ ...fields, order: order.optional().openapi({ description: "Default: after the last user status." }) })
  .strict()
  .openapi("CreateUserStatus");
export const UpdateUserStatusSchema = updateBodyOf(UserStatusSchema, { ...fields, order }, "UpdateUserStatus");

export const SystemStatusSchema = z
  .object({
    name: z.string().openapi({ example: "new" }),
    order: z.number().int(),
  })
  .openapi("SystemStatus");

export type SystemStatus = z.infer<typeof SystemStatusSchema>;
