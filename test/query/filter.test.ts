import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/pkg/errors";
import { parseFilter, typeFilter, type FilterNode, type PropertyInfo } from "../../src/pkg/query";

/** A compact rendering of a tree, so expectations read like the filter. */
function show(node: FilterNode | undefined): string {
  if (!node) return "";
  if (node.kind === "term") {
    const values = node.values.map((v) => (v.kind === "null" ? "null" : v.kind === "string" ? JSON.stringify(v.value) : String(v.value)));
    return `${node.property} ${node.operator} ${node.operator === "in" ? `[${values.join(",")}]` : values[0]}`;
  }
  return `${node.kind}(${node.children.map(show).join("; ")})`;
}

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

describe("parseFilter: terms", () => {
  it.each([
    ["Depth eq 5", "Depth eq 5"],
    ["Depth ne -5", "Depth ne -5"],
    ["Depth gt 2.5", "Depth gt 2.5"],
    ["Depth ge .5", "Depth ge 0.5"],
    ["Depth lt 1e3", "Depth lt 1000"],
    ["Depth le +7", "Depth le 7"],
    ["Name eq 'pipe'", 'Name eq "pipe"'],
    ["Name eq ''", 'Name eq ""'],
    ["Name eq 'O''Brien'", `Name eq "O'Brien"`],
    ["Name eq ''''", `Name eq "'"`],
    ["Name eq 'a, b (c) and d or e'", 'Name eq "a, b (c) and d or e"'],
    ["Done eq true", "Done eq true"],
    ["Done ne FALSE", "Done ne false"],
    ["Owner eq null", "Owner eq null"],
    ["Owner NE NULL", "Owner ne null"],
    ["Zone in ('A', 'B','C')", 'Zone in ["A","B","C"]'],
    ["Level in (1,2 , 3)", "Level in [1,2,3]"],
    ["Zone IN ('it''s')", `Zone in ["it's"]`],
    ["  Depth   EQ   5  ", "Depth eq 5"],
    ["2nd-check.depth_x eq 1", "2nd-check.depth_x eq 1"],
    ["Name eq'x'", 'Name eq "x"'],
  ])("%s", (input, expected) => {
    expect(show(parseFilter(input))).toBe(expected);
  });

  it("gives no condition for an absent or blank filter", () => {
    expect(parseFilter(undefined)).toBeUndefined();
    expect(parseFilter("   ")).toBeUndefined();
  });

  it("records the position and text of each term", () => {
    const node = parseFilter("A eq 1 and  B in (1, 2)");
    expect(node).toMatchObject({
      children: [
        { position: 1, text: "A eq 1" },
        { position: 13, text: "B in (1, 2)" },
      ],
    });
  });
});

describe("parseFilter: precedence and parentheses", () => {
  it.each([
    ["A eq 1 and B eq 2 or C eq 3", "or(and(A eq 1; B eq 2); C eq 3)"],
    ["A eq 1 or B eq 2 and C eq 3", "or(A eq 1; and(B eq 2; C eq 3))"],
    ["A eq 1 or B eq 2 or C eq 3", "or(A eq 1; B eq 2; C eq 3)"],
    ["A eq 1 AND B eq 2 And C eq 3", "and(A eq 1; B eq 2; C eq 3)"],
    ["(A eq 1 or B eq 2) and C eq 3", "and(or(A eq 1; B eq 2); C eq 3)"],
    ["A eq 1 and (B eq 2 or (C eq 3 and D eq 4))", "and(A eq 1; or(B eq 2; and(C eq 3; D eq 4)))"],
    ["((A eq 1))", "A eq 1"],
    ["(A eq 1 and B eq 2) and C eq 3", "and(A eq 1; B eq 2; C eq 3)"],
  ])("%s", (input, expected) => {
    expect(show(parseFilter(input))).toBe(expected);
  });
});

