/**
 * Types a parsed filter against the property definitions: every value must fit the format of its
 * property, and every operator must make sense for it. The result says which typed column of
 * property_values to compare and holds the values already converted to what is stored there.
 */
import { parseDateValue } from "./dates";
import type { ComparisonOperator, FilterLiteral, FilterNode, FilterTerm } from "./filter";
import { queryError, quote, type QueryRule } from "./problems";
import { valueColumn, type PropertyFormat, type PropertyInfo } from "./types";

export interface TypedTerm {
  kind: "term";
  property: PropertyInfo;
  operator: ComparisonOperator;
  column: "value_num" | "value_text";
  /** The compared values as stored; empty for `eq null` / `ne null`. */
  values: (number | string)[];
  isNull: boolean;
}

export interface TypedGroup {
  kind: "and" | "or";
  children: TypedNode[];
}

export type TypedNode = TypedTerm | TypedGroup;

const ALL: readonly ComparisonOperator[] = ["eq", "ne", "gt", "ge", "lt", "le", "in"];
const EQUALITY: readonly ComparisonOperator[] = ["eq", "ne", "in"];

/**
 * Operators each format supports. Ordering comparisons on booleans, classification elements and
 * entity references have no meaning the client could rely on, so they are rejected.
 */
const OPERATORS_BY_FORMAT: Record<PropertyFormat, readonly ComparisonOperator[]> = {
  text: ALL,
  integer: ALL,
  decimal: ALL,
  date: ALL,
  boolean: EQUALITY,
  classification: EQUALITY,
  entity: EQUALITY,
};

const EXPECTED: Record<PropertyFormat, string> = {
  text: "a quoted text value",
  integer: "a whole number without quotes",
  decimal: "a number without quotes",
  date: "a quoted date, e.g. '2024-03-15T14:30:00Z' or '03/15/2024 14:30'",
  boolean: "true or false",
  classification: "a quoted classification element name",
  entity: "a quoted object owner id",
};

/** Types a filter tree; throws InvalidQuery naming the term for unknown properties and misfits. */
export function typeFilter(node: FilterNode, catalog: ReadonlyMap<string, PropertyInfo>): TypedNode {
  if (node.kind !== "term") return { kind: node.kind, children: node.children.map((c) => typeFilter(c, catalog)) };
  return typeTerm(node, catalog);
}

function typeTerm(term: FilterTerm, catalog: ReadonlyMap<string, PropertyInfo>): TypedTerm {
  const property = catalog.get(term.property);
  if (!property) {
    throw termError(term, "unknownProperty", `there is no property named ${quote(term.property)} (names are case-sensitive)`);
  }
  const column = valueColumn(property.format);
  const first = term.values[0];
  if (first?.kind === "null") return { kind: "term", property, operator: term.operator, column, values: [], isNull: true };
  if (!OPERATORS_BY_FORMAT[property.format].includes(term.operator)) {
    const allowed = OPERATORS_BY_FORMAT[property.format].join(", ");
    throw termError(term, "operator", `'${term.operator}' is not supported for ${property.format} properties (use ${allowed})`);
  }
  const values = term.values.map((literal) => convert(term, property.format, literal));
  return { kind: "term", property, operator: term.operator, column, values, isNull: false };
}

function convert(term: FilterTerm, format: PropertyFormat, literal: FilterLiteral): number | string {
  const mismatch = () =>
    termError(term, "type", `${term.property} is a ${format} property and needs ${EXPECTED[format]}, not ${show(literal)}`);
  switch (format) {
    case "text":
    case "classification":
    case "entity":
      if (literal.kind !== "string") throw mismatch();
      return literal.value;
    case "integer":
      if (literal.kind !== "number" || !/^[+-]?\d+$/.test(literal.raw) || !Number.isSafeInteger(literal.value)) throw mismatch();
      return literal.value;
    case "decimal":
      if (literal.kind !== "number") throw mismatch();
      return literal.value;
    case "boolean":
      if (literal.kind !== "boolean") throw mismatch();
      // Booleans are stored as 0/1 in value_num.
      return literal.value ? 1 : 0;
    case "date": {
      if (literal.kind !== "string") throw mismatch();
      const epoch = parseDateValue(literal.value);
      if (epoch === undefined) throw mismatch();
      return epoch;
    }
  }
}

function show(literal: FilterLiteral): string {
  switch (literal.kind) {
    case "string":
      return `the text ${quote(literal.value)}`;
    case "number":
      return literal.raw;
    case "boolean":
      return String(literal.value);
    case "null":
      return "null";
  }
}

function termError(term: FilterTerm, rule: QueryRule, reason: string) {
  return queryError("query.properties", rule, `Term ${quote(term.text)} at position ${term.position}: ${reason}.`);
}
