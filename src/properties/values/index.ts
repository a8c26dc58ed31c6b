/**
 * Linked property values, for every domain whose entities carry properties: resolve and validate a
 * `{name, value}` list against an entity type, turn the result into property_values rows, write them
 * in the entity's batch and read them back.
 */
export { checkValue, type JsonValue } from "./format";
export { checkLinkedValues, resolveLinkedValues, resolveAgainst, toLinkedProperties } from "./resolve";
export {
  deletePropertyValuesStatement,
  insertPropertyValuesStatements,
  readPropertyValues,
  replacePropertyValuesStatements,
  toPropertyValueRows,
  type PropertyValueRow,
} from "./rows";
export type { LinkedProperty, ResolvedProperty } from "./types";
