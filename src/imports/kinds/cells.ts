/** Cells as the values a single request takes, for any kind: users by id or name, lists, property values. */
import { ApiError } from "../../pkg/errors";
import type { LinkedDefinition } from "../../properties/values/types";
import { cached, type RowContext, type RowProblem } from "./kind";

export interface DirectoryUser {
  id: string;
  name: string;
}

/** A user of the directory by id, or by name when exactly one has it. */
export function findUser(ctx: RowContext, text: string): Promise<DirectoryUser | "ambiguous" | null> {
  return cached(ctx, `user:${text}`, async () => {
    const byId = await ctx.db.prepare("SELECT id, name FROM users WHERE id = ?1").bind(text).first<DirectoryUser>();
    if (byId) return byId;
    const { results } = await ctx.db
      .prepare("SELECT id, name FROM users WHERE lower(name) = lower(?1) LIMIT 2")
      .bind(text)
      .all<DirectoryUser>();
    if (results.length > 1) return "ambiguous" as const;
    return results[0] ?? null;
  });
}

/** The user a cell names, or the problem of the column (neither an id nor a name, or a name two users have). */
export async function userOfCell(
  ctx: RowContext,
  column: string,
  field: string,
  value: string,
): Promise<{ user: DirectoryUser; problem: null } | { user: null; problem: RowProblem }> {
  const user = await findUser(ctx, value);
  if (user === "ambiguous")
    return {
      user: null,
      problem: { column, field, rule: "ambiguous", message: `More than one user is named '${value}': give the user's id.` },
    };
  if (!user)
    return {
      user: null,
      problem: { column, field, rule: "exists", message: `'${value}' is neither the id nor the name of a user (GET /Users).` },
    };
  return { user, problem: null };
}

/** An `objectOwner` cell (a user's id or name): the body's `{ id, name }`, or the column's problem. */
export async function ownerOfCell(
  ctx: RowContext,
  column: string,
  value: string,
  body: Record<string, unknown>,
  problems: RowProblem[],
): Promise<void> {
  const found = await userOfCell(ctx, column, "body.objectOwner", value);
  if (found.problem) problems.push(found.problem);
  else body.objectOwner = { id: found.user.id, name: found.user.name };
}

/**
 * What a row's `id` cell names: null when the row has none (it creates); else the entity `read`
 * finds by the lower-cased id, or null and a problem of the id column (`column`): not a UUID, or no
 * such entity (`noun`: "deviation", "work item", "asset").
 */
export async function existingOfId<T>(
  id: string | null,
  column: string | null,
  noun: string,
  read: (id: string) => Promise<T>,
  problems: RowProblem[],
): Promise<T | null> {
  if (id === null) return null;
  if (!UUID.test(id)) {
    problems.push({
      column,
      field: "body.id",
      rule: "uuid",
      message: `'${id}' is not ${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun} id (a UUID).`,
    });
    return null;
  }
  try {
    return await read(id.toLowerCase());
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "NotFound")) throw error;
    const message = `${noun[0]!.toUpperCase()}${noun.slice(1)} ${id} does not exist (leave id empty to create one).`;
    problems.push({ column, field: "body.id", rule: "exists", message });
    return null;
  }
}

/** A `metadata` cell as the JSON it holds, or the problem of its column (not JSON). */
export function metadataOfCell(column: string, value: string): { metadata: unknown } | { problem: RowProblem } {
  try {
    return { metadata: JSON.parse(value) as unknown };
  } catch {
    return { problem: { column, field: "body.metadata", rule: "json", message: "metadata is not a JSON object." } };
  }
}

/** A cell of several values ("a; b; c") as its parts. */
export const splitList = (text: string) =>
  text
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "");

/** A cell as the JSON value a property of this format takes (what a client would send); the resolution checks it. */
export async function propertyValue(ctx: RowContext, definition: LinkedDefinition | undefined, text: string): Promise<unknown> {
  if (text.trim() === "") return null;
  if (!definition) return text;
  const one = async (part: string): Promise<unknown> => {
    switch (definition.format) {
      case "boolean": {
        const lower = part.toLowerCase();
        return lower === "true" || lower === "yes" ? true : lower === "false" || lower === "no" ? false : part;
      }
      case "integer":
      case "decimal": {
        const number = Number(part);
        return part.trim() !== "" && Number.isFinite(number) ? number : part;
      }
      case "entity": {
        const user = await findUser(ctx, part);
        return user && user !== "ambiguous" ? { id: user.id, name: user.name } : part;
      }
      default:
        return part;
    }
  };
  if (definition.isMultiselect) return Promise.all(splitList(text).map(one));
  return one(definition.format === "text" ? text : text.trim());
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
