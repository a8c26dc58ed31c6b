/**
 * Regular expressions that users supply (a property definition's `regex`, a JSON Schema's `pattern`
 * and `patternProperties`, `format: "regex"`). They are written in JavaScript syntax, but they never
 * run on the native (backtracking) RegExp engine, where `^(a+)+$` against 32 characters takes seconds
 * and blocks the whole isolate: they are translated to RE2 syntax and run on re2js, a port of RE2
 * whose matching time is linear in the input. What RE2 lacks (backreferences, lookaround) is refused
 * when the pattern is saved, naming the construct. There is no guess at which patterns are dangerous.
 *
 * Two dialects: "plain" is a RegExp without flags (property definitions, tested like .NET's
 * IsMatch), "unicode" one with the u flag (JSON Schema, whose patterns are ECMA-262 with u). A
 * pattern must first be valid JavaScript in its dialect (checked by constructing a RegExp, which
 * only parses it: it is never executed), so the service accepts exactly the syntax it accepted
 * before, minus what RE2 cannot do. The translation keeps JavaScript's meaning where RE2's differs:
 * `\s`/`\S` are JavaScript's whitespace set, `.` excludes \r, U+2028 and U+2029 as well as \n,
 * `[^]`, `[]`, `\cX`, `\uXXXX`, `\u{X}`, identity escapes (`\q` is q without the u flag) and named
 * groups are rewritten. One difference remains: matching is per code point, so without the u flag a
 * `.` or a class still matches a whole astral character (an emoji) rather than half of it.
 *
 * Matching costs time proportional to input length times the size of the compiled program, so the
 * program is also capped (MAX_PROGRAM_SIZE; RE2 itself caps repetition counts at 1000).
 */
import { RE2JS, RE2JSException } from "re2js";

export type PatternDialect = "plain" | "unicode";

/** Why a pattern is refused: not valid JavaScript, a construct RE2 lacks, or a program too large. */
export type PatternRule = "syntax" | "unsupported" | "tooLarge";

/** A compiled user pattern. `test` searches unanchored, like RegExp.prototype.test. */
export interface UserPattern {
  readonly source: string;
  test(text: string): boolean;
}

export type PatternCheck = { ok: true; pattern: UserPattern } | { ok: false; rule: PatternRule; message: string };

/** Largest compiled program (RE2 instructions) accepted; see the module comment. */
export const MAX_PROGRAM_SIZE = 2000;
/** Longest pattern compiled at all (a property's regex is limited to 500 characters before this). */
export const MAX_PATTERN_LENGTH = 10_000;

/** Thrown by {@link userPattern} for a pattern that cannot run; `message` says why. */
export class UserPatternError extends Error {
  constructor(
    readonly rule: PatternRule,
    message: string,
  ) {
    super(message);
    this.name = "UserPatternError";
  }
}

const cache = new Map<string, PatternCheck>();
const CACHE_SIZE = 256;
/** Longer sources (e.g. output strings checked by `format: "regex"`) are not kept in the cache. */
const CACHED_LENGTH = 2000;

/** Checks and compiles `source`; cached, so saving and matching the same pattern compiles it once. */
export function checkPattern(source: string, dialect: PatternDialect): PatternCheck {
  if (source.length > CACHED_LENGTH) return compile(source, dialect);
  const key = `${dialect}\u0000${source}`;
  let checked = cache.get(key);
  if (checked) {
    // Refresh its place in the least-recently-used order.
    cache.delete(key);
  } else {
    checked = compile(source, dialect);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  cache.set(key, checked);
  return checked;
}

/** The compiled pattern, or a UserPatternError saying why it cannot run. */
export function userPattern(source: string, dialect: PatternDialect): UserPattern {
  const checked = checkPattern(source, dialect);
  if (!checked.ok) throw new UserPatternError(checked.rule, checked.message);
  return checked.pattern;
}

function compile(source: string, dialect: PatternDialect): PatternCheck {
  if (source.length > MAX_PATTERN_LENGTH) {
    return { ok: false, rule: "tooLarge", message: `It is longer than ${MAX_PATTERN_LENGTH} characters.` };
  }
  try {
    // Parses only; a RegExp is compiled to something executable when it first runs, which never happens.
    new RegExp(source, dialect === "unicode" ? "u" : "");
  } catch (error) {
    return {
      ok: false,
      rule: "syntax",
      message: `It is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}.`,
    };
  }
  let translated: string;
  try {
    translated = translate(source, dialect === "unicode");
  } catch (error) {
    if (error instanceof UserPatternError) return { ok: false, rule: error.rule, message: error.message };
    throw error;
  }
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(translated);
  } catch (error) {
    if (error instanceof RE2JSException) return re2Refusal(error);
    throw error;
  }
  const size = re2.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    return {
      ok: false,
      rule: "tooLarge",
      message:
        `It compiles to ${size} instructions, more than the ${MAX_PROGRAM_SIZE} allowed (matching time grows with it); ` +
        `use smaller repetition counts ({n,m}).`,
    };
  }
  return { ok: true, pattern: { source, test: (text: string) => re2.test(text) } };
}

