/**
 * The instruction image column of property definitions (`instruction_image_key`, the R2 key of the
 * image). The definitions domain owns the row; this writes only that column, with the definition's
 * own optimistic-concurrency guard and an `updated` event for the definition in the same batch, as
 * every definition write does.
 */
import type { Database } from "../db/statements";
import { guardedOutboxStatements } from "../events/outbox";
import { notFound } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import { newEtagToken, type WriteContext } from "../pkg/db";
import { getDefinition, instructionImageKeyStatement, KIND as DEFINITION_KIND } from "../properties/definitions/store";
import type { PropertyDefinition } from "../properties/definitions/schema";
import { commitVersioned } from "../pkg/resource";

export interface DefinitionImageState {
  definition: PropertyDefinition;
  /** The definition row's ETag token, which the update is guarded by. */
  etag: string;
  key: string | null;
}

/** The definition and its image key, read at one version (404 when the definition does not exist). */
export async function readDefinitionImage(db: Database, definitionId: string): Promise<DefinitionImageState> {
  const found = await getDefinition(db, definitionId);
  const row = await db
    .prepare("SELECT instruction_image_key AS key FROM property_definitions WHERE id = ?1 AND etag = ?2")
    .bind(definitionId, found.etag)
    .first<{ key: string | null }>();
  // The definition changed between the two reads: the caller's write would be refused anyway.
  if (!row) throw preconditionFailed();
  return { definition: found.value, etag: found.etag, key: row.key };
}

/** The image key alone, for reads (null: no image; 404: no definition). */
export async function instructionImageKeyOf(db: Database, definitionId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT instruction_image_key AS key FROM property_definitions WHERE id = ?1")
    .bind(definitionId)
    .first<{ key: string | null }>();
  if (!row) throw notFound("Property definition", definitionId);
  return row.key;
}

/** Sets (or clears, with null) the key, guarded by the ETag read, with the definition's event. */
export async function writeInstructionImageKey(ctx: WriteContext, state: DefinitionImageState, key: string | null): Promise<void> {
  const { id } = state.definition;
  const etag = newEtagToken();
  const updated: PropertyDefinition = { ...state.definition, hasInstructionImage: key !== null, updatedAt: ctx.now };
  await commitVersioned(ctx, [
    instructionImageKeyStatement(ctx.db, { id, readEtag: state.etag, key, etag, now: ctx.now }),
    ...guardedOutboxStatements(
      ctx.db,
      ctx,
      { entityKind: DEFINITION_KIND, entityId: id, action: "updated", payload: updated },
      { table: "property_definitions", etag },
    ),
  ]);
}

/** Of `keys`, those some definition names (chunked: D1 binds at most 100 parameters). */
export async function referencedInstructionImageKeys(db: Database, keys: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < keys.length; i += 100) {
    const chunk = keys.slice(i, i + 100);
    const { results } = await db
      .prepare(
        `SELECT instruction_image_key AS key FROM property_definitions WHERE instruction_image_key IN ` +
          `(${chunk.map((_, j) => `?${j + 1}`).join(", ")})`,
      )
      .bind(...chunk)
      .all<{ key: string }>();
    for (const row of results) found.add(row.key);
  }
  return found;
}
