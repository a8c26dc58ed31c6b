/**
 * The list query engine shared by every list endpoint: property filters, ordering, ids and
 * excludeIds, searchText, paging and unique values, compiled to single parameterised D1 statements.
 */
export { parseDateValue, formatDateValue } from "./dates";
export { parseFilter, ME_LITERAL } from "./filter";
export type { FilterLiteral, FilterNode } from "./filter";
export { typeFilter } from "./typing";

export { parseOrder } from "./order";

export { defineList } from "./list";
export type { ListDefinition } from "./list";
export { SqlValues, inList, csvInList, equals, splitCsv, joinBalanced, withProbe } from "./sql-values";
export type { Condition, SqlScalar } from "./sql-values";
export { enumCondition, parseUuidList, parsePaging } from "./params";
export { compileListQuery } from "./compile";
export type { CompiledListQuery, ListQueryInput } from "./compile";
export { runListQuery, planListQuery } from "./run";
export type { ListPage } from "./run";

export type { ListPlan, PlanOptions } from "./plan";
export type { Keyset } from "./keyset";
export { compileUniqueValues, runUniqueValues } from "./unique-values";
export type { UniqueValuesInput, UniqueValuesResult } from "./unique-values";
export {
  listQueryShape,
  ListQuerySchema,
  ORDER_GRAMMAR,
  PROPERTIES_GRAMMAR,
  uniqueValuesQueryShape,
  UniqueValuesQuerySchema,
  UniqueValuesResponseSchema,
} from "./schemas";
export { queryError } from "./problems";

export { noProperties } from "./types";
export type { CatalogLookup, PropertyFormat, PropertyInfo } from "./types";
