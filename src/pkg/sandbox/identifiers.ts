/**
 * Which scope names can be bound as parameters of the expression function.
 *
 * A name becomes a parameter only when the engine would accept it as one in sloppy AND strict code
 * (a body may start with "use strict"); every other name is still reachable as `properties[name]`.
 * A name that slipped through here would make every expression of its entity a syntax error, so the
 * list errs on the side of not binding.
 */

/** The object every expression receives with all scope values, whatever their names. */
export const PROPERTIES_PARAMETER = "properties";

// ECMAScript IdentifierName without escapes; a backslash escape would let `\u0061` spell anything.
const IDENTIFIER_NAME = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200C\u200D]*$/u;

// Reserved words, strict-mode reserved words, and the two names strict mode forbids as parameters.
const NOT_BINDABLE = new Set([
  "await",
  "break",
  "case",
  "catch",
  "class",
  "const",
  "continue",
  "debugger",
  "default",
  "delete",
  "do",
  "else",
  "enum",
  "export",
  "extends",
  "false",
  "finally",
  "for",
  "function",
  "if",
  "import",
  "in",
  "instanceof",
  "new",
  "null",
  "return",
  "super",
  "switch",
  "this",
  "throw",
  "true",
  "try",
  "typeof",
  "var",
  "void",
  "while",
  "with",
  "yield",
  "implements",
  "interface",
  "let",
  "package",
  "private",
  "protected",
  "public",
  "static",
  "arguments",
  "eval",
  PROPERTIES_PARAMETER,
]);

/** True when `name` can be a parameter name of the expression function. */
export function isBindableName(name: string): boolean {
  return IDENTIFIER_NAME.test(name) && !NOT_BINDABLE.has(name);
}

/** The scope names to bind as parameters, in the scope's own key order. */
export function bindableNames(scope: Record<string, unknown>): string[] {
  return Object.keys(scope).filter(isBindableName);
}