const RE2_LACKS = "user patterns run on RE2, which matches in linear time and has no";

function unsupported(construct: string, lacks: string): UserPatternError {
  return new UserPatternError("unsupported", `It uses ${construct}: ${RE2_LACKS} ${lacks}.`);
}

function re2Refusal(error: RE2JSException): PatternCheck {
  const text = error.message.replace(/^error parsing regexp: /, "");
  if (/invalid repeat count|expression too large|nests too deeply/.test(text)) {
    return {
      ok: false,
      rule: "tooLarge",
      message: `It is too large for the linear-time engine (${text}); a repetition count is at most 1000, nested ones included.`,
    };
  }
  if (/\\[pP]/.test(text))
    return {
      ok: false,
      rule: "unsupported",
      message:
        `It uses a Unicode property RE2 does not know (${text}); use a general category such as \\p{L} or a script such ` +
        `as \\p{Greek}.`,
    };
  return { ok: false, rule: "unsupported", message: `RE2 cannot compile it (${text}).` };
}

// ---- JavaScript to RE2 syntax ----

/** JavaScript's \s: WhiteSpace and LineTerminator (RE2's \s is only [\t\n\f\r ]). */
const WHITESPACE: [number, number][] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

const hex = (n: number) => `\\x{${n.toString(16)}}`;
const rangeItems = (ranges: [number, number][]) => ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");

function complement(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [a, b] of ranges) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const SPACE_ITEMS = rangeItems(WHITESPACE);
const NON_SPACE_ITEMS = rangeItems(complement(WHITESPACE));
const ANY_ITEMS = `${hex(0)}-${hex(MAX_CODE_POINT)}`;
/** JavaScript's `.` without the s flag: anything but a line terminator. */
const DOT = `[^${rangeItems([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
])}]`;

/** General categories by their long names (JavaScript accepts both; RE2 only the short ones). */
const CATEGORIES: Record<string, string> = {
  Letter: "L",
  Uppercase_Letter: "Lu",
  Lowercase_Letter: "Ll",
  Titlecase_Letter: "Lt",
  Modifier_Letter: "Lm",
  Other_Letter: "Lo",
  Mark: "M",
  Combining_Mark: "M",
  Nonspacing_Mark: "Mn",
  Spacing_Mark: "Mc",
  Enclosing_Mark: "Me",
  Number: "N",
  Decimal_Number: "Nd",
  digit: "Nd",
  Letter_Number: "Nl",
  Other_Number: "No",
  Punctuation: "P",
  punct: "P",
  Connector_Punctuation: "Pc",
  Dash_Punctuation: "Pd",
  Open_Punctuation: "Ps",
  Close_Punctuation: "Pe",
  Initial_Punctuation: "Pi",
  Final_Punctuation: "Pf",
  Other_Punctuation: "Po",
  Symbol: "S",
  Math_Symbol: "Sm",
  Currency_Symbol: "Sc",
  Modifier_Symbol: "Sk",
  Other_Symbol: "So",
  Separator: "Z",
  Space_Separator: "Zs",
  Line_Separator: "Zl",
  Paragraph_Separator: "Zp",
  Other: "C",
  Control: "Cc",
  Cntrl: "Cc",
  Format: "Cf",
  Surrogate: "Cs",
  Private_Use: "Co",
};
const SHORT_CATEGORIES = new Set(Object.values(CATEGORIES));

/** A JavaScript {n}, {n,} or {n,m} quantifier where it starts (sticky: no copy of the rest of the pattern). */
const QUANTIFIER = /\{\d+(,\d*)?\}/y;
const isHex = (text: string) => /^[0-9a-fA-F]+$/.test(text);
const isAsciiLetter = (c: string) => /^[A-Za-z]$/.test(c);

