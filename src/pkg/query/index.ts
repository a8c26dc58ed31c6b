/**
 * The list query engine shared by every list endpoint: property filters, ordering, ids and
 * excludeIds, searchText, paging and unique values, compiled to single parameterised D1 statements.
 */
export { parseDateValue, formatDateValue } from "./dates";
export { parseFilter, filterTerms, ME_LITERAL, MAX_FILTER_TERMS, MAX_FILTER_VALUES, MAX_FILTER_DEPTH } from "./filter";
export type { ComparisonOperator, FilterLiteral, FilterNode, FilterTerm, FilterGroup } from "./filter";
export { typeFilter } from "./typing";
export type { TypedNode, TypedTerm } from "./typing";
export { parseOrder, MAX_ORDER_JOINS } from "./order";
export type { OrderDirection, OrderRequest, ElementField } from "./order";
export { defineList } from "./list";
export type { FieldDefinition, FieldType, ListDefinition, ListDefinitionInput } from "./list";
export { SqlValues, inList, csvInList, equals, splitCsv, joinBalanced, withProbe } from "./sql-values";
export type { Condition, SqlScalar } from "./sql-values";
export { enumCondition, parseIdList, parseUuidList, parsePaging, DEFAULT_TAKE, MAX_TAKE } from "./params";
export { compileListQuery, MAX_STATEMENT_BYTES } from "./compile";
export type { CompiledListQuery, CompiledStatement, ListQueryInput } from "./compile";
export { runListQuery, planListQuery } from "./run";
export type { ListQueryResult } from "./run";
export {
  ESTIMATE_CAP,
  IDS_THAT_DRIVE,
  MAX_ESTIMATES,
  MAX_WALK_WINDOW,
  MIN_WALK_WINDOW,
  ROW_COST,
  WALK_ABOVE,
  WALK_WINDOW_PER_ROW,
} from "./plan";
export type { ListPlan, PlanOptions, PlannedStatement } from "./plan";
export { compileUniqueValues, runUniqueValues, MAX_UNIQUE_FIELDS, DEFAULT_MAX_UNIQUE_VALUES } from "./unique-values";
export type { CompiledUniqueValues, UniqueValue, UniqueValuesInput, UniqueValuesResult } from "./unique-values";
export {
  listQueryShape,
  ListQuerySchema,
  ORDER_GRAMMAR,
  PROPERTIES_GRAMMAR,
  uniqueValuesQueryShape,
  UniqueValuesQuerySchema,
  UniqueValueSchema,
  UniqueValuesResponseSchema,
} from "./schemas";
export { queryError } from "./problems";
export type { QueryField, QueryRule } from "./problems";
export { noProperties, valueColumn } from "./types";
export type { CatalogLookup, PropertyFormat, PropertyInfo } from "./types";
