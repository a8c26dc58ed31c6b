import { ApiError } from "../errors";

/** The query parameter a problem is about, as it appears in `errors[].field`. */
export type QueryField =
  | "query.properties"
  | "query.order"
  | "query.ids"
  | "query.excludeIds"
  | "query.searchText"
  | "query.skip"
  | "query.take"
  | "query.includeTotal"
  | "query.fieldNames";

/**
 * Stable rule names in `errors[].rule`, so clients can branch on the kind of mistake:
 * syntax (malformed text), unknownProperty / unknownField (a name the list does not know),
 * type (a value that does not fit the property's format), operator (an operator the format does
 * not support), notOrderable (multiselect or otherwise unorderable), limit (too large), format (a
 * malformed id or number), required (a missing required parameter).
 */
export type QueryRule =
  "syntax" | "unknownProperty" | "unknownField" | "type" | "operator" | "notOrderable" | "limit" | "format" | "required" | "enum";

/** An InvalidQuery error about one query parameter; the message is also the error detail. */
export function queryError(field: QueryField | `query.${string}`, rule: QueryRule, message: string): ApiError {
  return new ApiError("InvalidQuery", message, { errors: [{ field, rule, message }] });
}

/** Quotes a piece of client text for a message, shortened so a huge filter cannot bloat the error. */
export function quote(text: string, max = 80): string {
  const shown = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return `'${shown}'`;
}
