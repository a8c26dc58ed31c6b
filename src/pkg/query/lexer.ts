/**
 * Tokenizer of the `properties` filter. Words are maximal runs of anything that is not whitespace,
 * a parenthesis, a comma or a quote; the parser decides from the position in the grammar whether a
 * word is a property name, an operator, a keyword or a literal. That keeps property names such as
 * `2nd-inspection.depth` (which look like numbers or contain dashes) unambiguous without escaping.
 */
import { queryError, quote } from "./problems";

export type TokenKind = "word" | "string" | "lparen" | "rparen" | "comma" | "unterminated" | "end";

export interface Token {
  kind: TokenKind;
  /** The decoded text: a word as written, a string without its quotes and with `''` undoubled. */
  text: string;
  /** 0-based offset of the first character in the filter text. */
  start: number;
  /** 0-based offset just past the last character. */
  end: number;
}

const PUNCTUATION: Record<string, TokenKind> = { "(": "lparen", ")": "rparen", ",": "comma" };
const WORD_STOP = /[\s(),']/;

/**
 * Splits a filter into tokens; the last token is always `end`. An unterminated quote becomes an
 * `unterminated` token (the rest of the text) rather than an error here, so that the parser
 * reports whichever mistake comes first: in `Name eq 'O'Brien'` that is the stray `Brien`.
 */
export function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const punctuation = PUNCTUATION[ch];
    if (punctuation) {
      tokens.push({ kind: punctuation, text: ch, start: i, end: i + 1 });
      i++;
      continue;
    }
    if (ch === "'") {
      const token = readString(input, i);
      tokens.push(token);
      if (token.kind === "unterminated") break;
      i = token.end;
      continue;
    }
    let j = i + 1;
    while (j < input.length && !WORD_STOP.test(input[j] as string)) j++;
    tokens.push({ kind: "word", text: input.slice(i, j), start: i, end: j });
    i = j;
  }
  tokens.push({ kind: "end", text: "", start: input.length, end: input.length });
  return tokens;
}

function readString(input: string, start: number): Token {
  let value = "";
  let i = start + 1;
  while (i < input.length) {
    const ch = input[i] as string;
    if (ch === "'") {
      // A doubled quote is a literal quote; a single one closes the string.
      if (input[i + 1] === "'") {
        value += "'";
        i += 2;
        continue;
      }
      return { kind: "string", text: value, start, end: i + 1 };
    }
    value += ch;
    i++;
  }
  return { kind: "unterminated", text: input.slice(start), start, end: input.length };
}

/** The error for an `unterminated` token. */
export function unterminatedError(token: Token) {
  return queryError(
    "query.properties",
    "syntax",
    `Unterminated quoted value ${quote(token.text)} at position ${token.start + 1}: close it with a single quote ` +
      `(write a quote inside a value as two quotes, e.g. 'O''Brien').`,
  );
}
