/** Activity types in D1: CRUD and the list. A type in use by an activity template or activity cannot be deleted. */
import { tableStatements, type Database, type Insert } from "../../db/statements";
import { activityTypes } from "../../db/schema";
import { nameKey } from "../../pkg/unicode";
import type { z } from "@hono/zod-openapi";
import { guardedOutboxStatements } from "../../events/outbox";
import { conflict, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import { ApiError, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { compileListQuery, defineList, runListQuery, noProperties } from "../../pkg/query";
import type { ActivityType, ActivityTypeInput, ActivityTypeListQuery } from "./schema";
import { assertVersion, commitVersioned, retryWrite } from "../../pkg/resource";

interface ActivityTypeRow {
  id: string;
  name: string;
  description: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
}

const KIND = "activityType";
const COLUMNS = "id, name, description, etag, created_at, updated_at";

const activityTypeList = defineList({
  table: "activity_types",
  alias: "y",
  entityKind: KIND,
  idColumn: "id",
  select: COLUMNS.split(", ")
    .map((c) => `y.${c}`)
    .join(", "),
  fields: {
    name: { column: "lower(y.name)" },
    createdAt: { column: "y.created_at", type: "datetime" },
    updatedAt: { column: "y.updated_at", type: "datetime" },
  },
  searchColumns: ["y.name", "y.description"],
  defaultOrder: "name asc",
});

function toActivityType(row: ActivityTypeRow): { value: ActivityType; etag: string } {
  return {
    value: { id: row.id, name: row.name, description: row.description, createdAt: row.created_at, updatedAt: row.updated_at },
    etag: row.etag,
  };
}

const nameTaken = (name: string) =>
  conflict(`An activity type named '${name}' already exists.`, [
    { field: "body.name", rule: "unique", message: "The name is already used." },
  ]);

async function readRow(db: Database, id: string): Promise<ActivityTypeRow | null> {
  return db.prepare(`SELECT ${COLUMNS} FROM activity_types WHERE id = ?1`).bind(id.toLowerCase()).first<ActivityTypeRow>();
}

export async function getActivityType(db: Database, id: string): Promise<{ value: ActivityType; etag: string }> {
  const row = await readRow(db, id);
  if (!row) throw notFound("Activity type", id);
  return toActivityType(row);
}

export async function listActivityTypes(
  db: Database,
  query: z.infer<typeof ActivityTypeListQuery>,
): Promise<{ items: ActivityType[]; total: number | undefined }> {
  const { items, total } = await runListQuery<ActivityTypeRow>(db, await compileListQuery(activityTypeList, query, noProperties));
  return { items: items.map((row) => toActivityType(row).value), total };
}

export async function createActivityType(ctx: WriteContext, input: ActivityTypeInput): Promise<{ value: ActivityType; etag: string }> {
  const row: ActivityTypeRow = {
    id: ctx.uuid(),
    name: input.name,
    description: input.description,
    etag: newEtagToken(),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  const created = toActivityType(row);
  await runBatch(
    ctx.db,
    [
      insertActivityTypeStatement(ctx.db, {
        id: row.id,
        name: row.name,
        description: row.description,
        etag: row.etag,
        createdAt: ctx.now,
        updatedAt: ctx.now,
        createdBy: ctx.actorId,
      }),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: KIND, entityId: row.id, action: "created", payload: created.value, etag: created.etag },
        { table: "activity_types", etag: row.etag },
      ),
    ],
    () => nameTaken(input.name),
  );
  return created;
}

export async function updateActivityType(
  ctx: WriteContext,
  input: ActivityTypeInput & { id: string },
): Promise<{ value: ActivityType; etag: string }> {
  return retryWrite(ctx, async () => {
    const current = await readRow(ctx.db, input.id);
    if (!current) throw notFound("Activity type", input.id);
    assertVersion(ctx, current.etag);
    const row: ActivityTypeRow = {
      ...current,
      name: input.name,
      description: input.description,
      etag: newEtagToken(),
      updated_at: ctx.now,
    };
    const updated = toActivityType(row);
    await commitVersioned(
      ctx,
      [
        ctx.db
          .prepare(
            "UPDATE activity_types SET name = ?1, name_key = ?7, description = ?2, etag = ?3, updated_at = ?4 WHERE id = ?5 AND etag = ?6",
          )
          .bind(row.name, row.description, row.etag, ctx.now, row.id, current.etag, nameKey(row.name)),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: row.id, action: "updated", payload: updated.value, etag: updated.etag },
          { table: "activity_types", etag: row.etag },
        ),
      ],
      () => nameTaken(input.name),
    );
    return updated;
  });
}

const USES_SQL =
  `(SELECT count(*) FROM activity_templates WHERE activity_type_id = ?1) AS templates, (SELECT count(*) FROM ` +
  `activities WHERE activity_type_id = ?1) AS activities`;

export async function deleteActivityType(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await readRow(ctx.db, id);
    if (!current) throw notFound("Activity type", id);
    assertVersion(ctx, current.etag);
    const uses = await ctx.db.prepare(`SELECT ${USES_SQL}`).bind(current.id).first<{ templates: number; activities: number }>();
    if (uses && (uses.templates > 0 || uses.activities > 0)) {
      throw new ApiError(
        "InUse",
        `The activity type is used by ${uses.templates} activity template revision(s) and ${uses.activities} activit(ies).`,
      );
    }
    // The uses are re-checked inside the delete, so one created meanwhile keeps the type.
    const [removed] = await ctx.db.batch([
      ctx.db
        .prepare(
          `DELETE FROM activity_types WHERE id = ?1 AND etag = ?2
           AND NOT EXISTS (SELECT 1 FROM activity_templates WHERE activity_type_id = ?1) AND NOT EXISTS (SELECT 1 FROM
           activities WHERE activity_type_id = ?1)`,
        )
        .bind(current.id, current.etag),
      ...guardedOutboxStatements(
        ctx.db,
        ctx,
        { entityKind: KIND, entityId: current.id, action: "deleted", payload: null },
        "previousChanged",
      ),
    ]);
    if (removed?.meta.changes !== 1) {
      const again = await readRow(ctx.db, id);
      if (again && again.etag === current.etag) throw new ApiError("InUse", "The activity type came into use while it was being deleted.");
      throw preconditionFailed();
    }
  });
}

const activityTypeTable = tableStatements(activityTypes);

/** Inserts an activity type (its name key derived from its name). */
export function insertActivityTypeStatement(db: Database, values: Omit<Insert<typeof activityTypes>, "nameKey">): D1PreparedStatement {
  return activityTypeTable.insert(db, { ...values, nameKey: nameKey(values.name) });
}
