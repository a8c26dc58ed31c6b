/**
 * Typed statements from the schema (src/db/schema.ts). A table's owning store makes its statements
 * with {@link tableStatements}: the column list lives once (in the schema), values are named and
 * typed by the table's insert and select models, and the SQL text is drizzle's, built once per shape
 * and kept (a drizzle build costs tens of µs; a cached one a Map lookup). Every statement is a plain
 * D1 prepared statement, so it goes into the caller's own `db.batch()` beside guards and events.
 *
 * Hand-written SQL stays where the list engine or a guarded statement needs it (docs/decisions.md,
 * "The data layer").
 */
import { and, eq, getTableColumns, getTableName, is, Param, Placeholder, sql, type Column, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * What statements run on: the Worker's D1 database (background work), or the request's D1 session
 * (read replicas and read-your-writes, src/pkg/bookmark.ts). Both prepare and batch; neither more is needed.
 */
export type Database = Pick<D1Database, "prepare" | "batch">;

/** A row as inserted (optional where the schema has a default or allows null). */
export type Insert<T extends SQLiteTable> = T["$inferInsert"];
/** A row as read. */
export type Row<T extends SQLiteTable> = T["$inferSelect"];

/**
 * Builds statements and never runs them: drizzle's query builder over no database (toSQL() only).
 * Any attempt to run through it fails at once.
 */
const builder = drizzle(
  new Proxy({} as D1Database, {
    get() {
      throw new Error("the statement builder never runs statements: prepare its SQL on a database");
    },
  }),
);

interface Compiled {
  sql: string;
  /** Per bound parameter: where its value comes from, and the column whose driver mapping applies. */
  params: { from: "set" | "where"; key: string; column: Column }[];
}

const SET = "set:";
const WHERE = "where:";

function compile(query: { toSQL(): { sql: string; params: unknown[] } }, columns: Record<string, Column>): Compiled {
  const { sql: text, params } = query.toSQL();
  return {
    sql: text,
    params: params.map((bound) => {
      // An insert's values arrive wrapped in a Param (with their column as encoder); the rest bare.
      const param = is(bound, Param) ? bound.value : bound;
      if (!is(param, Placeholder)) throw new Error(`a statement of the kit bound a literal (${String(param)})`);
      const from = param.name.startsWith(SET) ? "set" : "where";
      const key = param.name.slice(from === "set" ? SET.length : WHERE.length);
      const column = columns[key];
      if (!column) throw new Error(`no column ${key}`);
      return { from, key, column };
    }),
  };
}

/** The value a column takes when an insert leaves it out: the schema's default, or null. */
function absentValue(column: Column): unknown {
  if (column.defaultFn) return column.defaultFn();
  if (column.default !== undefined) return column.default;
  return null;
}

function bindValue(column: Column, value: unknown): unknown {
  return value === null || value === undefined ? null : column.mapToDriverValue(value);
}

export interface TableStatements<T extends SQLiteTable> {
  /** The table's name, for the hand-written SQL of its owner. */
  readonly name: string;
  /** Its columns in schema order, as a select list (`id, name, ...`): what {@link TableStatements.row} reads. */
  readonly columns: string;
  /** INSERT of one row; a column left out takes the schema's default (or null). */
  insert(db: Database, values: Insert<T>): D1PreparedStatement;
  /** INSERT OR IGNORE of one row (a row already there under a unique key stays as it is). */
  insertOrIgnore(db: Database, values: Insert<T>): D1PreparedStatement;
  /**
   * INSERT of many rows in as few statements as their size allows: the rows travel as one JSON
   * parameter per statement (read back with json_each), so no statement nears D1's 100 bound values.
   */
  insertMany(db: Database, rows: readonly Insert<T>[], options?: { orIgnore?: boolean }): D1PreparedStatement[];
  /** UPDATE of the columns in `set` on the rows whose columns equal `where` (at least one). */
  update(db: Database, set: Partial<Insert<T>>, where: Partial<Row<T>>): D1PreparedStatement;
  /** DELETE of the rows whose columns equal `where` (at least one). */
  delete(db: Database, where: Partial<Row<T>>): D1PreparedStatement;
  /** A row read with {@link TableStatements.columns}, typed and mapped as the schema says (0/1 to booleans). */
  row(raw: Record<string, unknown>): Row<T>;
}

/** The typed statements of `table`, for its owning store (one call per table, at module level). */
export function tableStatements<T extends SQLiteTable>(table: T): TableStatements<T> {
  const columns = getTableColumns(table) as Record<string, Column>;
  const keys = Object.keys(columns);
  const name = getTableName(table);
  const cache = new Map<string, Compiled>();

  const placeholders = (prefix: string, names: readonly string[]) =>
    Object.fromEntries(names.map((key) => [key, sql.placeholder(`${prefix}${key}`)]));
  const condition = (names: readonly string[]): SQL | undefined => {
    if (names.length === 0) throw new Error(`a statement on ${name} must name the rows it changes`);
    return and(...names.map((key) => eq(columns[key]!, sql.placeholder(`${WHERE}${key}`))));
  };
  /** The columns a record names; in a WHERE, every one must have a value (a guard never drops out unseen). */
  const known = (record: object, clause: "set" | "where") => {
    const entries = Object.entries(record);
    for (const [key, value] of entries) {
      if (!(key in columns)) throw new Error(`${name} has no column ${key}`);
      if (clause === "where" && (value === undefined || value === null)) throw new Error(`${name}: WHERE ${key} needs a value`);
    }
    return entries.filter(([, value]) => value !== undefined).map(([key]) => key);
  };
  const cached = (shape: string, build: () => Compiled) => {
    let compiled = cache.get(shape);
    if (!compiled) cache.set(shape, (compiled = build()));
    return compiled;
  };
  const prepare = (db: Database, compiled: Compiled, set: object, where: object) =>
    db
      .prepare(compiled.sql)
      .bind(
        ...compiled.params.map(({ from, key, column }) =>
          bindValue(column, ((from === "set" ? set : where) as Record<string, unknown>)[key]),
        ),
      );

  // Built on first use, not when the owner's module loads (startup pays for nothing unused).
  const insertWith = (conflict: "" | "ignore") => {
    const compiledInsert = () =>
      cached(`i:${conflict}`, () => {
        const query = builder.insert(table).values(placeholders(SET, keys) as Insert<T>);
        return compile(conflict === "ignore" ? query.onConflictDoNothing() : query, columns);
      });
    return (db: Database, values: Insert<T>) => {
      const compiled = compiledInsert();
      const given = values as Record<string, unknown>;
      known(given, "set");
      return db
        .prepare(compiled.sql)
        .bind(...compiled.params.map(({ key, column }) => bindValue(column, given[key] === undefined ? absentValue(column) : given[key])));
    };
  };
  const insert = insertWith("");
  const insertOrIgnore = insertWith("ignore");
  const columnList = keys.map((key) => `"${columns[key]!.name}"`).join(", ");
  const fromJson = keys.map((key) => `json_extract(value, '$.${columns[key]!.name}')`).join(", ");
  const manySql = (orIgnore: boolean) =>
    `INSERT${orIgnore ? " OR IGNORE" : ""} INTO "${name}" (${columnList}) SELECT ${fromJson} FROM json_each(?1)`;
  /** A row as the JSON of a many-row insert carries it: by column name, mapped and defaulted as a single insert binds it. */
  const jsonRow = (values: Insert<T>) => {
    const given = values as Record<string, unknown>;
    known(given, "set");
    return Object.fromEntries(
      keys.map((key) => {
        const column = columns[key]!;
        return [column.name, bindValue(column, given[key] === undefined ? absentValue(column) : given[key])];
      }),
    );
  };

  return {
    name,
    columns: keys.map((key) => columns[key]!.name).join(", "),
    insert,
    insertOrIgnore,
    insertMany(db, rows, options = {}) {
      return rows.length === 0 ? [] : jsonRowStatements(db, manySql(options.orIgnore === true), rows.map(jsonRow));
    },
    update(db, set, where) {
      const setKeys = known(set, "set");
      const whereKeys = known(where, "where");
      if (setKeys.length === 0) throw new Error(`an update of ${name} must set a column`);
      const compiled = cached(`u:${setKeys.join(",")}:${whereKeys.join(",")}`, () =>
        compile(
          builder
            .update(table)
            .set(placeholders(SET, setKeys) as Partial<Insert<T>>)
            .where(condition(whereKeys)),
          columns,
        ),
      );
      return prepare(db, compiled, set, where);
    },
    delete(db, where) {
      const whereKeys = known(where, "where");
      const compiled = cached(`d:${whereKeys.join(",")}`, () => compile(builder.delete(table).where(condition(whereKeys)), columns));
      return prepare(db, compiled, {}, where);
    },
    row(raw) {
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        const column = columns[key]!;
        const value = raw[column.name];
        out[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
      }
      return out as Row<T>;
    },
  };
}

/** Bytes of JSON one statement carries; D1 allows 2 MB per value, this leaves a wide margin. */
const MAX_JSON_BYTES = 256 * 1024;

/** Splits rows into JSON arrays that stay under {@link MAX_JSON_BYTES} each (one statement each). */
export function jsonChunks<T>(rows: readonly T[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let bytes = 2;
  for (const row of rows) {
    const text = JSON.stringify(row);
    if (current.length > 0 && bytes + text.length + 1 > MAX_JSON_BYTES) {
      chunks.push(`[${current.join(",")}]`);
      current = [];
      bytes = 2;
    }
    current.push(text);
    bytes += text.length + 1;
  }
  if (current.length > 0) chunks.push(`[${current.join(",")}]`);
  return chunks;
}

/**
 * One statement per chunk of `rows`: `sqlWithJson` reads them from `json_each(?1)` (and may bind
 * `extra` as ?2, ?3, ...), so a write of many rows never nears D1's 100 bound parameters.
 */
export function jsonRowStatements<T>(db: Database, sqlWithJson: string, rows: readonly T[], ...extra: unknown[]): D1PreparedStatement[] {
  return jsonChunks(rows).map((json) => db.prepare(sqlWithJson).bind(json, ...extra));
}

/**
 * A read whose rows are `R` (what its SQL yields, as D1's `.all<R>()` gives them), for
 * {@link readBatch}: D1 types every result of a batch by one row type, this keeps one per read.
 */
export interface TypedRead<R> {
  readonly statement: D1PreparedStatement;
  /** Never set: carries the row type. */
  readonly row?: R;
}

export function typedRead<R>(statement: D1PreparedStatement): TypedRead<R> {
  return { statement };
}

/** Runs reads in one batch (one round trip, one snapshot) and answers each one's rows, typed as declared. */
export async function readBatch<const T extends readonly TypedRead<unknown>[]>(
  db: Database,
  reads: T,
): Promise<{ [K in keyof T]: T[K] extends TypedRead<infer R> ? R[] : never }> {
  const results = await db.batch(reads.map((read) => read.statement));
  // The one place the batch's untyped results meet their declared row types.
  return results.map((result) => result.results) as { [K in keyof T]: T[K] extends TypedRead<infer R> ? R[] : never };
}
