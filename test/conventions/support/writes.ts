/**
 * Which code writes which D1 table, read from the source: the conventions of the data layer
 * (docs/decisions.md, "The data layer") are checked on what this finds.
 *
 * A function writes a table when its body
 * - holds SQL that writes it (`INSERT [OR x] INTO t`, `REPLACE INTO t`, `UPDATE t SET`, `DELETE FROM t`), or
 * - calls a write of the typed kit on a table's statements (`const x = tableStatements(table)`, then
 *   `x.insert(`, `x.insertOrIgnore(`, `x.insertMany(`, `x.update(`, `x.delete(`).
 * - writes through a table descriptor: SQL whose table is interpolated (`INSERT INTO ${kind.table}`) writes
 *   every table the file describes (`table: "work_templates"`), as the templates' revision engine does.
 * Those are the file's own writes. A statement builder (a function named `...Statement(s)`) returns its
 * statements for a caller's batch, so a function that calls one writes what the builder writes:
 * {@link functionWrites} follows such calls (by name, across files) to learn what a composing
 * function writes, which is what the event convention needs; {@link fileWrites} counts only a file's
 * own writes, which is what ownership needs.
 */

export type Sources = Readonly<Record<string, string>>;

const SQL_WRITE = /\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+[`"']?(\w+)|\bUPDATE\s+[`"']?(\w+)[`"']?\s+SET\b/gi;
const KIT_WRITE = /\b(\w+)\.(?:insert|insertOrIgnore|insertMany|update|delete)\(/g;
const DESCRIBED_WRITE = /\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|DELETE\s+FROM|UPDATE)\s+\$\{/i;
const DESCRIPTOR = /\btable:\s*"(\w+)"/g;
/** A top-level function declaration, up to the closing brace at the start of a line. */
const FUNCTION = /^(?:export\s+)?(?:async\s+)?function\s*\*?\s*(\w+)[\s\S]*?^\}/gm;
/** A statement builder's name: it returns statements for its caller's batch. */
export const BUILDER = /Statements?$/;
/** The outbox's builders (src/events/outbox.ts): a function that calls one writes an event. */
const OUTBOX_BUILDER = /\b(?:outboxStatements|guardedOutboxStatements|outboxManyStatements|outboxForRowsStatements)\(/;

/** The code without its comments (a table named in a comment is not a write). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** drizzle table variables of the schema (`export const x = sqliteTable("name", ...)`) by variable name. */
export function schemaTables(schemaText: string): Map<string, string> {
  return new Map([...schemaText.matchAll(/export const (\w+) = sqliteTable\(\s*"(\w+)"/g)].map((m) => [m[1]!, m[2]!]));
}

/** The kit's table statements a file declares (`const x = tableStatements(table)`), by variable name. */
function kitVariables(text: string, tables: ReadonlyMap<string, string>): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of text.matchAll(/\bconst\s+(\w+)\s*=\s*tableStatements\(\s*(\w+)\s*\)/g)) {
    const table = tables.get(m[2]!);
    if (table) found.set(m[1]!, table);
  }
  return found;
}

/** The tables a file describes for SQL that names its table through a descriptor. */
function describedTables(text: string): string[] {
  return [...text.matchAll(DESCRIPTOR)].map((m) => m[1]!);
}

/** The tables a piece of code writes itself (SQL, the kit through the file's table variables, or a descriptor). */
export function directWrites(code: string, kit: ReadonlyMap<string, string>, described: readonly string[] = []): Set<string> {
  const written = new Set<string>();
  if (DESCRIBED_WRITE.test(code)) for (const table of described) written.add(table);
  for (const m of code.matchAll(SQL_WRITE)) written.add((m[1] ?? m[2]!).toLowerCase());
  for (const m of code.matchAll(KIT_WRITE)) {
    const table = kit.get(m[1]!);
    if (table) written.add(table);
  }
  return written;
}

/** Every file's own writes: the tables its code writes itself (what ownership counts). */
export function fileWrites(sources: Sources, tables: ReadonlyMap<string, string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [path, source] of Object.entries(sources)) {
    const text = code(source);
    const written = directWrites(text, kitVariables(text, tables), describedTables(text));
    if (written.size > 0) out.set(path, written);
  }
  return out;
}

export interface FunctionWrites {
  file: string;
  name: string;
  body: string;
  /** Tables the function writes itself or through the statement builders it calls. */
  tables: Set<string>;
}

/**
 * Every top-level function with the tables it writes, builders' writes followed to a fixed point.
 * Calling one of the outbox's builders counts as writing `outbox` (an event).
 */
export function functionWrites(sources: Sources, tables: ReadonlyMap<string, string>): FunctionWrites[] {
  const functions: FunctionWrites[] = [];
  for (const [file, source] of Object.entries(sources)) {
    const text = code(source);
    const kit = kitVariables(text, tables);
    const described = describedTables(text);
    for (const m of text.matchAll(FUNCTION)) {
      const written = directWrites(m[0], kit, described);
      if (OUTBOX_BUILDER.test(m[0])) written.add("outbox");
      functions.push({ file, name: m[1]!, body: m[0], tables: written });
    }
  }
  const builders = new Map<string, Set<string>>();
  for (const f of functions) if (BUILDER.test(f.name)) builders.set(f.name, new Set([...(builders.get(f.name) ?? []), ...f.tables]));
  for (let changed = true; changed;) {
    changed = false;
    for (const f of functions) {
      for (const [name, written] of builders) {
        if (name === f.name || !new RegExp(`\\b${name}\\(`).test(f.body)) continue;
        for (const table of written) {
          if (f.tables.has(table)) continue;
          f.tables.add(table);
          changed = true;
        }
      }
      if (BUILDER.test(f.name)) {
        const known = builders.get(f.name)!;
        for (const table of f.tables) known.add(table);
      }
    }
  }
  return functions;
}
