/**
 * Turns a typed filter into one SQL boolean expression over the list's id. Each term becomes a
 * membership test against a subquery on property_values that is keyed by
 * (entity_kind, name, value_...), the prefix of the indexes property_values_num_idx and
 * property_values_text_idx, so SQLite searches the index instead of scanning the table:
 *
 *   eq/gt/ge/lt/le/in X  ->  id IN     (SELECT entity_id ... AND col <op> X)   any value matches
 *   ne X                 ->  id NOT IN (SELECT entity_id ... AND col = X)      no value equals X
 *   eq null              ->  id NOT IN (SELECT entity_id ... AND col IS NOT NULL)
 *   ne null              ->  id IN     (SELECT entity_id ... AND col IS NOT NULL)
 *
 * A row whose typed column is NULL counts as no value, so `eq null` also finds entities that link
 * the property with a null value. Multi-valued properties (several rows) match a positive
 * comparison when ANY row matches, and `ne X` when NO row equals X.
 */
import { joinBalanced, type SqlValues } from "./sql-values";
import type { TypedNode, TypedTerm } from "./typing";

const COMPARISON: Record<"eq" | "gt" | "ge" | "lt" | "le", string> = { eq: "=", gt: ">", ge: ">=", lt: "<", le: "<=" };

export interface FilterSqlContext {
  /** The list's id expression, e.g. `e.id`. */
  idExpression: string;
  entityKind: string;
  values: SqlValues;
}

/** Compiles a typed filter into a parenthesised SQL expression (and/or chains as balanced trees, see joinBalanced). */
export function filterSql(node: TypedNode, context: FilterSqlContext): string {
  if (node.kind === "term") return termSql(node, context);
  return joinBalanced(
    node.children.map((child) => filterSql(child, context)),
    node.kind === "and" ? "AND" : "OR",
  );
}

function termSql(term: TypedTerm, { idExpression, entityKind, values }: FilterSqlContext): string {
  const column = `pv.${term.column}`;
  const rows =
    `SELECT pv.entity_id FROM property_values pv` +
    ` WHERE pv.entity_kind = ${values.value(entityKind)} AND pv.name = ${values.value(term.property.name)}`;
  if (term.isNull) {
    const membership = term.operator === "eq" ? "NOT IN" : "IN";
    return `${idExpression} ${membership} (${rows} AND ${column} IS NOT NULL)`;
  }
  const [first] = term.values;
  switch (term.operator) {
    case "in":
      return `${idExpression} IN (${rows} AND ${column} IN ${values.list(term.values)})`;
    case "ne":
      return `${idExpression} NOT IN (${rows} AND ${column} = ${values.value(first ?? null)})`;
    default:
      return `${idExpression} IN (${rows} AND ${column} ${COMPARISON[term.operator]} ${values.value(first ?? null)})`;
  }
}
