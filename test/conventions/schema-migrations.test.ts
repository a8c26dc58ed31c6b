/**
 * One source of truth for the schema (docs/decisions.md, "The data layer"): src/db/schema.ts is what
 * the typed statements are built from, and migrations/ is what D1 runs. Here the database the committed
 * migrations made (test/setup.ts applies them) is read back from SQLite's own catalogue and held to the
 * drizzle schema, table by table: the same tables, columns, types, NOT NULL, primary keys and indexes. A
 * schema change without its migration (or a hand-edited migration the schema does not know) fails here.
 */
import { env } from "cloudflare:workers";
import { getTableConfig, SQLiteTable, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";

const tables: SQLiteTable[] = (Object.values(schema) as unknown[]).filter((value): value is SQLiteTable => value instanceof SQLiteTable);

interface Column {
  name: string;
  type: string;
  notNull: boolean;
  primaryKey: boolean;
}

/** SQLite's storage class for a declared type, as drizzle writes it into the migration. */
const declared = (column: SQLiteColumn) => column.getSQLType().toLowerCase();

function schemaColumns(table: SQLiteTable): Column[] {
  const config = getTableConfig(table);
  const compositeKey = new Set(config.primaryKeys.flatMap((key) => key.columns.map((c) => c.name)));
  return config.columns
    .map((column) => ({
      name: column.name,
      type: declared(column),
      notNull: column.notNull || column.primary,
      primaryKey: column.primary || compositeKey.has(column.name),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

async function databaseColumns(table: string): Promise<Column[]> {
  const { results } = await env.DB.prepare('SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_info(?1)')
    .bind(table)
    .all<{ name: string; type: string; not_null: number; pk: number }>();
  return results
    .map((c) => ({ name: c.name, type: c.type.toLowerCase(), notNull: c.not_null === 1 || c.pk > 0, primaryKey: c.pk > 0 }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function schemaIndexes(table: SQLiteTable): { name: string; unique: boolean }[] {
  return getTableConfig(table)
    .indexes.map((index) => ({ name: index.config.name, unique: index.config.unique }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

async function databaseIndexes(table: string): Promise<{ name: string; unique: boolean }[]> {
  // origin 'c': made by CREATE INDEX (not the automatic indexes of a PRIMARY KEY or UNIQUE column constraint).
  const { results } = await env.DB.prepare("SELECT name, \"unique\" AS isUnique FROM pragma_index_list(?1) WHERE origin = 'c'")
    .bind(table)
    .all<{ name: string; isUnique: number }>();
  return results.map((i) => ({ name: i.name, unique: i.isUnique === 1 })).sort((a, b) => a.name.localeCompare(b.name));
}

describe("src/db/schema.ts and the migrations agree", () => {
  it("reads the schema's tables", () => {
    expect(tables.length).toBeGreaterThan(50);
  });

  it("have the same tables", async () => {
    const { results } = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' " +
        "AND name <> 'd1_migrations' AND name NOT LIKE '%\\_fts%' ESCAPE '\\'",
    ).all<{ name: string }>();
    expect(results.map((r) => r.name).sort()).toEqual(tables.map((t) => getTableConfig(t).name).sort());
  });

  it.each(tables.map((table) => [getTableConfig(table).name, table] as const))("%s: the same columns and indexes", async (name, table) => {
    expect(await databaseColumns(name)).toEqual(schemaColumns(table));
    expect(await databaseIndexes(name)).toEqual(schemaIndexes(table));
  });
});
