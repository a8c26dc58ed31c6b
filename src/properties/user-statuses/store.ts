/** User statuses in D1: named, ordered extensions of the fixed system statuses. */
import type { Database } from "../../db/statements";
import { nameKey } from "../../pkg/unicode";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { ApiError, invalid, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { conflict, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import type { Versioned } from "../../pkg/resource";
import type { SystemStatus, UserStatus } from "./schema";
import { assertVersion, commitVersioned, retryWrite } from "../../pkg/resource";
import { countUses, unusedCondition } from "../../db/references";

export interface UserStatusRow {
  id: string;
  name: string;
  sort_order: number;
  status: string;
  etag: string;
  created_at: string;
  updated_at: string;
}

export const USER_STATUS_COLUMNS = "id, name, sort_order, status, etag, created_at, updated_at";
const KIND = "userStatus";

export function toUserStatus(row: UserStatusRow): Versioned<UserStatus> {
  return {
    value: { id: row.id, order: row.sort_order, name: row.name, status: row.status, createdAt: row.created_at, updatedAt: row.updated_at },
    etag: row.etag,
  };
}

const nameTaken = (name: string) =>
  conflict(`A user status named '${name}' already exists.`, [{ field: "body.name", rule: "unique", message: "The name is already used." }]);

export async function listSystemStatuses(db: Database): Promise<SystemStatus[]> {
  const { results } = await db
    .prepare("SELECT name, sort_order FROM system_statuses ORDER BY sort_order, name")
    .all<{ name: string; sort_order: number }>();
  return results.map((r) => ({ name: r.name, order: r.sort_order }));
}

/** The system status named exactly `status`, or a 400 on body.status listing the allowed names. */
async function requireSystemStatus(db: Database, status: string): Promise<void> {
  const all = await listSystemStatuses(db);
  if (all.some((s) => s.name === status)) return;
  const allowed = all.map((s) => s.name).join(", ");
  throw invalid("body.status", "invalid_value", `'${status}' is not a system status; allowed: ${allowed}.`);
}

export async function findUserStatus(db: Database, id: string): Promise<Versioned<UserStatus> | null> {
  const row = await db.prepare(`SELECT ${USER_STATUS_COLUMNS} FROM user_statuses WHERE id = ?1`).bind(id).first<UserStatusRow>();
  return row ? toUserStatus(row) : null;
}

export async function getUserStatus(db: Database, id: string): Promise<Versioned<UserStatus>> {
  const found = await findUserStatus(db, id);
  if (!found) throw notFound("User status", id);
  return found;
}

export async function createUserStatus(
  ctx: WriteContext,
  input: { name: string; status: string; order?: number | undefined },
): Promise<Versioned<UserStatus>> {
  await requireSystemStatus(ctx.db, input.status);
  // Without an order the status goes last; two concurrent creates may share an order, and the list
  // then sorts them by name, which is harmless.
  const order =
    input.order ??
    ((await ctx.db.prepare("SELECT coalesce(max(sort_order), 0) AS last FROM user_statuses").first<{ last: number }>())?.last ?? 0) + 1;
  const id = ctx.uuid();
  const etag = newEtagToken();
  const userStatus: UserStatus = { id, order, name: input.name, status: input.status, createdAt: ctx.now, updatedAt: ctx.now };
  await runBatch(
    ctx.db,
    [
      ctx.db
        .prepare(
          "INSERT INTO user_statuses (id, name, sort_order, status, etag, created_at, updated_at, created_by, name_key) " +
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8)",
        )
        .bind(id, input.name, order, input.status, etag, ctx.now, ctx.actorId, nameKey(input.name)),
      ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: userStatus }),
    ],
    () => nameTaken(input.name),
  );
  return { value: userStatus, etag };
}

export async function updateUserStatus(
  ctx: WriteContext,
  input: { id: string; name: string; status: string; order: number },
): Promise<Versioned<UserStatus>> {
  return retryWrite(ctx, async () => {
    const current = await getUserStatus(ctx.db, input.id);
    assertVersion(ctx, current.etag);
    await requireSystemStatus(ctx.db, input.status);
    const etag = newEtagToken();
    const userStatus: UserStatus = { ...current.value, name: input.name, status: input.status, order: input.order, updatedAt: ctx.now };
    await commitVersioned(
      ctx,
      [
        // Applies only to the version read above: a concurrent write in between makes this a 412.
        ctx.db
          .prepare(
            "UPDATE user_statuses SET name = ?1, name_key = ?8, sort_order = ?2, status = ?3, etag = ?4, updated_at = ?5 " +
              "WHERE id = ?6 AND etag = ?7",
          )
          .bind(input.name, input.order, input.status, etag, ctx.now, input.id, current.etag, nameKey(input.name)),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: input.id, action: "updated", payload: userStatus },
          { table: "user_statuses", etag },
        ),
      ],
      () => nameTaken(input.name),
    );
    return { value: userStatus, etag };
  });
}

export async function deleteUserStatus(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getUserStatus(ctx.db, id);
    assertVersion(ctx, current.etag);
    // What refers to a user status: src/db/references.ts.
    const uses = await countUses(ctx.db, "userStatus", id);
    if (uses > 0) throw new ApiError("InUse", `The user status is used by ${uses} entit${uses === 1 ? "y" : "ies"}.`);
    const [removed] = await ctx.db.batch([
      // Also guarded on what the count read: a use written since makes the delete a 412, not a dangling status.
      ctx.db.prepare(`DELETE FROM user_statuses WHERE id = ?1 AND etag = ?2 AND ${unusedCondition("userStatus")}`).bind(id, current.etag),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1) throw preconditionFailed();
  });
}
