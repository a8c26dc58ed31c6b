/**
 * src/pkg/regex.ts: user patterns are JavaScript, translated to RE2. Differential: on patterns and
 * inputs small enough for V8's backtracking engine to be safe, RE2's answer is JavaScript's, in both
 * dialects (no flags for property definitions, the u flag for JSON Schema). The one documented
 * difference (matching per code point without the u flag) is pinned separately.
 */
import { describe, expect, it } from "vitest";
import { checkPattern, MAX_PROGRAM_SIZE, type PatternDialect } from "../../src/pkg/regex";

const PATTERNS = [
  "^[A-Z]{2}-\\d+$",
  "colou?r",
  "^$",
  "",
  "a|b|",
  "^(?:ab|cd)*$",
  "^(a+)+$",
  "^(a|aa)+$",
  "(.*a){3}",
  "x*?y+?z??",
  "^a{2,3}$",
  "^a{2,}$",
  "^\\d{1,3}(,\\d{3})*(\\.\\d+)?$",
  "\\bword\\b",
  "\\Bor\\B",
  "^\\w+$",
  "^\\W+$",
  "^\\s+$",
  "^\\S+$",
  "^[\\s\\d]+$",
  "^[^\\s]+$",
  "^[^\\S\\n]+$",
  "^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$",
  "^[\\d-x]+$",
  "^[a\\-z]+$",
  "^[-a]+$",
  "^[a-]+$",
  "^[]]$",
  "^[^]$",
  "[]",
  "^.$",
  "^..$",
  "^a.c$",
  "^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\\\/$",
  "^[.*+?()[{}|^$\\\\/]+$",
  "^\\x41\\u0042\\x43?$",
  "^\\t\\n\\v\\f\\r$",
  "^\\0$",
  "^\\u00e9+$",
  "^(?<name>\\w+)-(?<id>\\d+)$",
  "^(?:(a)|b)+$",
  "^[\\u0041-\\u005A]+$",
  "^[\\b]$",
  "\\$\\d+",
  "^[^a-z]+$",
  "^[a-zA-Z0-9_]*$",
  "^\\p{L}+$",
  "^\\p{Lu}\\p{Ll}+$",
  "^\\P{N}+$",
  "^\\p{Letter}+$",
  "^\\p{Script=Greek}+$",
  "^[\\p{L}\\p{N}]+$",
  "^\\u{1F600}$",
  "^.$",
  "^[^]{2}$",
];
const PLAIN_ONLY = [
  "^a{$",
  "^}$",
  "^]$",
  "^\\q\\A\\z$",
  "^\\cJ$",
  "^\\u{3}$",
  "^\\p{L}$",
  "^\\k$",
  "^[\\B]$",
  "^{,5}$",
  "^x{1,2$",
  "^\\-\\_\\:$",
];

const INPUTS = [
  "",
  "a",
  "aa",
  "aaa",
  "aaaa",
  "ab",
  "abc",
  "cd",
  "abcd",
  "AB-12",
  "ab-12",
  "colour",
  "color",
  "colr",
  "xyyz",
  "xyz",
  "1,234,567.89",
  "1,23",
  "a word here",
  "sword",
  "words",
  "or",
  "fork",
  "a_1",
  "a b",
  " \t",
  "\u00a0\u2028\ufeff",
  "\u000b",
  "a\nb",
  "\n",
  "\r",
  "\u2028",
  "a\u2029c",
  "a-c",
  "abc\n",
  "me@mail.com",
  "x.y@host-1.org",
  "1-x",
  "x",
  "-",
  "-a-",
  "]",
  "[",
  ".*+?()[]{}|^$\\/",
  "AB",
  "ABC",
  "\t\n\u000b\f\r",
  "\u0000",
  "é",
  "éé",
  "e\u0301",
  "word-42",
  "ab",
  "b",
  "aab",
  "\b",
  "$12",
  "ABC",
  "Hello",
  "hello",
  "HELLO",
  "αβγ",
  "abc1",
  "Ωmega",
  "😀",
  "😀😀",
  "a😀",
  "{",
  "}",
  "a{",
  "qAz",
  "k",
  "B",
  "{,5}",
  "x{1,2",
  "-_:",
  "\u0001",
];

function differential(dialect: PatternDialect, patterns: string[]) {
  const flags = dialect === "unicode" ? "u" : "";
  for (const source of patterns) {
    let native: RegExp;
    try {
      native = new RegExp(source, flags);
    } catch {
      expect(checkPattern(source, dialect)).toMatchObject({ ok: false, rule: "syntax" });
      continue;
    }
    const checked = checkPattern(source, dialect);
    expect(checked.ok, `${source} (${dialect}): ${checked.ok ? "" : checked.message}`).toBe(true);
    if (!checked.ok) continue;
    for (const input of INPUTS) {
      // Astral characters are one code point to RE2 but two code units to V8 without the u flag.
      if (dialect === "plain" && /[\u{10000}-\u{10FFFF}]/u.test(input)) continue;
      expect(checked.pattern.test(input), `/${source}/${flags} against ${JSON.stringify(input)}`).toBe(native.test(input));
    }
  }
}

describe("JavaScript's answers on RE2", () => {
  it("without flags (property definitions)", () => differential("plain", [...PATTERNS, ...PLAIN_ONLY]));
  it("with the u flag (JSON Schema)", () => differential("unicode", [...PATTERNS, ...PLAIN_ONLY]));

  it("matches per code point without the u flag too (the documented difference)", () => {
    const checked = checkPattern("^.$", "plain");
    expect(checked.ok && checked.pattern.test("😀")).toBe(true);
    expect(new RegExp("^.$").test("😀")).toBe(false);
  });
});

describe("refusals name the construct", () => {
  it.each(
    (
      [
        ["(a)\\1", "plain", "unsupported", "backreference (\\1)"],
        ["(?<x>a)\\k<x>", "unicode", "unsupported", "named backreference"],
        ["a(?=b)", "plain", "unsupported", "lookahead"],
        ["a(?!b)", "unicode", "unsupported", "lookahead"],
        ["(?<=a)b", "plain", "unsupported", "lookbehind"],
        ["(?<!a)b", "unicode", "unsupported", "lookbehind"],
        ["\\p{Emoji}", "unicode", "unsupported", "Unicode property"],
        ["\\p{Script_Extensions=Greek}", "unicode", "unsupported", "Unicode property"],
        ["[\\1]", "plain", "unsupported", "octal escape"],
        ["\\012", "plain", "unsupported", "octal escape"],
        ["\\uD83D", "plain", "unsupported", "lone surrogate"],
        ["a{1001}", "plain", "tooLarge", "1000"],
        ["(a{100}){100}", "plain", "tooLarge", "1000"],
        ["^(a?){500}(a?){500}$", "plain", "tooLarge", String(MAX_PROGRAM_SIZE)],
        ["a".repeat(10_001), "plain", "tooLarge", "10000"],
        ["([a-z]", "plain", "syntax", "valid regular expression"],
        ["a**", "unicode", "syntax", "valid regular expression"],
        ["\\q", "unicode", "syntax", "valid regular expression"],
      ] as const
    ).map(
      ([source, dialect, rule, text]) =>
        [source.length > 40 ? `${source.slice(0, 10)}... (${source.length} characters)` : source, dialect, rule, text, source] as const,
    ),
  )("%s (%s): %s", (_label, dialect, rule, text, source) => {
    const checked = checkPattern(source, dialect);
    expect(checked).toMatchObject({ ok: false, rule });
    expect(checked.ok ? "" : checked.message).toContain(text);
  });
});
