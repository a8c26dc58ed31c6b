/** The directory of users (issue 21 §4): shapes and the list query. */
import { z } from "@hono/zod-openapi";
import { listQueryShape } from "../pkg/query";

export const UserSchema = z
  .object({
    id: z.string().openapi({
      description: "The user's id: the token's `sub`. This is what `objectOwner.id` / `ObjectOwnerId` name.",
      example: "client:local-integration",
    }),
    name: z
      .string()
      .openapi({ description: "Display name (the token's `name`, else `preferred_username`, else the id).", example: "Local integration" }),
    kind: z
      .enum(["person", "client"])
      .openapi({ description: "person, or client: a machine client (OAuth client credentials).", example: "client" }),
    clientId: z
      .string()
      .nullable()
      .openapi({ description: "A machine client's OAuth client id; null for people.", example: "local-integration" }),
    firstSeenAt: z
      .string()
      .openapi({ description: "The first call this service recorded (ISO 8601 UTC).", example: "2026-11-22T10:00:00.000Z" }),
    lastSeenAt: z
      .string()
      .openapi({ description: "The latest call this service recorded, accurate to five minutes.", example: "2026-11-22T10:05:00.000Z" }),
  })
  .openapi("User");

export type User = z.infer<typeof UserSchema>;

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

export const UserListQuery = z.object({
  keyword: z.string().optional().openapi({
    description: "Case-insensitive (ASCII) substring of the name, the id or the client id (the original identity service's parameter).",
    example: "local-integration",
  }),
  searchText: searchText.openapi({
    description: "The same search as keyword (the name used by every other list); both given: both must match.",
  }),
  kinds: z.string().optional().openapi({ description: "Comma-separated kinds: person, client.", example: "client" }),
  ids: ids.openapi({ description: "Only these users: comma-separated ids (any number; ids are not UUIDs here)." }),
  excludeIds: excludeIds.openapi({ description: "Leave these users out: comma-separated ids." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, id, kind, firstSeenAt, lastSeenAt. Default: name asc; ties by id.",
  }),
  skip,
  take,
  includeTotal,
});
