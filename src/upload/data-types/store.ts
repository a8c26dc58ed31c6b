/** Data types in D1 (spec 2.9): id and name unique across the API; files refer to them. */
import { tableStatements, type Database, type Insert } from "../../db/statements";
import { dataTypes } from "../../db/schema";
import { nameKey } from "../../pkg/unicode";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { ApiError, invalid, notFound } from "../../pkg/errors";
import { preconditionFailed } from "../../pkg/etag";
import { conflict, isUniqueViolation, newEtagToken, type WriteContext } from "../../pkg/db";
import { DATA_TYPE_ID, type CreateDataTypeInput, type DataType, type UpdateDataTypeInput } from "./schema";
import { assertVersion, type Versioned, retryWrite } from "../../pkg/resource";

export interface DataTypeRow {
  id: string;
  name: string;
  allowed_extensions: string;
  etag: string;
  created_at: string;
  updated_at: string;
}

export const DATA_TYPE_COLUMNS = "id, name, allowed_extensions, etag, created_at, updated_at";
const COLUMNS = DATA_TYPE_COLUMNS;
const KIND = "dataType";

export function toDataType(row: DataTypeRow): Versioned<DataType> {
  return {
    value: {
      id: row.id,
      name: row.name,
      allowedExtensions: JSON.parse(row.allowed_extensions) as string[],
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: row.etag,
  };
}

const idTaken = (id: string) =>
  conflict(`A data type with the id '${id}' already exists.`, [{ field: "body.id", rule: "unique", message: "The id is already used." }]);
const nameTaken = (name: string) =>
  conflict(`A data type named '${name}' already exists.`, [{ field: "body.name", rule: "unique", message: "The name is already used." }]);

/** `Thickness measurements (v2)` → `thickness-measurements-v2`. */
export function slugOf(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
}

export async function findDataType(db: Database, id: string): Promise<Versioned<DataType> | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM data_types WHERE id = ?1`).bind(id).first<DataTypeRow>();
  return row ? toDataType(row) : null;
}

export async function getDataType(db: Database, id: string): Promise<Versioned<DataType>> {
  const found = await findDataType(db, id);
  if (!found) throw notFound("Data type", id);
  return found;
}

/** Which unique rule a failed insert or update broke: checked again by reading, since the error text names an index. */
async function uniqueProblem(db: Database, id: string, name: string, own: string | null): Promise<ApiError> {
  const row = await db
    .prepare("SELECT id FROM data_types WHERE name_key = ?1 AND id IS NOT ?2")
    .bind(nameKey(name), own)
    .first<{ id: string }>();
  return row ? nameTaken(name) : idTaken(id);
}

export async function createDataType(ctx: WriteContext, input: CreateDataTypeInput): Promise<Versioned<DataType>> {
  const id = input.id ?? slugOf(input.name);
  if (!DATA_TYPE_ID.test(id)) {
    throw invalid(
      "body.id",
      "required",
      `No id can be derived from the name '${input.name}'; give one (2 to 63 lower-case letters, digits and hyphens).`,
    );
  }
  const etag = newEtagToken();
  const dataType: DataType = {
    id,
    name: input.name,
    allowedExtensions: [...new Set(input.allowedExtensions)],
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  try {
    await ctx.db.batch([
      insertDataTypeStatement(ctx.db, {
        id,
        name: dataType.name,
        allowedExtensions: JSON.stringify(dataType.allowedExtensions),
        etag,
        createdAt: ctx.now,
        updatedAt: ctx.now,
        createdBy: ctx.actorId,
      }),
      ...outboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "created", payload: dataType }),
    ]);
  } catch (error) {
    if (isUniqueViolation(error)) throw await uniqueProblem(ctx.db, id, input.name, null);
    throw error;
  }
  return { value: dataType, etag };
}

export async function updateDataType(ctx: WriteContext, input: UpdateDataTypeInput): Promise<Versioned<DataType>> {
  return retryWrite(ctx, async () => {
    const current = await getDataType(ctx.db, input.id);
    assertVersion(ctx, current.etag);
    const etag = newEtagToken();
    const dataType: DataType = {
      ...current.value,
      name: input.name,
      allowedExtensions: [...new Set(input.allowedExtensions)],
      updatedAt: ctx.now,
    };
    let update: D1Result | undefined;
    try {
      [update] = await ctx.db.batch([
        ctx.db
          .prepare(
            "UPDATE data_types SET name = ?1, name_key = ?7, allowed_extensions = ?2, etag = ?3, updated_at = ?4 " +
              "WHERE id = ?5 AND etag = ?6",
          )
          .bind(dataType.name, JSON.stringify(dataType.allowedExtensions), etag, ctx.now, input.id, current.etag, nameKey(dataType.name)),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: KIND, entityId: input.id, action: "updated", payload: dataType },
          { table: "data_types", etag },
        ),
      ]);
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(input.name);
      throw error;
    }
    if (update?.meta.changes !== 1) throw preconditionFailed();
    return { value: dataType, etag };
  });
}

export async function deleteDataType(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    const current = await getDataType(ctx.db, id);
    assertVersion(ctx, current.etag);
    const inUse = () => new ApiError("InUse", `The data type ${id} is used by files (or uploads in progress); delete them first.`);
    const used = await ctx.db.prepare("SELECT 1 AS used FROM files WHERE data_type_id = ?1 LIMIT 1").bind(id).first();
    if (used) throw inUse();
    const [removed] = await ctx.db.batch([
      // Guarded so a file posted since the check above keeps its data type.
      ctx.db
        .prepare("DELETE FROM data_types WHERE id = ?1 AND etag = ?2 AND NOT EXISTS (SELECT 1 FROM files WHERE data_type_id = ?1)")
        .bind(id, current.etag),
      ...guardedOutboxStatements(ctx.db, ctx, { entityKind: KIND, entityId: id, action: "deleted", payload: null }, "previousChanged"),
    ]);
    if (removed?.meta.changes !== 1) {
      const again = await ctx.db.prepare("SELECT 1 AS used FROM files WHERE data_type_id = ?1 LIMIT 1").bind(id).first();
      if (again) throw inUse();
      throw new ApiError("Conflict", "The data type changed while it was being deleted; read it again.");
    }
  });
}

const dataTypeTable = tableStatements(dataTypes);

/** Inserts a data type (its name key derived from its name); `orIgnore` keeps one already there. */
export function insertDataTypeStatement(
  db: Database,
  values: Omit<Insert<typeof dataTypes>, "nameKey">,
  options: { orIgnore?: boolean } = {},
): D1PreparedStatement {
  const row = { ...values, nameKey: nameKey(values.name) };
  return options.orIgnore ? dataTypeTable.insertOrIgnore(db, row) : dataTypeTable.insert(db, row);
}
