/** GET /UserStatuses: ids, excludeIds, searchText (name), statuses, order and paging. */
import type { Database } from "../../db/statements";
import { z } from "@hono/zod-openapi";
import { compileListQuery, defineList, inList, listQueryShape, runListQuery, splitCsv, noProperties } from "../../pkg/query";
import type { UserStatus } from "./schema";
import { toUserStatus, USER_STATUS_COLUMNS, type UserStatusRow } from "./store";

const userStatusList = defineList({
  table: "user_statuses",
  alias: "s",
  entityKind: "userStatus",
  idColumn: "id",
  fields: {
    order: { column: "s.sort_order", type: "number" },
    name: { column: "lower(s.name)" },
    status: { column: "s.status" },
    createdAt: { column: "s.created_at", type: "datetime" },
    updatedAt: { column: "s.updated_at", type: "datetime" },
  },
  searchColumns: ["s.name"],
  defaultOrder: "order asc, name asc",
  select: USER_STATUS_COLUMNS.split(", ")
    .map((column) => `s.${column}`)
    .join(", "),
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;
export const UserStatusListQuery = z.object({
  ids,
  excludeIds,
  searchText,
  statuses: z
    .string()
    .optional()
    .openapi({ description: "Only user statuses of these system statuses. Comma-separated.", example: "new,active" }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over order, name, status, createdAt, updatedAt. Default: order asc, name asc.",
    example: "status asc, order asc",
  }),
  skip,
  take,
  includeTotal,
});

export async function listUserStatuses(
  db: Database,
  query: z.infer<typeof UserStatusListQuery>,
): Promise<{ items: UserStatus[]; total: number | undefined }> {
  const statuses = splitCsv(query.statuses);
  const compiled = await compileListQuery(userStatusList, query, noProperties, statuses.length > 0 ? [inList("s.status", statuses)] : []);
  const { items, total } = await runListQuery<UserStatusRow>(db, compiled);
  return { items: items.map((row) => toUserStatus(row).value), total };
}
