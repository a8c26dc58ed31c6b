/**
 * Index mappings: the fields of an index's documents and their metadata (spec 2.10: alwaysShow,
 * displayName, isIdentity), plus the type that decides how a field is searched, filtered, sorted
 * and faceted. One validator serves the standard mappings (checked at load) and custom libraries'
 * mappings (checked on every synchronisation).
 */

export const FIELD_TYPES = ["text", "keyword", "number", "date", "boolean"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface MappingField {
  /** text: words are searched; keyword: exact values (also searched as words); number, date (ISO 8601), boolean. */
  type: FieldType;
  displayName: string;
  /** Shown in results by default (the rest on request with `fields`). */
  alwaysShow?: boolean;
  /** Holds an object owner's name (or id): `me` as a filter value means the caller. */
  isIdentity?: boolean;
}

export type Mapping = Record<string, MappingField>;

/** Default maximum number of fields of a custom index (spec 8); `SEARCH_MAX_FIELDS` overrides it. */
export const DEFAULT_MAX_FIELDS = 5000;
export const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const METADATA_KEYS = new Set(["type", "displayName", "alwaysShow", "isIdentity"]);

/** Every rule a mapping breaks, in words a log or a problem can show; empty when it is valid. */
export function mappingProblems(mapping: unknown, maxFields = DEFAULT_MAX_FIELDS): string[] {
  if (mapping === null || typeof mapping !== "object" || Array.isArray(mapping)) return ["the mapping must be an object of fields by name"];
  const entries = Object.entries(mapping as Record<string, unknown>);
  const problems: string[] = [];
  if (entries.length === 0) problems.push("the mapping has no fields");
  if (entries.length > maxFields) problems.push(`the mapping has ${entries.length} fields; at most ${maxFields} are allowed`);
  const seen = new Map<string, string>();
  for (const [name, field] of entries.slice(0, maxFields + 1)) {
    if (!FIELD_NAME.test(name)) problems.push(`field '${name.slice(0, 80)}': a name is a letter then up to 63 letters, digits or _`);
    else if (name === "id") problems.push("field 'id': the document key is not a mapping field");
    const lower = name.toLowerCase();
    if (seen.has(lower)) problems.push(`fields '${seen.get(lower)}' and '${name}' differ only in case`);
    seen.set(lower, name);
    if (field === null || typeof field !== "object" || Array.isArray(field)) {
      problems.push(`field '${name}': its metadata must be an object`);
      continue;
    }
    const f = field as Record<string, unknown>;
    for (const key of Object.keys(f))
      if (!METADATA_KEYS.has(key))
        problems.push(`field '${name}': unknown metadata key '${key}' (allowed: ${[...METADATA_KEYS].join(", ")})`);
    if (!FIELD_TYPES.includes(f.type as FieldType)) problems.push(`field '${name}': type must be one of ${FIELD_TYPES.join(", ")}`);
    if (typeof f.displayName !== "string" || f.displayName.length === 0 || f.displayName.length > 200)
      problems.push(`field '${name}': displayName must be a text of 1 to 200 characters`);
    for (const flag of ["alwaysShow", "isIdentity"])
      if (f[flag] !== undefined && typeof f[flag] !== "boolean") problems.push(`field '${name}': ${flag} must be true or false`);
    if (f.isIdentity === true && f.type !== "keyword" && f.type !== "text")
      problems.push(`field '${name}': an isIdentity field holds names, so its type is keyword or text`);
    if (problems.length > 50) break;
  }
  return problems;
}

/** Resolves a client's field name against a mapping: exact, then ignoring case. */
export function resolveField(mapping: Mapping, name: string): string | undefined {
  if (Object.hasOwn(mapping, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(mapping).find((k) => k.toLowerCase() === lower);
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

function scalarProblem(type: FieldType, value: unknown): string | null {
  if (value === null) return null;
  switch (type) {
    case "text":
    case "keyword":
      return typeof value === "string" ? (value.length > 32_768 ? "a text longer than 32,768 characters" : null) : "not a text";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "not a finite number";
    case "boolean":
      return typeof value === "boolean" ? null : "not true or false";
    case "date":
      return typeof value === "string" && ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)) ? null : "not an ISO 8601 date";
  }
}

export const MAX_KEY_CHARS = 256;

/**
 * Checks one entry of an index against its mapping. An entry is `{ id, ...fields }`: `id` (a text of
 * 1 to 256 characters) is the document key, every other key a mapping field holding a value of its
 * type, an array of them, or null (stored as absent). Returns the document or why it breaks the rules.
 */
export function checkEntry(mapping: Mapping, entry: unknown): { key: string; fields: Record<string, unknown> } | { problem: string } {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return { problem: "an entry must be an object" };
  const { id, ...rest } = entry as Record<string, unknown>;
  if (typeof id !== "string" && typeof id !== "number") return { problem: "an entry needs an id (a text or number)" };
  const key = String(id);
  if (key.length === 0 || key.length > MAX_KEY_CHARS)
    return { problem: `entry '${key.slice(0, 40)}': its id must have 1 to ${MAX_KEY_CHARS} characters` };
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(rest)) {
    const field = mapping[name];
    if (!field || !Object.hasOwn(mapping, name)) return { problem: `entry '${key}': field '${name}' is not in the mapping` };
    // Null and undefined are the same as an absent field (filters: `eq null`).
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? value : [value];
    if (values.length > 1000) return { problem: `entry '${key}': field '${name}' holds more than 1,000 values` };
    for (const v of values) {
      const problem = scalarProblem(field.type, v);
      if (problem) return { problem: `entry '${key}': field '${name}' (${field.type}) holds ${problem}` };
    }
    fields[name] = value;
  }
  return { key, fields };
}

/** The words of a document that free text searches: every text and keyword value, one per line. */
export function searchableText(mapping: Mapping, fields: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const type = mapping[name]?.type;
    if (type !== "text" && type !== "keyword") continue;
    for (const v of Array.isArray(value) ? value : [value]) if (typeof v === "string" && v !== "") parts.push(v);
  }
  return parts.join("\n");
}