/**
 * Rewrites a pattern that is valid JavaScript (checked before) into RE2 syntax with the same meaning,
 * or throws a UserPatternError for a construct RE2 lacks.
 */
function translate(source: string, unicode: boolean): string {
  let out = "";
  let i = 0;
  let inClass = false;
  // Inside a class: whether the previous item was a class escape (\d, \s...), after which JavaScript reads `-` literally.
  let afterClassEscape = false;

  /** A code point as an RE2 literal outside or inside a class. */
  const literal = (cp: number): string => {
    const c = String.fromCodePoint(cp);
    if (/[A-Za-z0-9]/.test(c)) return c;
    if (cp < 0x80 && /[!-/:-@[-`{-~]/.test(c)) return `\\${c}`;
    return cp < 0x20 || (cp >= 0xd800 && cp <= 0xdfff) ? hex(cp) : c;
  };

  /** Reads the escape at source[i] (a backslash) and returns its RE2 text; advances i. */
  const escape = (): string => {
    const c = source[i + 1] ?? "";
    i += 2;
    afterClassEscape = false;
    switch (c) {
      case "d":
      case "D":
      case "w":
      case "W":
        afterClassEscape = inClass;
        return `\\${c}`;
      case "s":
        afterClassEscape = inClass;
        return inClass ? SPACE_ITEMS : `[${SPACE_ITEMS}]`;
      case "S":
        afterClassEscape = inClass;
        return inClass ? NON_SPACE_ITEMS : `[^${SPACE_ITEMS}]`;
      case "b":
        return inClass ? hex(8) : "\\b";
      case "B":
        return inClass ? "B" : "\\B";
      case "n":
      case "r":
      case "t":
      case "v":
      case "f":
        return `\\${c}`;
      case "0":
        if (/[0-9]/.test(source[i] ?? "")) throw unsupported(`an octal escape (\\0${source[i]})`, "octal escapes; write \\x{..} instead");
        return hex(0);
      case "x": {
        const digits = source.slice(i, i + 2);
        if (digits.length === 2 && isHex(digits)) {
          i += 2;
          return hex(parseInt(digits, 16));
        }
        return "x";
      }
      case "u":
        return unicodeEscape();
      case "c": {
        const letter = source[i] ?? "";
        if (isAsciiLetter(letter)) {
          i += 1;
          return hex(letter.charCodeAt(0) % 32);
        }
        throw unsupported("\\c without a control letter", "such escape; write \\x{..} instead");
      }
      case "k":
        if (source[i] === "<")
          throw unsupported(`a named backreference (\\k${source.slice(i, source.indexOf(">", i) + 1)})`, "backreferences");
        return "k";
      case "p":
      case "P":
        return unicode ? property(c === "P") : c;
      default: {
        if (/[1-9]/.test(c)) {
          if (inClass) throw unsupported(`an octal escape (\\${c})`, "octal escapes; write \\x{..} instead");
          throw unsupported(`a backreference (\\${c})`, "backreferences (for a character by its code, write \\x{..})");
        }
        // An identity escape: the character itself (JavaScript without the u flag allows any).
        const cp = source.codePointAt(i - 1) ?? 0;
        if (cp > 0xffff) i += 1;
        return literal(cp);
      }
    }
  };

  /** After `\u`: \uXXXX (a surrogate pair of two makes one code point), \u{X} with the u flag, else u. */
  const unicodeEscape = (): string => {
    if (unicode && source[i] === "{") {
      const end = source.indexOf("}", i);
      const cp = parseInt(source.slice(i + 1, end), 16);
      i = end + 1;
      return hex(cp);
    }
    const digits = source.slice(i, i + 4);
    if (digits.length < 4 || !isHex(digits)) return "u";
    i += 4;
    const unit = parseInt(digits, 16);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = source.startsWith("\\u", i) ? parseInt(source.slice(i + 2, i + 6), 16) : NaN;
      if (low >= 0xdc00 && low <= 0xdfff && isHex(source.slice(i + 2, i + 6))) {
        i += 6;
        return hex(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00));
      }
    }
    if (unit >= 0xd800 && unit <= 0xdfff)
      throw unsupported(`a lone surrogate (\\u${digits})`, "half characters: it matches whole code points");
    return hex(unit);
  };

  /** After `\p` or `\P` with the u flag: {Name=Value} or {Value}. */
  const property = (negated: boolean): string => {
    const end = source.indexOf("}", i);
    const body = source.slice(i + 1, end);
    i = end + 1;
    const text = `\\${negated ? "P" : "p"}{${body}}`;
    const [name, value] = body.includes("=") ? body.split("=", 2) : [undefined, body];
    let items: string | undefined;
    if (name === "Script" || name === "sc") {
      return `\\${negated ? "P" : "p"}{${value}}`;
    } else if (name === undefined && value === "Any") {
      if (negated) throw unsupported(text, "empty class; it matches nothing");
      items = ANY_ITEMS;
    } else if (name === undefined && value === "ASCII") {
      items = negated ? `${hex(0x80)}-${hex(MAX_CODE_POINT)}` : `${hex(0)}-${hex(0x7f)}`;
    } else if (name === undefined || name === "General_Category" || name === "gc") {
      const short = CATEGORIES[value!] ?? (SHORT_CATEGORIES.has(value!) ? value : undefined);
      if (short === undefined)
        throw unsupported(`the Unicode property ${text}`, "properties but general categories (\\p{L}) and scripts (\\p{Script=Greek})");
      return `\\${negated ? "P" : "p"}{${short}}`;
    } else {
      throw unsupported(`the Unicode property ${text}`, "properties but general categories (\\p{L}) and scripts (\\p{Script=Greek})");
    }
    return inClass ? items : `[${items}]`;
  };

  while (i < source.length) {
    const c = source[i]!;
    if (inClass) {
      if (c === "]") {
        inClass = false;
        out += "]";
        i += 1;
      } else if (c === "\\") {
        out += escape();
      } else if (c === "-" && (afterClassEscape || (source[i + 1] === "\\" && /[dDwWsS]/.test(source[i + 2] ?? "")))) {
        // JavaScript reads `-` next to a class escape as a literal dash; RE2 would refuse the range.
        out += "\\-";
        afterClassEscape = false;
        i += 1;
      } else {
        const cp = source.codePointAt(i)!;
        out += c === "[" ? "\\[" : c === "-" || c === "^" ? c : literal(cp);
        afterClassEscape = false;
        i += cp > 0xffff ? 2 : 1;
      }
      continue;
    }
    switch (c) {
      case "\\":
        out += escape();
        continue;
      case "[":
        if (source.startsWith("[]", i)) {
          out += `[^${ANY_ITEMS}]`;
          i += 2;
        } else if (source.startsWith("[^]", i)) {
          out += `[${ANY_ITEMS}]`;
          i += 3;
        } else {
          inClass = true;
          afterClassEscape = false;
          out += source[i + 1] === "^" ? "[^" : "[";
          i += source[i + 1] === "^" ? 2 : 1;
        }
        continue;
      case "(":
        out += group();
        continue;
      case ".":
        out += DOT;
        i += 1;
        continue;
      case "{": {
        QUANTIFIER.lastIndex = i;
        const quantifier = QUANTIFIER.exec(source);
        // Without the u flag, a brace that does not make a quantifier is a literal.
        out += quantifier ? quantifier[0] : "\\{";
        i += quantifier ? quantifier[0].length : 1;
        continue;
      }
      case "}":
      case "]":
        out += `\\${c}`;
        i += 1;
        continue;
      case "^":
      case "$":
      case "|":
      case "*":
      case "+":
      case "?":
      case ")":
        out += c;
        i += 1;
        continue;
      default: {
        const cp = source.codePointAt(i)!;
        out += literal(cp);
        i += cp > 0xffff ? 2 : 1;
      }
    }
  }
  return out;

  /** At `(`: a group's opening in RE2 syntax; names are dropped (only whether a pattern matches is used). */
  function group(): string {
    if (source[i + 1] !== "?") {
      i += 1;
      return "(";
    }
    const rest = (prefix: string) => source.startsWith(prefix, i + 2);
    if (rest(":")) {
      i += 3;
      return "(?:";
    }
    if (rest("=") || rest("!")) throw unsupported(`a lookahead \`${source.slice(i, i + 3)}\``, "lookaround");
    if (rest("<=") || rest("<!")) throw unsupported(`a lookbehind \`${source.slice(i, i + 4)}\``, "lookaround");
    if (rest("<")) {
      i = source.indexOf(">", i) + 1;
      return "(";
    }
    throw new UserPatternError(
      "unsupported",
      `It uses an inline modifier group \`${source.slice(i, source.indexOf(":", i) + 1)}\`, which user patterns do not support.`,
    );
  }
}
