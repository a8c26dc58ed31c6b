/**
 * Issue 20, section 2: a property definition's regex cannot stall the service. The classic
 * catastrophic patterns run against 10,000-character values (the longest text value) through the
 * real routes: each answer is right and takes well under 2 s (V8's backtracking engine needs
 * seconds at 30 characters and longer than anyone waits at 10,000). What RE2 lacks is refused when
 * the definition is saved, naming the field and the construct.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { fastest } from "../support/timing";
import { createPropertyDefinition, entityTypeWith, propertyDefinitionBody } from "../support/factories/properties";

/** Length of the values: LIMITS.textValueLength, the longest text a property takes. */
const LENGTH = 10_000;
/**
 * A stall, not a speed target: backtracking takes seconds at 30 characters and never ends at 10,000; a loaded machine
 * took 300 ms for the linear answer.
 */
const WITHIN_MS = 2_000;

const as = (n: number) => "a".repeat(n);

/** [pattern, value, whether the value matches]: each failing value makes the backtracking engine explode. */
const CASES: [string, string, boolean][] = [
  ["^(a+)+$", as(LENGTH - 1) + "!", false],
  ["^(a+)+$", as(LENGTH), true],
  ["^(a|a)+$", as(LENGTH - 1) + "!", false],
  ["(a*)*b", as(LENGTH), false],
  ["^(a|aa)+$", as(LENGTH - 1) + "!", false],
  ["^(a|aa)+$", as(LENGTH), true],
  ["(.*a){20}", as(19) + "x".repeat(LENGTH - 19), false],
  ["(.*a){20}", "x".repeat(LENGTH - 20) + as(20), true],
  ["^(\\w+\\s?)*$", as(LENGTH - 1) + "!", false],
  ["(x+x+)+y", "x".repeat(LENGTH), false],
  ["^([a-z0-9]+[._-]?)*[a-z0-9]+@example\\.com$", as(LENGTH - 1) + "@", false],
];

/** The fastest of up to three tries (see test/support/timing.ts). */
const timed = <T>(request: () => Promise<T>) => fastest(request, WITHIN_MS);

