/**
 * Model definitions in D1: the owner of model_definitions. Reads map rows with the schema's own
 * mapper; writes are the kit's typed statements, guarded on the version read. A definition a model
 * uses cannot be deleted or renamed: the delete is guarded on no model using it (hand-written, as
 * its condition reads the models).
 */
import { tableStatements, type Database, type Row } from "../../db/statements";
import { modelDefinitions } from "../../db/schema";
import type { Bindings } from "../../env";
import { guardedOutboxStatements, outboxStatements } from "../../events/outbox";
import { conflict, newEtagToken, runBatch, type WriteContext } from "../../pkg/db";
import { ApiError, invalid, notFound } from "../../pkg/errors";
import { assertVersion, commitVersioned, type Versioned, retryWrite } from "../../pkg/resource";
import { nameKey } from "../../pkg/unicode";
import { hostFor } from "../../dataprocessing/host";
import { viaHost } from "../../dataprocessing/host-errors";
import { storedEnum } from "../stored";
import { LOCATIONS, type Location } from "./schema";

const definitionTable = tableStatements(modelDefinitions);

export type DefinitionRow = Row<typeof modelDefinitions>;
/** A row read with every column (`SELECT ${definitionTable.columns}`, or a list page), typed by the schema. */
export const definitionRow = (raw: Record<string, unknown>): DefinitionRow => definitionTable.row(raw);
const SELECT_DEFINITION = `SELECT ${definitionTable.columns} FROM model_definitions`;

interface DefinitionInput {
  name: string;
  version: string;
  uri: string | null;
  location: Location;
}

export const definitionOf = (r: DefinitionRow) => ({
  id: r.id,
  name: r.name,
  version: r.version,
  uri: r.uri,
  location: storedEnum(LOCATIONS, r.location, "model_definitions.location"),
  createdDate: r.createdAt,
});
export type ModelDefinition = ReturnType<typeof definitionOf>;

async function checkDefinition(env: Bindings, input: DefinitionInput): Promise<void> {
  if (input.location === "External" && !input.uri) throw invalid("body.uri", "required", "uri is required when location is External.");
  if (input.location === "ACR" && input.uri)
    throw invalid("body.uri", "forbidden", "uri is given only when location is External; an ACR model's image is name:version.");
  if (input.location === "ACR") {
    const { images } = await viaHost(() => hostFor(env).listImages());
    if (!images.some((i) => i.name === input.name && i.tag === input.version)) {
      throw invalid("body.name", "exists", `The container host lists no image ${input.name}:${input.version} (GET /JobDefinitions).`);
    }
  }
}

const definitionTaken = (name: string, version: string) =>
  conflict(`Model definition ${name} version ${version} already exists.`, [
    { field: "body.version", rule: "unique", message: "This name and version exist." },
  ]);

export async function createDefinition(ctx: WriteContext, env: Bindings, input: DefinitionInput): Promise<Versioned<ModelDefinition>> {
  await checkDefinition(env, input);
  const id = ctx.uuid();
  await runBatch(
    ctx.db,
    [
      definitionTable.insert(ctx.db, {
        id,
        name: input.name,
        nameKey: nameKey(input.name),
        version: input.version,
        location: input.location,
        uri: input.uri,
        etag: newEtagToken(),
        createdAt: ctx.now,
        updatedAt: ctx.now,
        createdBy: ctx.actorId,
      }),
      ...outboxStatements(ctx.db, ctx, { entityKind: "modelDefinition", entityId: id, action: "created", payload: { id, ...input } }),
    ],
    () => definitionTaken(input.name, input.version),
  );
  return getDefinition(ctx.db, id);
}

export async function updateDefinition(
  ctx: WriteContext,
  env: Bindings,
  input: DefinitionInput & { id: string },
): Promise<Versioned<ModelDefinition>> {
  return retryWrite(ctx, async () => {
    const current = await getDefinitionRow(ctx.db, input.id);
    const version = assertVersion(ctx, current.etag);
    if (current.name !== input.name || current.version !== input.version) await refuseUsedDefinition(ctx.db, current);
    await checkDefinition(env, input);
    const etag = newEtagToken();
    await commitVersioned(
      ctx,
      [
        definitionTable.update(
          ctx.db,
          {
            name: input.name,
            nameKey: nameKey(input.name),
            version: input.version,
            location: input.location,
            uri: input.uri,
            etag,
            updatedAt: ctx.now,
          },
          { id: input.id, etag: version },
        ),
        ...guardedOutboxStatements(
          ctx.db,
          ctx,
          { entityKind: "modelDefinition", entityId: input.id, action: "updated", payload: { ...input } },
          { table: definitionTable.name, etag },
        ),
      ],
      () => definitionTaken(input.name, input.version),
    );
    return getDefinition(ctx.db, input.id);
  });
}

async function getDefinitionRow(db: Database, id: string): Promise<DefinitionRow> {
  const row = await db.prepare(`${SELECT_DEFINITION} WHERE id = ?1`).bind(id).first<Record<string, unknown>>();
  if (!row) throw notFound("Model definition", id);
  return definitionRow(row);
}

export async function getDefinition(db: Database, id: string): Promise<Versioned<ModelDefinition>> {
  const row = await getDefinitionRow(db, id);
  return { value: definitionOf(row), etag: row.etag };
}

/** The definition of `name` (case-insensitively, as every name lookup) and `version`, or null. */
export async function findDefinitionByVersion(db: Database, name: string, version: string): Promise<DefinitionRow | null> {
  const row = await db
    .prepare(`${SELECT_DEFINITION} WHERE name_key = ?1 AND version = ?2`)
    .bind(nameKey(name), version)
    .first<Record<string, unknown>>();
  return row ? definitionRow(row) : null;
}

/** A model that uses the definition's name and version (case-insensitive name), as the delete's guard reads it. */
const MODEL_USING = "SELECT model_id FROM models WHERE lower(definition_name) = lower(?1) AND definition_version = ?2";

async function refuseUsedDefinition(db: Database, row: DefinitionRow): Promise<void> {
  const used = await db.prepare(`${MODEL_USING} LIMIT 1`).bind(row.name, row.version).first<{ model_id: string }>();
  if (used) throw new ApiError("InUse", `Model ${used.model_id} uses model definition ${row.name} version ${row.version}.`);
}

export async function deleteDefinition(ctx: WriteContext, row: DefinitionRow | null, what: string): Promise<void> {
  if (!row) throw new ApiError("NotFound", `Model definition ${what} does not exist.`);
  const version = assertVersion(ctx, row.etag);
  await refuseUsedDefinition(ctx.db, row);
  await commitVersioned(ctx, [
    // Guarded so a model made with this version since the check above keeps it alive (then 412: read again).
    ctx.db
      .prepare(`DELETE FROM model_definitions WHERE id = ?3 AND etag = ?4 AND NOT EXISTS (${MODEL_USING})`)
      .bind(row.name, row.version, row.id, version),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: "modelDefinition", entityId: row.id, action: "deleted", payload: null },
      "previousChanged",
    ),
  ]);
}

export async function deleteDefinitionById(ctx: WriteContext, id: string): Promise<void> {
  return retryWrite(ctx, async () => {
    await deleteDefinition(ctx, await getDefinitionRow(ctx.db, id), id);
  });
}
