/**
 * One owner per table (docs/decisions.md, "The data layer"): every D1 table is written by exactly one
 * module of src/, its owner; other code composes the owner's statement builders. Read from the source
 * (SQL that writes a table, or a write of the typed kit), so a second writer fails here when it is
 * written, whatever it writes. Test factories write nothing themselves: they go through the API or
 * compose the owners' builders.
 */
import { describe, expect, it } from "vitest";
import storageText from "../../docs/storage.md?raw";
import schemaText from "../../src/db/schema.ts?raw";
import { fileWrites, schemaTables } from "./support/writes";

const src = import.meta.glob(["../../src/**/*.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const factories = import.meta.glob(["../support/**/*.ts", "../**/factories.ts", "../**/support.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

const tables = schemaTables(schemaText);
const relative = (sources: Record<string, string>) =>
  Object.fromEntries(Object.entries(sources).map(([path, text]) => [path.replace(/^(\.\.\/)+/, ""), text]));

/** Table → the files of src/ that write it. */
function writersByTable(): Map<string, string[]> {
  const byTable = new Map<string, string[]>();
  for (const [file, written] of fileWrites(relative(src), tables)) {
    for (const table of written) byTable.set(table, [...(byTable.get(table) ?? []), file]);
  }
  return byTable;
}

describe("one owner per table", () => {
  const writers = writersByTable();

  it("reads the schema and the source", () => {
    expect(tables.size).toBeGreaterThan(50);
    expect(writers.size).toBeGreaterThan(40);
  });

  it("every table that src/ writes is one of the schema's", () => {
    const known = new Set(tables.values());
    expect([...writers.keys()].filter((table) => !known.has(table))).toEqual([]);
  });

  it("no table has a second writer", () => {
    const shared = [...writers].filter(([, files]) => files.length > 1).map(([table, files]) => `${table}: ${files.join(", ")}`);
    expect(shared, "compose the owner's statement builders instead of writing its table (docs/decisions.md, 'The data layer')").toEqual([]);
  });

  it("docs/storage.md names each table's owner as the source has it", () => {
    const section = storageText.split("## Who writes each table")[1]!.split("\n## ")[0]!;
    const documented = new Map(
      [...section.matchAll(/^\| `([a-z0-9_]+)` \| (.+) \|$/gm)].map(([, table, owner]) => [
        table!,
        owner!.startsWith("`") ? owner!.slice(1, -1) : null,
      ]),
    );
    const actual = new Map([...new Set(tables.values())].map((table) => [table, writers.get(table)?.[0] ?? null]));
    expect(Object.fromEntries([...documented].sort())).toEqual(Object.fromEntries([...actual].sort()));
  });

  it("test factories write no table themselves", () => {
    const writing = [...fileWrites(relative(factories), tables)].map(([file, written]) => `${file}: ${[...written].join(", ")}`);
    expect(writing, "make test data through the API or the owners' builders").toEqual([]);
  });

  it("would see a second writer, through SQL or the kit", () => {
    const found = fileWrites(
      {
        "a/store.ts": "const categoryTable = tableStatements(categories);\nexport const s = (db) => categoryTable.insert(db, {});",
        "b/other.ts": 'db.prepare("UPDATE categories SET name = ?1 WHERE id = ?2");',
        "c/comment.ts": "/** Not a write: UPDATE categories SET name in a comment. */\nexport const x = 1;",
      },
      new Map([["categories", "categories"]]),
    );
    expect([...found.keys()].sort()).toEqual(["a/store.ts", "b/other.ts"]);
  });
});
