/**
 * Linked property values, for every domain whose entities carry properties: resolve and validate a
 * `{name, value}` list against an entity type, turn the result into property_values rows, write them
 * in the entity's batch and read them back.
 */
export { checkValue, isEmptyValue, type JsonValue, type Owner, type ValueRules } from "./format";
export {
  checkLinkedValues,
  resolveLinkedValues,
  resolveAgainst,
  toLinkedProperties,
  type LinkedValueInput,
  type LinkedValuesCheck,
  type ResolveOptions,
} from "./resolve";
export {
  deletePropertyValuesStatement,
  insertPropertyValuesStatements,
  readPropertyValues,
  replacePropertyValuesStatements,
  toPropertyValueRows,
  type PropertyValueRow,
} from "./rows";
export type { LinkedDefinition, LinkedProperty, ResolvedProperty } from "./types";
