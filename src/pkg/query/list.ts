/**
 * The description of one list endpoint: its table, its id, the canonical fields a client may order
 * by or ask unique values of, the columns searchText looks in and the default order. All of it is
 * trusted SQL written by the API's developers; client input never reaches these strings.
 */

export type FieldType = "text" | "number" | "boolean" | "datetime";

export interface FieldDefinition {
  /** SQL expression of the field's value, e.g. `e.reference_id`. */
  column: string;
  /** How unique values render the value (boolean columns hold 0/1). Default text. */
  type?: FieldType;
  /** SQL expression of the human-readable name for unique values (e.g. an owner's name). Default `column`. */
  displayColumn?: string;
  /** LEFT JOINs the field needs (deduplicated by text), added only when the field is used. */
  joins?: readonly string[];
  /** Whether `order` accepts the field. Default true. */
  orderable?: boolean;
  /** Whether unique values accept the field. Default true. */
  uniqueValues?: boolean;
  /**
   * An index of the list's table starts with this field's column (after the columns of the list's
   * fixed conditions, such as `is_latest = 1`), so SQLite can read the list in this field's order
   * and stop at the page. Then a page ordered first by the field, whose filter or conditions must be
   * checked row by row (property terms, conditions with a probe form such as plants and tags), may
   * walk that index in a bounded window instead of sorting every match (page-sql.ts, walkSql). The
   * column must be of the list's own table. Default false.
   */
  indexed?: boolean;
}

export interface ListDefinitionInput {
  /** The table, e.g. `deviations`. */
  table: string;
  /** The table's alias in every statement, e.g. `e`. Must not be one of the engine's aliases (pv, pu, pw, pb, pbound, po*, pc*). */
  alias: string;
  /** The entity_kind of the list's rows in property_values, e.g. `deviation`. */
  entityKind: string;
  /** The id column, e.g. `id`. Also the final tie-breaker of every order. */
  idColumn: string;
  /** Whether `ids`/`excludeIds` must be UUIDs (then compared lower-case). Default "uuid". */
  idFormat?: "uuid" | "text";
  /** Canonical fields by client name; nested names use dots (`objectOwner.name`). */
  fields: Record<string, FieldDefinition>;
  /** SQL expressions searched by `searchText`. */
  searchColumns: readonly string[];
  /** The order when the client gives none, in `order` syntax over canonical fields, e.g. `referenceId desc`. */
  defaultOrder?: string;
  /** The select list of the page query. Default `<alias>.*`. */
  select?: string;
  /**
   * JOINs every statement of the list needs (for example when a search column lives in another
   * table). Each must match at most one row per entity (a LEFT JOIN on a key), or counts and pages
   * would repeat entities.
   */
  joins?: readonly string[];
}

export interface ListDefinition extends Readonly<ListDefinitionInput> {
  /** `<alias>.<idColumn>`. */
  readonly idExpression: string;
  /** Resolves a client field name: exact match first, then case-insensitive. */
  field(name: string): { name: string; definition: FieldDefinition } | undefined;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED_ALIAS = /^(pv|pu|pw|pb|pbound|po\d*|pc\d*)$/;
const CANONICAL_ORDER_TERM = /^([A-Za-z0-9_.]+)(?:\s+(asc|desc))?$/i;

/**
 * Declares a list. Checks the declaration once at module load, so a typo in a default order fails
 * at startup (and in every test), not on the first request.
 */
export function defineList(input: ListDefinitionInput): ListDefinition {
  for (const [what, value] of [
    ["table", input.table],
    ["alias", input.alias],
    ["idColumn", input.idColumn],
  ] as const) {
    if (!IDENTIFIER.test(value)) throw new Error(`defineList: ${what} '${value}' is not a plain SQL identifier.`);
  }
  if (RESERVED_ALIAS.test(input.alias)) throw new Error(`defineList: alias '${input.alias}' is reserved by the query engine.`);
  const byLowerName = new Map<string, string>();
  for (const name of Object.keys(input.fields)) {
    if (name.toLowerCase().startsWith("properties.")) throw new Error(`defineList: field '${name}' clashes with the properties. prefix.`);
    if (byLowerName.has(name.toLowerCase()))
      throw new Error(`defineList: fields '${name}' and '${byLowerName.get(name.toLowerCase())}' differ only in case.`);
    byLowerName.set(name.toLowerCase(), name);
  }
  const field = (name: string) => {
    const exact = Object.hasOwn(input.fields, name) ? name : byLowerName.get(name.toLowerCase());
    const definition = exact === undefined ? undefined : input.fields[exact];
    return exact === undefined || definition === undefined ? undefined : { name: exact, definition };
  };
  for (const term of (input.defaultOrder ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)) {
    const match = CANONICAL_ORDER_TERM.exec(term);
    const resolved = match?.[1] === undefined ? undefined : field(match[1]);
    if (!resolved || resolved.definition.orderable === false) {
      throw new Error(`defineList: default order term '${term}' does not name an orderable canonical field.`);
    }
  }
  return Object.freeze({ ...input, idExpression: `${input.alias}.${input.idColumn}`, field });
}
