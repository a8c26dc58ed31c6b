/**
 * Columns and their targets, for any kind: a field by its name (or one of its aliases), a property by
 * the definition's name (`property:Name` when it collides with a field), and the column a problem's
 * field came from.
 */
import { ApiError } from "../../pkg/errors";
import type { Column, ImportKind, RowProblem, Target } from "./kind";

export const PROPERTY_PREFIX = "property:";

export function parseTarget(kind: ImportKind, text: string | null): Target {
  if (text === null || text === "") return null;
  if (text.startsWith(PROPERTY_PREFIX)) return { property: text.slice(PROPERTY_PREFIX.length) };
  if (kind.fields.includes(text)) return { field: text };
  const alias = kind.aliases[text];
  if (alias) return { field: alias };
  throw new Error(`unknown target ${text}`);
}

export const targetText = (target: Target): string | null =>
  target === null ? null : "field" in target ? target.field : `${PROPERTY_PREFIX}${target.property}`;

/** True when `text` names a mapping target of the kind (a field, one of its spellings, or `property:Name`). */
export function isTarget(kind: ImportKind, text: string): boolean {
  return text.startsWith(PROPERTY_PREFIX) ? text.length > PROPERTY_PREFIX.length : text in kind.aliases || kind.fields.includes(text);
}

/**
 * The default mapping of a file's headers: a field by its name (or the read shape's spelling), a
 * property by its definition's name (or `property:Name`); read-only and unknown columns are not imported.
 */
export function proposeMapping(
  kind: ImportKind,
  headers: readonly string[],
  propertyNames: ReadonlySet<string>,
): Record<string, string | null> {
  const mapping: Record<string, string | null> = {};
  for (const header of headers) {
    if (header === "") continue;
    if (header.startsWith(PROPERTY_PREFIX)) mapping[header] = propertyNames.size > 0 ? header : null;
    else if (isTarget(kind, header)) mapping[header] = targetText(parseTarget(kind, header));
    else if (kind.readOnly.test(header)) mapping[header] = null;
    else if (propertyNames.has(header)) mapping[header] = `${PROPERTY_PREFIX}${header}`;
    else mapping[header] = null;
  }
  return mapping;
}

/** The header of the column mapped to `field`, or null. */
export const columnOfField = (columns: readonly Column[], field: string): string | null =>
  columns.find((c) => c.target !== null && "field" in c.target && c.target.field === field)?.header ?? null;

/**
 * The column a problem's field came from: the column mapped to the longest prefix of its path, a
 * property's column for `body.properties.N...` or `body.properties.Name`; null for the row as a whole.
 */
export function columnOf(columns: readonly Column[], field: string, properties: readonly { name: string }[]): string | null {
  const path = field.replace(/^body\./, "").replace(/\[(\d+)\]/g, ".$1");
  const property = /^properties\.([^.]+)/.exec(path);
  if (property) {
    const name = /^\d+$/.test(property[1]!) ? properties[Number(property[1])]?.name : property[1];
    return columns.find((c) => c.target !== null && "property" in c.target && c.target.property === name)?.header ?? null;
  }
  let best: Column | null = null;
  for (const column of columns) {
    if (column.target === null || !("field" in column.target)) continue;
    const target = column.target.field;
    const matches = path === target || path.startsWith(`${target}.`) || target.startsWith(`${path}.`);
    if (matches && (!best || target.length > (best.target as { field: string }).field.length)) best = column;
  }
  return best?.header ?? null;
}

/** The problems of an ApiError of a single request, each with its column; null when it is not one (a fault, a refusal of the caller). */
export function problemsOfError(error: unknown, columns: readonly Column[], properties: readonly { name: string }[]): RowProblem[] | null {
  if (!(error instanceof ApiError) || error.status >= 500 || error.status === 401 || error.status === 403) return null;
  const listed = error.errors?.length
    ? error.errors
    : [{ field: "body", rule: error.code === "Conflict" ? "conflict" : error.code, message: error.message }];
  return listed.map((p) => ({ ...p, column: columnOf(columns, p.field, properties) }));
}
