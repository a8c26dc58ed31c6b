/**
 * Parser of the `properties` query parameter (interface 4.1) into a tree of terms.
 *
 * Grammar (keywords and operators case-insensitive, property names case-sensitive):
 * ```
 * filter  := or
 * or      := and ( "or" and )*
 * and     := primary ( "and" primary )*
 * primary := "(" or ")" | term
 * term    := NAME OP value | NAME "in" "(" literal ( "," literal )* ")"
 * OP      := eq | ne | gt | ge | lt | le
 * value   := literal | null
 * literal := 'quoted text' | number | true | false
 * NAME    := [A-Za-z0-9_.-]+
 * ```
 * `and` binds tighter than `or`. Parentheses are an extension of the interface, which only shows
 * flat sequences; a flat sequence parses exactly as the interface describes. A quote inside a quoted
 * value is written twice (`'O''Brien'`). The filter may hold at most {@link MAX_FILTER_TERMS} terms
 * and {@link MAX_FILTER_VALUES} values (each element of an `in` list counts) and nest parentheses at
 * most {@link MAX_FILTER_DEPTH} deep. Positions in messages are 1-based character offsets.
 */
import { queryError, quote } from "./problems";
import { tokenize, unterminatedError, type Token } from "./lexer";

export const MAX_FILTER_TERMS = 100;
export const MAX_FILTER_VALUES = 1000;
export const MAX_FILTER_DEPTH = 20;

export type ComparisonOperator = "eq" | "ne" | "gt" | "ge" | "lt" | "le" | "in";
const OPERATORS: readonly ComparisonOperator[] = ["eq", "ne", "gt", "ge", "lt", "le", "in"];

export type FilterLiteral =
  | { kind: "string"; value: string }
  | { kind: "number"; value: number; raw: string }
  | { kind: "boolean"; value: boolean }
  | { kind: "null" };

export interface FilterTerm {
  kind: "term";
  property: string;
  operator: ComparisonOperator;
  /** One literal, or the elements of an `in` list. */
  values: FilterLiteral[];
  /** 1-based character offset of the term in the filter text, for messages. */
  position: number;
  /** The term as the client wrote it, for messages. */
  text: string;
}

export interface FilterGroup {
  kind: "and" | "or";
  /** Two or more children; chains of the same operator are flattened. */
  children: FilterNode[];
}

export type FilterNode = FilterTerm | FilterGroup;

const NAME = /^[A-Za-z0-9_.-]+$/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The string literal an unquoted `me` becomes where a filter accepts it (search filters over identity
 * fields, spec 2.10): the caller. It cannot collide with a value a client quotes.
 */
export const ME_LITERAL = "\u0000me";

/**
 * Parses a filter; an empty or blank filter gives undefined (no condition). Throws InvalidQuery.
 * With `acceptMe`, an unquoted `me` is a value ({@link ME_LITERAL}).
 */
export function parseFilter(input: string | undefined, options: { acceptMe?: boolean } = {}): FilterNode | undefined {
  if (input === undefined || input.trim() === "") return undefined;
  return new FilterParser(input, options.acceptMe ?? false).parse();
}

/** Visits every term of a filter tree, left to right. */
export function filterTerms(node: FilterNode | undefined): FilterTerm[] {
  if (!node) return [];
  if (node.kind === "term") return [node];
  return node.children.flatMap(filterTerms);
}

function fail(message: string): never {
  throw queryError("query.properties", "syntax", message);
}

function describe(token: Token): string {
  switch (token.kind) {
    case "end":
      return "the end of the filter";
    case "string":
      return `the quoted value ${quote(token.text)}`;
    default:
      return quote(token.text);
  }
}

class FilterParser {
  private readonly tokens: Token[];
  private index = 0;
  private terms = 0;
  private values = 0;

  constructor(
    private readonly input: string,
    private readonly acceptMe = false,
  ) {
    this.tokens = tokenize(input);
  }

  parse(): FilterNode {
    const node = this.parseOr(0);
    const next = this.peek();
    if (next.kind === "rparen") fail(`Unmatched ')' at position ${next.start + 1}.`);
    if (next.kind !== "end") {
      fail(`Expected 'and' or 'or' at position ${next.start + 1}, found ${describe(next)}.`);
    }
    return node;
  }

  private peek(): Token {
    // tokenize() always ends with an `end` token and the parser never moves past it.
    const token = this.tokens[this.index] as Token;
    if (token.kind === "unterminated") throw unterminatedError(token);
    return token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.index++;
    return token;
  }

  private keyword(token: Token): string | undefined {
    return token.kind === "word" ? token.text.toLowerCase() : undefined;
  }

  private parseOr(depth: number): FilterNode {
    return this.parseChain("or", () => this.parseChain("and", () => this.parsePrimary(depth)));
  }

  private parseChain(operator: "and" | "or", operand: () => FilterNode): FilterNode {
    const children = [operand()];
    while (this.keyword(this.peek()) === operator) {
      this.next();
      children.push(operand());
    }
    if (children.length === 1) return children[0] as FilterNode;
    return { kind: operator, children: children.flatMap((c) => (c.kind === operator ? c.children : [c])) };
  }

