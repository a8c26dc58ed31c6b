/** valueExpression sandbox: what a successful expression sees and returns. */
import { describe, expect, it } from "vitest";
import { evaluateExpression } from "../../src/pkg/sandbox";

describe("evaluateExpression: values", () => {
  // First in the file on purpose: these calls race to instantiate the engine.
  it("serves concurrent first calls from one engine", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => evaluateExpression("return i * 2", { i })));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => ({ ok: true, value: i * 2 })));
  });

  it.each([
    ["a number", "return a + b", { a: 1, b: 2 }, 3],
    ["a string", "return name.toUpperCase() + '-' + code", { name: "pump", code: 7 }, "PUMP-7"],
    ["a boolean", "return pressure > limit", { pressure: 12.5, limit: 10 }, true],
    ["null", "return null", {}, null],
    ["an object", "return { total: a * 2, tags: ['x'] }", { a: 21 }, { total: 42, tags: ["x"] }],
    ["an array", "return items.map((item) => item.n * 10)", { items: [{ n: 1 }, { n: 2 }] }, [10, 20]],
    ["a value from a nested object", "return owner.name", { owner: { id: "o-1", name: "Ops" } }, "Ops"],
  ])("returns %s computed from the scope", async (_label, body, scope, expected) => {
    expect(await evaluateExpression(body, scope)).toEqual({ ok: true, value: expected });
  });

  it("passes dates in as ISO strings and returns dates as ISO strings", async () => {
    const result = await evaluateExpression("return { seen: inspected, next: new Date(Date.parse(inspected) + 86400000) }", {
      inspected: new Date("2024-03-01T08:00:00.000Z"),
    });
    expect(result).toEqual({ ok: true, value: { seen: "2024-03-01T08:00:00.000Z", next: "2024-03-02T08:00:00.000Z" } });
  });

  it("binds undefined scope values as null so the name still exists", async () => {
    expect(await evaluateExpression("return [missing, 'missing' in properties]", { missing: undefined })).toEqual({
      ok: true,
      value: [null, true],
    });
  });

  it("reaches names that are not identifiers through properties[...]", async () => {
    const scope = { "wall-thickness": 4, "2nd reading": 5, class: 6, properties: 7, "x²": 8 };
    const body =
      'return properties["wall-thickness"] + properties["2nd reading"] + properties.class + properties.properties + properties["x²"]';
    expect(await evaluateExpression(body, scope)).toEqual({ ok: true, value: 30 });
  });

  it("binds identifier names, including non-ASCII ones, as parameters", async () => {
    expect(await evaluateExpression("return Höhe * $rate + _base", { Höhe: 2, $rate: 3, _base: 1 })).toEqual({ ok: true, value: 7 });
  });

  it("does not bind reserved words, which would make every expression a syntax error", async () => {
    expect(await evaluateExpression("return typeof properties.eval + properties.default", { eval: 1, default: 2 })).toEqual({
      ok: true,
      value: "number2",
    });
  });

  it("keeps a __proto__ name as an ordinary value", async () => {
    const scope = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const result = await evaluateExpression(
      "return [properties['__proto__'].polluted, typeof properties.polluted, Object.getPrototypeOf(properties)]",
      scope,
    );
    expect(result).toEqual({ ok: true, value: [true, "undefined", null] });
  });

  it("returns the body's value even after the body replaced the JSON and Reflect globals", async () => {
    const body = "JSON.stringify = () => '\"forged\"'; JSON.parse = () => 'forged'; Reflect.apply = () => 'forged'; return { a: 1 }";
    expect(await evaluateExpression(body, {})).toEqual({ ok: true, value: { a: 1 } });
  });
  it("treats a `return` inside the text but not on the path as no value", async () => {
    expect(await evaluateExpression("if (a > 1) return 'big'", { a: 0 })).toMatchObject({ ok: false, reason: "noReturn" });
  });

  it("lets a body in strict mode use its parameters", async () => {
    expect(await evaluateExpression('"use strict"; return a * 2', { a: 4 })).toEqual({ ok: true, value: 8 });
  });

  it("refuses a scope that is not JSON-serialisable: a caller bug, not an expression failure", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(evaluateExpression("return 1", { cyclic })).rejects.toThrow(TypeError);
  });

  it("refuses limits that are not positive numbers", async () => {
    await expect(evaluateExpression("return 1", {}, { timeMs: 0 })).rejects.toThrow(RangeError);
    await expect(evaluateExpression("return 1", {}, { memoryBytes: Number.NaN })).rejects.toThrow(RangeError);
  });
});
