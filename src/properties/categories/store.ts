/** Categories in D1: property definitions are grouped by them; one (Ungrouped) is the default. */
import type { Database } from "../../db/statements";
import { nameKey } from "../../pkg/unicode";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { ApiError, notFound } from "../../pkg/errors";
import { conflict, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import type { Category } from "./schema";
import { assertVersion, type Versioned, commitVersioned, retryWrite } from "../../pkg/resource";

export interface CategoryRow {
  id: string;
  name: string;
  is_default: number;
  etag: string;
  created_at: string;
  updated_at: string;
}

export const CATEGORY_COLUMNS = "id, name, is_default, etag, created_at, updated_at";
const COLUMNS = CATEGORY_COLUMNS;
const KIND = "category";

export function toCategory(row: CategoryRow): Versioned<Category> {
  return {
    value: { id: row.id, name: row.name, isDefault: row.is_default === 1, createdAt: row.created_at, updatedAt: row.updated_at },
    etag: row.etag,
  };
}

const nameTaken = (name: string) =>
  conflict(`A category named '${name}' already exists.`, [{ field: "body.name", rule: "unique", message: "The name is already used." }]);

export async function findCategory(db: Database, id: string): Promise<Versioned<Category> | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM categories WHERE id = ?1`).bind(id).first<CategoryRow>();
  return row ? toCategory(row) : null;
}

export async function getCategory(db: Database, id: string): Promise<Versioned<Category>> {
  const found = await findCategory(db, id);
  if (!found) throw notFound("Category", id);
  return found;
}

export async function createCategory(ctx: WriteContext, input: { name: string }): Promise<Versioned<Category>> {
  const id = ctx.uuid();
  const etag = newEtagToken();
  const category: Category = { id, name: input.name, isDefault: false, createdAt: ctx.now, updatedAt: ctx.now };
  await runBatch(
    ctx.db,
    [
      ctx.db
        .prepare(
          "INSERT INTO categories (id, name, is_default, etag, created_at, updated_at, created_by, name_key) VALUES (?1, " +
            "?2, 0, ?3, ?4, ?4, ?5, ?6)",
        )
        .bind(id, input.name, etag, ctx.now, ctx.actorId, nameKey(input.name)),
      ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: category }),
    ],
    () => nameTaken(input.name),
  );
  return { value: category, etag };
}

export async function updateCategory(ctx: WriteContext, input: { id: string; name: string }): Promise<Versioned<Category>> {
  return retryWrite(ctx, async () => {
    const current = await getCategory(ctx.db, input.id);
    assertVersion(ctx, current.etag);
    const etag = newEtagToken();
    const category: Category = { ...current.value, name: input.name, updatedAt: ctx.now };
    // The update only applies to the version read above, so a concurrent write in between is a 412.
    await commitVersioned(
      ctx,
      [
        ctx.db
          .prepare("UPDATE categories SET name = ?1, name_key = ?6, etag = ?2, updated_at = ?3 WHERE id = ?4 AND etag = ?5")
          .bind(input.name, etag, ctx.now, input.id, current.etag, nameKey(input.name)),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: input.id, action: "updated", payload: category },
          { table: "categories", etag },
        ),
      ],
      () => nameTaken(input.name),
    );
    return { value: category, etag };
  });
}

export async function deleteCategory(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getCategory(ctx.db, id);
    assertVersion(ctx, current.etag);
    if (current.value.isDefault) throw new ApiError("Conflict", "The default category cannot be deleted; it can be renamed.");
    const used = await ctx.db
      .prepare("SELECT count(*) AS n FROM property_definitions WHERE category_id = ?1")
      .bind(id)
      .first<{ n: number }>();
    if (used && used.n > 0) throw new ApiError("InUse", `The category is used by ${used.n} property definition(s).`);
    const [removed] = await ctx.db.batch([
      // Guarded so a definition added to the category since the check above keeps it alive.
      ctx.db
        .prepare(
          "DELETE FROM categories WHERE id = ?1 AND etag = ?2 AND NOT EXISTS (SELECT 1 FROM property_definitions WHERE category_id = ?1)",
        )
        .bind(id, current.etag),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1) throw new ApiError("Conflict", "The category changed while it was being deleted; read it again.");
  });
}
