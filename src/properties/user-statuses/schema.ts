import { z } from "@hono/zod-openapi";

export const UserStatusSchema = z
  .object({
    id: z.uuid(),
    order: z.number().int().openapi({ description: "Position in status pickers; lists sort by order, then name." }),
    name: z.string().openapi({ description: "Unique (case-insensitive)." }),
    status: z.string().openapi({ description: "The system status this user status extends (see GET /SystemStatuses).", example: "inProgress" }),
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
export const UpdateUserStatusSchema = z
  .object({
    id: z.uuid(),
    ...fields,
    order,
    // Read-only fields of a read, accepted and ignored so a client can send back what it got.
    createdAt: z.string().optional().openapi({ description: "Read-only; ignored." }),
    updatedAt: z.string().optional().openapi({ description: "Read-only; ignored." }),
  })
  .strict()
  .openapi("UpdateUserStatus");

export const SystemStatusSchema = z
  .object({
    name: z.string().openapi({ example: "new" }),
    order: z.number().int(),
  })
  .openapi("SystemStatus");

export type SystemStatus = z.infer<typeof SystemStatusSchema>;
