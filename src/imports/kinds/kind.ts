/**
 * What an import does with one kind of record (issue 37): which columns a row can have, how a row
 * becomes the body its single request would take, and how that body is checked (a dry run) and
 * written (a commit). Each kind lives in its own module beside this one and is listed in ./index.ts;
 * the rows' loop (../rows.ts), the mapping (../service.ts) and the queue's steps (../run.ts) are the
 * same for every kind. A kind reuses its area's own schemas, validators and writers: nothing here
 * repeats a rule a single request has.
 */
import type { Database } from "../../db/statements";
import type { WriteContext } from "../../pkg/db";
import type { Permission } from "../../pkg/permissions";

/** Where a column goes: a field of the kind, a property by its definition's name, or nowhere (null). */
export type Target = { field: string } | { property: string } | null;

/** A column of the file with where it goes. */
export interface Column {
  index: number;
  header: string;
  target: Target;
}

/** A problem of one row: the column it came from (null: the row as a whole), the field, the rule. */
export interface RowProblem {
  column: string | null;
  field: string;
  rule: string;
  message: string;
}

/** A row made into its plan (what it will write), or the row's problems. */
export type Planned<Plan> = { plan: Plan; problems: [] } | { plan: null; problems: RowProblem[] };

/**
 * What the rows of one import share: lookups by value, cached for the import's rows (a user by name,
 * a type's definitions, a template by name...). A kind keeps what it needs under its own keys.
 */
export interface RowContext {
  db: Database;
  cache: Map<string, Promise<unknown>>;
  /** A queued dry run's records from its earlier chunks (absent: the rows of one request, or a commit). */
  carry?: Carry;
}

/**
 * What a queued dry run keeps from one chunk for the next: the records its rows would have created,
 * which a later row may name (an asset's parent ten chunks above it). A commit needs none (its rows are
 * written, and found where they are). The import's runner keeps it in its own storage for as long as the
 * import runs; a chunk run again first drops what its earlier attempt kept. A kind keys values its own way.
 */
export interface Carry {
  /** Keeps `value` as record `id`, found by each of `keys`. */
  add(id: string, keys: readonly string[], value: unknown): void;
  byId(id: string): unknown;
  byKey(key: string): unknown[];
}

export const rowContext = (db: Database, carry?: Carry): RowContext => ({ db, cache: new Map(), carry });

/** `load()` once per `key` for the rows of one import. */
export function cached<T>(ctx: RowContext, key: string, load: () => Promise<T>): Promise<T> {
  let found = ctx.cache.get(key) as Promise<T> | undefined;
  if (!found) {
    found = load();
    ctx.cache.set(key, found);
  }
  return found;
}

/** One of the rows {@link ImportKind.writeMany} writes: its plan, its record's id, its entry. */
export interface ManyRow<Plan> {
  plan: Plan;
  id: string;
  extra: readonly D1PreparedStatement[];
}

export interface ImportKind<Plan = unknown> {
  /** The record in messages: "deviation", "asset". */
  readonly noun: string;
  /**
   * Rows are written one after another in file order (a row may name a record an earlier row of the
   * same file makes: an asset's parent). Default: a few rows of a chunk at once.
   */
  readonly inOrder?: boolean;
  /** Who may read an import of this kind, and who may commit (or dry-run) one. */
  readonly permissions: { read: Permission; write: Permission };
  /** The fields a column can be mapped to (the single request's JSON names, nested with dots). */
  readonly fields: readonly string[];
  /** Other headers of a field: the read shape's spellings an export writes. */
  readonly aliases: Readonly<Record<string, string>>;
  /** Headers an export writes that are read-only (not imported, proposed as null). */
  readonly readOnly: RegExp;
  /** The names of the properties a column may be (by definition name); empty when the kind has none. */
  propertyNames(db: Database): Promise<Set<string>>;
  /** The row's plan, from its cells (as text, in file order), or its problems. */
  plan(ctx: RowContext, columns: readonly Column[], cells: readonly string[]): Promise<Planned<Plan>>;
  /** The record a plan replaces, or null: a new one, whose id is the first id its write mints. */
  existingId(plan: Plan): string | null;
  /**
   * Optional: the plan replaces a record with what it already is (an exported row not edited). Such a
   * row is counted skipped and writes nothing: no new version, no event.
   */
  unchanged?(plan: Plan): boolean;
  /** The properties a plan's body carries, in order (to name the column of `body.properties[N]` problems). */
  propertiesOf(plan: Plan): readonly { name: string }[];
  /** Checks a plan as its single request would, writing nothing (a dry run). `newId`: the id a create would take. */
  check(db: Database, plan: Plan, newId: string): Promise<void>;
  /**
   * Writes a plan with `extra` (the row's import_rows entry) in the same batch, so the row is written
   * exactly when its entry is; answers the record's id. A kind whose records live outside D1 writes
   * them idempotently first, then its entry.
   */
  write(ctx: WriteContext, plan: Plan, extra: readonly D1PreparedStatement[]): Promise<string>;
  /**
   * Optional: writes the planned rows of a chunk together, for a kind whose records are cheaper
   * written in one go (deviations: 25 rows to a batch, ./batches.ts; readings: one write per channel
   * for the chunk's rows, not one per row). Each row is written as `write` would write it, with its
   * `extra`; `id` is its record's id (the existing one, or the id a new one takes). Answers, in the
   * rows' order, each row's record id or the error its own `write` would have thrown (a problem of
   * that row; the others are written). A fault of the whole (not a row's) is thrown. When present, the
   * rows' loop calls it instead of `write` (not for an `inOrder` kind, whose rows need the rows above
   * them written first).
   */
  writeMany?(ctx: WriteContext, rows: readonly ManyRow<Plan>[]): Promise<(string | Error)[]>;
}
