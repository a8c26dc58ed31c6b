/**
 * The columns of an exported list, from the zod schema of the JSON its list route answers, so the
 * columns of a CSV or XLSX export are the fields of the same items (docs/decisions.md, "Export: the
 * column convention"; the import reads the same headers):
 *
 * - one column per scalar field, headed by its JSON name (`id`, `title`, `dueDate`);
 * - nested objects flattened with dots (`assetReference.plantId`), whether or not they are null;
 * - arrays of scalars in one column, their items joined with "; ";
 * - arrays of objects: one column per field of the items (`relationships.referenceId`), joined with "; ";
 * - anything else (a free-form record such as `metadata`, an unknown) in one column as JSON;
 * - the `properties` array ([{ name, value }]) becomes one column per property definition, headed
 *   by the definition's name exactly, or `property:<name>` where that name is also a field column.
 *
 * The walk reads the schema's definition (zod 4 `_zod.def`); it is done once per route, not per row.
 */
import type { z } from "@hono/zod-openapi";

/** How one column reads its value from an item. */
export interface Column {
  header: string;
  /** The path of JSON names from the item to the value (for a property column, its name). */
  path: readonly string[];
  kind: "scalar" | "scalarArray" | "objectArray" | "json" | "property";
}

export interface ListColumns {
  /** The field columns, in the schema's order. */
  fields: readonly Column[];
  /** Whether the items carry `properties` ([{ name, value }]), which become property columns. */
  hasProperties: boolean;
}

interface Def {
  type: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  element?: unknown;
  in?: unknown;
  out?: unknown;
  options?: unknown[];
}

const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/** The schema under nullable, optional, default, readonly and pipes (a transform's output is what the JSON shows). */
function unwrap(schema: unknown): Def {
  let def = defOf(schema);
  for (;;) {
    if (
      def.innerType !== undefined &&
      ["nullable", "optional", "default", "readonly", "catch", "nonoptional", "prefault"].includes(def.type)
    ) {
      def = defOf(def.innerType);
    } else if (def.type === "pipe" && def.out !== undefined) {
      const out = defOf(def.out);
      def = out.type === "transform" && def.in !== undefined ? defOf(def.in) : out;
    } else if (def.type === "lazy") {
      return { type: "unknown" };
    } else {
      return def;
    }
  }
}

const SCALARS = new Set(["string", "number", "int", "boolean", "enum", "literal", "bigint", "date", "nan", "null", "template_literal"]);

function isScalar(def: Def): boolean {
  if (SCALARS.has(def.type)) return true;
  // A union of scalars (e.g. string | number) is a scalar too.
  return def.type === "union" && (def.options ?? []).every((option) => isScalar(unwrap(option)));
}

/** The columns of the items of a list whose JSON answer is an array of `item`. */
export function listColumns(item: z.ZodType): ListColumns {
  const fields: Column[] = [];
  let hasProperties = false;
  const walk = (def: Def, path: string[]) => {
    for (const [name, child] of Object.entries(def.shape ?? {})) {
      const at = [...path, name];
      const inner = unwrap(child);
      if (path.length === 0 && name === "properties" && inner.type === "array") {
        hasProperties = true;
        continue;
      }
      if (inner.type === "object") {
        walk(inner, at);
      } else if (inner.type === "array") {
        const element = unwrap(inner.element);
        if (isScalar(element)) fields.push({ header: at.join("."), path: at, kind: "scalarArray" });
        else if (element.type === "object") {
          for (const [field, value] of Object.entries(element.shape ?? {})) {
            const leaf = unwrap(value);
            fields.push({ header: [...at, field].join("."), path: [...at, field], kind: isScalar(leaf) ? "objectArray" : "json" });
          }
        } else fields.push({ header: at.join("."), path: at, kind: "json" });
      } else {
        fields.push({ header: at.join("."), path: at, kind: isScalar(inner) ? "scalar" : "json" });
      }
    }
  };
  const root = unwrap(item);
  if (root.type !== "object") throw new Error("listColumns: the item of an exported list must be an object schema.");
  walk(root, []);
  return { fields, hasProperties };
}

/** Property columns for these definition names (in the order given), prefixed where a field column has the same header. */
export function propertyColumns(names: readonly string[], fields: readonly Column[]): Column[] {
  const taken = new Set(fields.map((column) => column.header));
  return names.map((name) => ({ header: taken.has(name) ? `property:${name}` : name, path: [name], kind: "property" }));
}

/** A cell: a string, a number, a boolean, or null for an empty cell. */
export type Cell = string | number | boolean | null;

/** Items of arrays are joined with this (the import splits on it). */
export const JOIN = "; ";

function scalarCell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  // An owner or a reference ({ id, name }) is written as its id, which the import takes back.
  if (typeof value === "object" && "id" in value && typeof (value as { id: unknown }).id === "string") return (value as { id: string }).id;
  return JSON.stringify(value);
}

const joined = (values: readonly unknown[]): Cell =>
  values.length === 0 ? null : values.map((v) => String(scalarCell(v) ?? "")).join(JOIN);

function at(item: unknown, path: readonly string[]): unknown {
  let value = item;
  for (const name of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

/** The cells of one item, in the order of `columns`. */
export function cellsOf(item: unknown, columns: readonly Column[], properties: ReadonlyMap<string, unknown>): Cell[] {
  return columns.map((column) => {
    switch (column.kind) {
      case "scalar":
        return scalarCell(at(item, column.path));
      case "scalarArray": {
        const value = at(item, column.path);
        return Array.isArray(value) ? joined(value) : scalarCell(value);
      }
      case "objectArray": {
        const list = at(item, column.path.slice(0, -1));
        const field = column.path[column.path.length - 1] ?? "";
        return Array.isArray(list) ? joined(list.map((entry) => (entry as Record<string, unknown> | null)?.[field])) : null;
      }
      case "json": {
        const value = at(item, column.path);
        return value === null || value === undefined ? null : JSON.stringify(value);
      }
      case "property": {
        const value = properties.get(column.path[0] ?? "");
        return Array.isArray(value) ? joined(value) : scalarCell(value);
      }
    }
  });
}

/** An item's property values by name, from its `properties` array ([{ name, value }]). */
export function propertiesOf(item: unknown): Map<string, unknown> {
  const list = (item as { properties?: unknown } | null)?.properties;
  const out = new Map<string, unknown>();
  if (Array.isArray(list)) {
    for (const entry of list as { name?: unknown; value?: unknown }[]) {
      if (typeof entry?.name === "string") out.set(entry.name, entry.value);
    }
  }
  return out;
}