describe("parseFilter: errors name the offending term and position", () => {
  const many = (n: number, term: string) => Array.from({ length: n }, () => term).join(" or ");
  it.each([
    ["Depth", "syntax", ["'Depth'", "position 1", "comparison operator"]],
    ["Depth eqq 5", "syntax", ["'Depth eqq'", "position 1"]],
    ["Depth eq", "syntax", ["'Depth eq'", "needs a value"]],
    ["Depth eq 5 and", "syntax", ["position 15", "after 'and'"]],
    ["Depth eq 5 or or B eq 1", "syntax", ["position 15", "after 'or', found 'or'"]],
    ["and Depth eq 5", "syntax", ["position 1", "found 'and'"]],
    ["Depth eq 5 B eq 1", "syntax", ["position 12", "'B'"]],
    ["Depth eq 5 xor B eq 1", "syntax", ["position 12", "'xor'"]],
    ["Name eq pipe", "syntax", ["'Name eq pipe'", "'pipe'", "single quotes"]],
    ["Name eq 'pipe", "syntax", ["'pipe", "position 9", "Unterminated"]],
    ["Name eq 'O'Brien'", "syntax", ["position 12", "'Brien'"]],
    ["Name eq 'a' or B eq 'b", "syntax", ["Unterminated", "position 21", "''b'"]],
    ["Zone in 'A'", "syntax", ["'Zone in 'A''", "parenthesised"]],
    ["Zone in ()", "syntax", ["'Zone in ()'", "empty"]],
    ["Zone in ('A' 'B')", "syntax", ["'Zone in ('A' 'B''", "',' or ')'"]],
    ["Zone in ('A',)", "syntax", ["needs a value"]],
    ["Zone in ('A', null)", "syntax", ["null", "'in' list"]],
    ["Zone in ('A'", "syntax", ["',' or ')'"]],
    ["Depth gt null", "syntax", ["'Depth gt null'", "eq or ne"]],
    ["Depth eq ('a')", "syntax", ["'Depth eq ('", "needs a value"]],
    ["(Depth eq 5", "syntax", ["position 1", "')'"]],
    ["Depth eq 5)", "syntax", ["Unmatched ')'", "position 11"]],
    ["Dep/th eq 5", "syntax", ["'Dep/th'", "Invalid property name"]],
    ["Depth eq 1e999", "syntax", ["'1e999'"]],
    ["(".repeat(21) + "A eq 1" + ")".repeat(21), "limit", ["position 21", "20 levels"]],
    [many(101, "A eq 1"), "limit", ["'A eq 1'", "position 1001", "100 terms"]],
    [`A in (${Array.from({ length: 1001 }, (_, i) => i).join(",")})`, "limit", ["'A in (0,1,2", "1000 values"]],
    [many(3, `A in (${Array.from({ length: 400 }, (_, i) => i).join(",")})`), "limit", ["position 3", "1000 values"]],
  ])("%s", (input, rule, fragments) => {
    const error = errorOf(() => parseFilter(input));
    expect(error.code).toBe("InvalidQuery");
    expect(error.status).toBe(400);
    expect(error.errors).toEqual([{ field: "query.properties", rule, message: error.message }]);
    for (const fragment of fragments) expect(error.message).toContain(fragment);
  });

  it("accepts exactly 100 terms and 1000 values", () => {
    const terms = Array.from({ length: 100 }, (_, i) => `A eq ${i}`).join(" or ");
    expect(() => parseFilter(terms)).not.toThrow();
    expect(() => parseFilter(`A in (${Array.from({ length: 1000 }, (_, i) => i).join(",")})`)).not.toThrow();
  });
});

describe("typeFilter", () => {
  const defs: PropertyInfo[] = [
    { name: "Text", format: "text", isMultiselect: false },
    { name: "Int", format: "integer", isMultiselect: false },
    { name: "Dec", format: "decimal", isMultiselect: false },
    { name: "Bool", format: "boolean", isMultiselect: false },
    { name: "Date", format: "date", isMultiselect: false },
    { name: "Class", format: "classification", classificationId: "c1", isMultiselect: false },
    { name: "Owner", format: "entity", isMultiselect: true },
  ];
  const catalog = new Map(defs.map((d) => [d.name, d]));
  const typed = (filter: string) => typeFilter(parseFilter(filter)!, catalog);

  it.each([
    ["Text gt 'b'", "value_text", ["b"]],
    ["Int eq 3", "value_num", [3]],
    ["Int in (1, -2)", "value_num", [1, -2]],
    ["Dec le 2.75", "value_num", [2.75]],
    ["Dec eq 3", "value_num", [3]],
    ["Bool eq true", "value_num", [1]],
    ["Bool ne false", "value_num", [0]],
    ["Date ge '2024-03-15'", "value_num", [Date.UTC(2024, 2, 15)]],
    ["Date lt '03/15/2024 14:30'", "value_num", [Date.UTC(2024, 2, 15, 14, 30)]],
    ["Class eq 'High'", "value_text", ["High"]],
    ["Owner in ('u1', 'u2')", "value_text", ["u1", "u2"]],
    ["Class eq null", "value_text", []],
  ])("%s", (filter, column, values) => {
    expect(typed(filter)).toMatchObject({ column, values });
  });

  it.each([
    ["Nope eq 1", "unknownProperty", ["'Nope eq 1'", "position 1", "'Nope'"]],
    ["text eq 'a'", "unknownProperty", ["'text'", "case-sensitive"]],
    ["Int eq 1 and Text eq 5", "type", ["'Text eq 5'", "position 14", "quoted text"]],
    ["Int eq 2.5", "type", ["'Int eq 2.5'", "whole number"]],
    ["Int eq '2'", "type", ["whole number"]],
    ["Int eq 1e2", "type", ["whole number"]],
    ["Int eq 99999999999999999999", "type", ["whole number"]],
    ["Dec eq true", "type", ["number"]],
    ["Bool eq 1", "type", ["true or false"]],
    ["Bool gt true", "operator", ["'Bool gt true'", "'gt'", "eq, ne, in"]],
    ["Date eq '2024-02-30'", "type", ["'Date eq '2024-02-30''", "quoted date"]],
    ["Date eq 20240315", "type", ["quoted date"]],
    ["Class gt 'A'", "operator", ["'gt'", "classification"]],
    ["Class eq 1", "type", ["element name"]],
    ["Owner le 'u'", "operator", ["'le'", "entity"]],
    ["Int in (1, 'x')", "type", ["'x'"]],
  ])("%s", (filter, rule, fragments) => {
    const error = errorOf(() => typed(filter));
    expect(error.code).toBe("InvalidQuery");
    expect(error.errors?.[0]).toMatchObject({ field: "query.properties", rule });
    for (const fragment of fragments) expect(error.message).toContain(fragment);
  });
});