  private parsePrimary(depth: number): FilterNode {
    const token = this.peek();
    if (token.kind === "lparen") {
      if (depth >= MAX_FILTER_DEPTH) {
        throw queryError(
          "query.properties",
          "limit",
          `Parentheses at position ${token.start + 1} nest deeper than ${MAX_FILTER_DEPTH} levels.`,
        );
      }
      this.next();
      const inner = this.parseOr(depth + 1);
      const close = this.next();
      if (close.kind !== "rparen") {
        fail(`Expected ')' to close the '(' at position ${token.start + 1}, found ${describe(close)} at position ${close.start + 1}.`);
      }
      return inner;
    }
    return this.parseTerm();
  }

  private parseTerm(): FilterTerm {
    const previous = this.tokens[this.index - 1];
    const nameToken = this.next();
    const start = nameToken.start;
    const termText = () => this.input.slice(start, this.tokens[this.index - 1]?.end ?? this.input.length).trim();
    const keyword = this.keyword(nameToken);
    if (nameToken.kind !== "word" || keyword === "and" || keyword === "or") {
      // `and`/`or` are never property names, which keeps `A eq 1 or or B eq 2` a clear error.
      const context = previous ? ` after ${describe(previous)}` : "";
      fail(`Expected a term (property name) at position ${start + 1}${context}, found ${describe(nameToken)}.`);
    }
    if (!NAME.test(nameToken.text)) {
      fail(
        `Invalid property name ${quote(nameToken.text)} at position ${start + 1}: a name may contain letters, digits, '_', '-' and '.'.`,
      );
    }
    const operatorToken = this.next();
    const operator = OPERATORS.find((o) => o === this.keyword(operatorToken));
    if (!operator) {
      const found = operatorToken.kind === "end" ? "nothing" : describe(operatorToken);
      fail(`Term ${quote(termText())} at position ${start + 1} needs a comparison operator (eq, ne, gt, ge, lt, le, in); found ${found}.`);
    }
    const values = operator === "in" ? this.parseList(start, termText) : [this.parseValue(start, termText, operator)];
    this.terms++;
    this.values += values.length;
    const text = termText();
    if (this.terms > MAX_FILTER_TERMS) {
      throw queryError(
        "query.properties",
        "limit",
        `Term ${quote(text)} at position ${start + 1} exceeds the limit of ${MAX_FILTER_TERMS} terms per filter.`,
      );
    }
    if (this.values > MAX_FILTER_VALUES) {
      throw queryError(
        "query.properties",
        "limit",
        `Term ${quote(text)} at position ${start + 1} exceeds the limit of ${MAX_FILTER_VALUES} values per filter.`,
      );
    }
    return { kind: "term", property: nameToken.text, operator, values, position: start + 1, text };
  }

  private parseList(start: number, termText: () => string): FilterLiteral[] {
    const operator = "in";
    const open = this.next();
    if (open.kind !== "lparen") {
      fail(`Term ${quote(termText())} at position ${start + 1}: 'in' takes a parenthesised list, e.g. Name in ('a', 'b').`);
    }
    if (this.peek().kind === "rparen") fail(`Term ${quote(termText() + ")")} at position ${start + 1} has an empty 'in' list.`);
    const values: FilterLiteral[] = [];
    for (;;) {
      values.push(this.parseValue(start, termText, operator));
      const separator = this.next();
      if (separator.kind === "rparen") return values;
      if (separator.kind !== "comma") {
        fail(`Term ${quote(termText())} at position ${start + 1}: expected ',' or ')' in the 'in' list, found ${describe(separator)}.`);
      }
    }
  }

  private parseValue(start: number, termText: () => string, operator: ComparisonOperator): FilterLiteral {
    const token = this.next();
    if (token.kind === "string") return { kind: "string", value: token.text };
    if (token.kind !== "word") {
      fail(`Term ${quote(termText())} at position ${start + 1} needs a value, found ${describe(token)}.`);
    }
    const word = token.text.toLowerCase();
    if (word === "null") {
      if (operator === "in")
        fail(`Term ${quote(termText())} at position ${start + 1}: null cannot be an element of an 'in' list; use 'eq null' or 'ne null'.`);
      if (operator !== "eq" && operator !== "ne")
        fail(`Term ${quote(termText())} at position ${start + 1}: null can only be compared with eq or ne.`);
      return { kind: "null" };
    }
    if (word === "true" || word === "false") return { kind: "boolean", value: word === "true" };
    if (word === "me" && this.acceptMe) return { kind: "string", value: ME_LITERAL };
    if (NUMBER.test(token.text)) {
      const value = Number(token.text);
      if (Number.isFinite(value)) return { kind: "number", value, raw: token.text };
    }
    fail(
      `Term ${quote(termText())} at position ${start + 1} has the invalid value ${quote(token.text)}: text and date ` +
        `values are written in single quotes, numbers, true, false and null without.`,
    );
  }
}
