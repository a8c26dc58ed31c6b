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
 *
 * SQLite builds each subquery's list in full, so this form costs time in proportion to the rows
 * each term matches; probe-sql.ts is the per-entity form for the plans that avoid that.
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

/** Whether a term matches the entities WITHOUT the rows termRows describes (ne X, eq null). */
export function isNegated(term: TypedTerm): boolean {
  return term.isNull ? term.operator === "eq" : term.operator === "ne";
}

/**
 * `pv.entity_kind = ? AND pv.name = ? AND <column condition>`: the rows of property_values pv that
 * a term's subquery reads, an index range of (entity_kind, name, value). `negated` says whether the
 * term matches the entities WITHOUT such a row (ne X, eq null).
 */
export function termRows(term: TypedTerm, entityKind: string, values: SqlValues): { rows: string; negated: boolean } {
  const column = `pv.${term.column}`;
  const prefix = `pv.entity_kind = ${values.value(entityKind)} AND pv.name = ${values.value(term.property.name)}`;
  const negated = isNegated(term);
  if (term.isNull) return { rows: `${prefix} AND ${column} IS NOT NULL`, negated };
  const [first] = term.values;
  switch (term.operator) {
    case "in":
      return { rows: `${prefix} AND ${column} IN ${values.list(term.values)}`, negated };
    case "ne":
      return { rows: `${prefix} AND ${column} = ${values.value(first ?? null)}`, negated };
    default:
      return { rows: `${prefix} AND ${column} ${COMPARISON[term.operator]} ${values.value(first ?? null)}`, negated };
  }
}

function termSql(term: TypedTerm, { idExpression, entityKind, values }: FilterSqlContext): string {
  const { rows, negated } = termRows(term, entityKind, values);
  return `${idExpression} ${negated ? "NOT IN" : "IN"} (SELECT pv.entity_id FROM property_values pv WHERE ${rows})`;
}