describe("catastrophic patterns at 10,000 characters", () => {
  let entityTypeId: string;
  const names: string[] = [];

  beforeAll(async () => {
    // One text property per case, all linked to one type (WorkItem rule, so work items can use it).
    const created = await entityTypeWith(
      CASES.map(([regex]) => ({ format: "text", applicationRule: "WorkItem", regex })),
      { appliesTo: null },
    );
    entityTypeId = created.entityTypeId;
    names.push(...created.definitions.map((d) => d.name));
    // Warm the isolate (first request, first D1 statement) outside the measurements.
    await call("/PropertyDefinitions/DryRun", { method: "POST", body: { entityTypeId, properties: [] } });
  });

  it.each(CASES.map((c, i) => [...c, i] as const))("DryRun: %s answers within 2 s (case %#)", async (_pattern, value, matches, i) => {
    const { result: res, ms } = await timed(() =>
      call("/PropertyDefinitions/DryRun", { method: "POST", body: { entityTypeId, properties: [{ name: names[i]!, value }] } }),
    );
    expect(res.status, res.text).toBe(200);
    if (matches) expect(res.body).toMatchObject({ valid: true, properties: expect.arrayContaining([{ name: names[i], value }]) });
    else
      expect(res.body).toMatchObject({
        valid: false,
        errors: [expect.objectContaining({ field: "body.properties.0.value", rule: "regex" })],
      });
    expect(ms).toBeLessThan(WITHIN_MS);
  });

  it.each(CASES.map((c, i) => [...c, i] as const))(
    "POST /WorkItems: %s answers within 2 s (case %#)",
    async (_pattern, value, matches, i) => {
      const body = { displayName: `Pattern ${i}`, typeId: entityTypeId, properties: [{ name: names[i]!, value }] };
      const { result: res, ms } = await timed(() => call("/WorkItems", { method: "POST", body }));
      if (matches) {
        expect(res.status, res.text).toBe(201);
        expect(res.body.properties).toContainEqual({ name: names[i], value });
      } else {
        expect(res.status, res.text).toBe(400);
        expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.properties.0.value", rule: "regex" })]);
      }
      expect(ms).toBeLessThan(WITHIN_MS);
    },
  );

  it("checks a default value against the regex when the definition is saved, within 2 s", async () => {
    const body = propertyDefinitionBody({ regex: "^(a|a)+$", defaultValue: as(LENGTH - 1) + "!" });
    const { result: res, ms } = await timed(() => call("/PropertyDefinitions", { method: "POST", body }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.defaultValue", rule: "regex" })]);
    expect(ms).toBeLessThan(WITHIN_MS);
  });

  it("keeps other requests moving: /health answers while the patterns are being matched", async () => {
    const value = as(LENGTH - 1) + "!";
    const { ms } = await timed(() =>
      Promise.all([
        call("/PropertyDefinitions/DryRun", { method: "POST", body: { entityTypeId, properties: [{ name: names[0]!, value }] } }),
        call("/health", { anonymous: true }),
      ]),
    );
    expect(ms).toBeLessThan(WITHIN_MS);
  });
});

describe("regular expressions inside a valueExpression", () => {
  // Expressions run in QuickJS, whose regex engine polls the same interrupt as loops do, so a
  // catastrophic pattern written in an expression ends at the sandbox's time limit like any runaway.
  it("stop at the sandbox's time limit", async () => {
    const expression = `return /^(a|a)+$/.test("a".repeat(${LENGTH - 1}) + "!");`;
    const { result: res, ms } = await fastest(() => call("/PropertyDefinitions/DryRun", { method: "POST", body: { expression } }), 500);
    expect(res.body).toMatchObject({ valid: false, code: "ExpressionFailed" });
    expect(res.body.errors[0].message).toContain("time limit");
    expect(ms).toBeLessThan(500);
  });
});

describe("what RE2 lacks is refused when saved", () => {
  it.each([
    ["a backreference", "^(\\w)\\1$", "backreference"],
    ["a named backreference", "^(?<c>\\w)\\k<c>$", "backreference"],
    ["a lookahead", "^(?=.*\\d)\\w{8,}$", "lookahead"],
    ["a negative lookahead", "^(?!test)\\w+$", "lookahead"],
    ["a lookbehind", "(?<=\\$)\\d+", "lookbehind"],
    ["a negative lookbehind", "(?<!-)\\d+", "lookbehind"],
  ])("%s: 400 naming body.regex and the construct", async (_, regex, construct) => {
    const res = await call("/PropertyDefinitions", { method: "POST", body: propertyDefinitionBody({ regex }) });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.code).toBe("ValidationFailed");
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.regex", rule: "unsupported" })]);
    expect(res.body.errors[0].message).toContain(construct);
  });

  it("refuses them on PUT too", async () => {
    const created = await createPropertyDefinition({ regex: "^[A-Z]+$" });
    const { etag, ...read } = created;
    const res = await call("/PropertyDefinitions", { method: "PUT", body: { ...read, regex: "^(a)\\1$" }, headers: { "if-match": etag } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.regex", rule: "unsupported" })]);
  });

  it("refuses a pattern whose program is too large to match quickly, naming the limit", async () => {
    const res = await call("/PropertyDefinitions", { method: "POST", body: propertyDefinitionBody({ regex: "^(a?){500}(a?){500}$" }) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.regex", rule: "tooLarge" })]);
    expect(res.body.errors[0].message).toContain("2000");
  });
});

describe("ordinary patterns keep their JavaScript meaning", () => {
  // [pattern, values that match, values that do not]
  const cases: [string, string[], string[]][] = [
    ["^[A-Z]{2}-\\d+$", ["AB-12"], ["ab-12", "AB-", "AB-12 "]],
    ["^\\s*$", [" \t", "\u00a0\u2028"], ["x"]],
    ["^\\S+$", ["abc"], ["a b", "a\u00a0b"]],
    ["^a.c$", ["abc", "a-c"], ["a\nc", "a\rc", "a\u2028c"]],
    ["^[^]{3}$", ["a\nb"], ["ab"]],
    ["colou?r", ["The colour red", "color"], ["colr"]],
    ["^\\u00e9t\\xe9$", ["été"], ["ete"]],
    ["^(?<year>\\d{4})-(?:0[1-9]|1[0-2])$", ["2024-01"], ["2024-13"]],
    ["^\\w+@\\w+\\.com$", ["me@mail.com"], ["me@mail.org"]],
    ["^\\d{1,3}(,\\d{3})*(\\.\\d+)?$", ["1,234,567.89"], ["1,23"]],
    ["\\bpump\\b", ["a pump here"], ["pumping"]],
    ["^[\\w-]+$", ["a-b_c"], ["a b"]],
    ["^\\p{L}$", ["p{L}"], ["é"]], // without the u flag, \p is a plain p, as in JavaScript
    ["^a{2,}?$", ["aaa"], ["a"]],
    ["^[.$^]+$", [".$^"], ["a"]],
  ];
  let entityTypeId: string;
  const names: string[] = [];

  beforeAll(async () => {
    const created = await entityTypeWith(cases.map(([regex]) => ({ format: "text", regex })));
    entityTypeId = created.entityTypeId;
    names.push(...created.definitions.map((d) => d.name));
  });

  it.each(cases.map((c, i) => [...c, i] as const))("%s", async (pattern, good, bad, i) => {
    for (const [values, valid] of [
      [good, true],
      [bad, false],
    ] as const) {
      for (const value of values) {
        const res = await call("/PropertyDefinitions/DryRun", {
          method: "POST",
          body: { entityTypeId, properties: [{ name: names[i]!, value }] },
        });
        expect(res.body.valid, `${pattern} against ${JSON.stringify(value)}`).toBe(valid);
        // The same answer as JavaScript's own engine (safe here: these patterns and values are ours).
        expect(new RegExp(pattern).test(value)).toBe(valid);
      }
    }
  });
});
