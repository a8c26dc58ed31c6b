/**
 * The filter as per-entity probes: every term looks up the values of ONE entity, the candidate the
 * statement is visiting. filter-sql.ts instead builds, per term, the list of every matching entity;
 * a probe costs one or two index lookups per term and candidate, however many entities match. The
 * order walk and the driven plan (page-sql.ts) use probes for every term that does not drive.
 *
 * Same semantics as filter-sql.ts (a multi-valued property matches a positive comparison when ANY
 * row matches, and `ne X` when NO row equals X; a null column counts as no value). Three forms:
 *
 * - Equality (`eq X`, `in` with at most MAX_SEEK_VALUES values, `ne X` negated), any property:
 *   `EXISTS (SELECT 1 ... WHERE entity_kind = ? AND name = ? AND col = X AND entity_id = id)`,
 *   exactly the list form's subquery with the entity fixed: every column of the covering index
 *   (entity_kind, name, value, entity_id) is bound, one index lookup, no table row.
 * - Other comparisons of a single-valued property: `(SELECT col ... AND position = 0) <op> X`,
 *   the value through the primary key (entity_kind, entity_id, name, position). Single-valued
 *   properties have exactly one row, at position 0 (values/rows.ts writes them so, and a
 *   definition's format and isMultiselect cannot change); with all four key columns bound SQLite
 *   always treats it as a unique lookup. `eq null` is `IS NULL`, `ne null` is `IS NOT NULL`.
 * - Other comparisons of a multi-valued property: `EXISTS (SELECT 1 ... AND position >= 0 AND c)`.
 *   Without ANALYZE statistics SQLite prefers the covering value index for a plain EXISTS over
 *   (entity_kind, entity_id, name) and then scans every value of the property per probe (seconds
 *   on 100,000 entities); the `position >= 0` range (always true) makes the primary key the index
 *   with the most usable columns.
 *
 * Within an `and`, equality probes come first: SQLite tests subquery terms in the order written,
 * and they are the cheaper ones. test/query/plans.test.ts checks the plans with and without
 * statistics.
 */
import { joinBalanced, type SqlValues } from "./sql-values";
import type { TypedNode, TypedTerm } from "./typing";

const COMPARISON: Record<"eq" | "gt" | "ge" | "lt" | "le", string> = { eq: "=", gt: ">", ge: ">=", lt: "<", le: "<=" };

export interface ProbeSqlContext {
  /** The SQL expression of the candidate entity's id, e.g. `e.id` or `pw.entity_id`. */
  idExpression: string;
  entityKind: string;
  values: SqlValues;
}

/** `in` lists up to this many values probe by index seeks (one per value); longer ones read the entity's row(s). */
export const MAX_SEEK_VALUES = 4;

/** Compiles a typed filter into a parenthesised SQL expression of per-entity probes. */
export function probeSql(node: TypedNode, context: ProbeSqlContext): string {
  if (node.kind === "term") return termProbe(node, context);
  const children = node.kind === "and" ? [...node.children].sort((a, b) => rank(a) - rank(b)) : node.children;
  return joinBalanced(
    children.map((child) => probeSql(child, context)),
    node.kind === "and" ? "AND" : "OR",
  );
}

/** 0 for an equality probe, 1 for a key lookup, 2 for a group (sort is stable: ties keep their order). */
function rank(node: TypedNode): number {
  if (node.kind !== "term") return 2;
  return isEqualityProbe(node) ? 0 : 1;
}

/** Whether the term's probe is an equality probe (one covering index lookup). */
export function isEqualityProbe(term: TypedTerm): boolean {
  if (term.isNull) return false;
  return term.operator === "eq" || term.operator === "ne" || (term.operator === "in" && term.values.length <= MAX_SEEK_VALUES);
}

function termProbe(term: TypedTerm, context: ProbeSqlContext): string {
  if (isEqualityProbe(term)) return equality(term, context);
  return term.property.isMultiselect ? multiValued(term, context) : singleValued(term, context);
}

function equality(term: TypedTerm, { idExpression, entityKind, values }: ProbeSqlContext): string {
  const column = `pv.${term.column}`;
  const [first] = term.values;
  const match = term.operator === "in" ? `${column} IN ${values.list(term.values)}` : `${column} = ${values.value(first ?? null)}`;
  const exists =
    `EXISTS (SELECT 1 FROM property_values pv WHERE pv.entity_kind = ${values.value(entityKind)}` +
    ` AND pv.name = ${values.value(term.property.name)} AND ${match} AND pv.entity_id = ${idExpression})`;
  return term.operator === "ne" ? `NOT ${exists}` : exists;
}

function rowsOf(term: TypedTerm, { idExpression, entityKind, values }: ProbeSqlContext): string {
  return (
    `FROM property_values pv WHERE pv.entity_kind = ${values.value(entityKind)} AND pv.entity_id = ${idExpression}` +
    ` AND pv.name = ${values.value(term.property.name)}`
  );
}

function singleValued(term: TypedTerm, context: ProbeSqlContext): string {
  const { values } = context;
  const value = `(SELECT pv.${term.column} ${rowsOf(term, context)} AND pv.position = 0)`;
  if (term.isNull) return `${value} ${term.operator === "eq" ? "IS NULL" : "IS NOT NULL"}`;
  const [first] = term.values;
  switch (term.operator) {
    case "in":
      return `${value} IN ${values.list(term.values)}`;
    case "ne":
      // Not reached (ne is an equality probe); kept so every operator has a meaning here.
      return `${value} IS NOT ${values.value(first ?? null)}`;
    default:
      return `${value} ${COMPARISON[term.operator]} ${values.value(first ?? null)}`;
  }
}

function multiValued(term: TypedTerm, context: ProbeSqlContext): string {
  const { values } = context;
  const column = `pv.${term.column}`;
  const any = (condition: string) => `EXISTS (SELECT 1 ${rowsOf(term, context)} AND pv.position >= 0 AND ${condition})`;
  if (term.isNull) return term.operator === "eq" ? `NOT ${any(`${column} IS NOT NULL`)}` : any(`${column} IS NOT NULL`);
  const [first] = term.values;
  switch (term.operator) {
    case "in":
      return any(`${column} IN ${values.list(term.values)}`);
    case "ne":
      // Not reached (ne is an equality probe); kept so every operator has a meaning here.
      return `NOT ${any(`${column} = ${values.value(first ?? null)}`)}`;
    default:
      return any(`${column} ${COMPARISON[term.operator]} ${values.value(first ?? null)}`);
  }
}
