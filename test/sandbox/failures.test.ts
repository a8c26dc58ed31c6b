/** valueExpression sandbox: each way an expression can fail, and that the engine survives it. */
import { describe, expect, it } from "vitest";
import { evaluateExpression } from "../../src/pkg/sandbox";

async function expectFailure(body: string, reason: string, message?: RegExp, limits?: Parameters<typeof evaluateExpression>[2]) {
  const result = await evaluateExpression(body, { a: 1 }, limits);
  expect(result).toMatchObject({ ok: false, reason });
  if (message && !result.ok) expect(result.message).toMatch(message);
  // Whatever happened, the next evaluation works.
  expect(await evaluateExpression("return a + 1", { a: 1 })).toEqual({ ok: true, value: 2 });
}

describe("evaluateExpression: failures", () => {
  it.each([
    ["an unclosed bracket", "return (", /SyntaxError/],
    ["a stray keyword", "return return", /SyntaxError/],
    ["an unfinished expression", "return a +", /SyntaxError/],
  ])("reports a syntax error for %s", async (_label, body, message) => {
    await expectFailure(body, "syntax", message);
  });

  it.each([
    ["an Error", "throw new Error('boom'); return 1", /^Error: boom$/],
    ["a TypeError from the engine", "return a.b.c", /^TypeError: /],
    ["a missing name", "return notInScope + 1", /^ReferenceError: .*notInScope/],
    ["a string", "throw 'plain text'; return 1", /^plain text$/],
    ["an object", "throw { code: 7 }; return 1", /"code":7/],
    ["an error with a hostile getter", "throw { get message() { throw new Error('again') } }; return 1", /cannot be printed/],
  ])("reports %s thrown by the body", async (_label, body, message) => {
    await expectFailure(body, "thrown", message);
  });

  it.each([
    ["there is no return statement", "const x = a + 1"],
    ["the body returns undefined", "return undefined"],
    ["the body returns without a value", "return;"],
    ["only comments mention return", "// return a\nconst b = a"],
  ])("reports noReturn when %s", async (_label, body) => {
    await expectFailure(body, "noReturn", /return statement/);
  });

  it.each([
    ["a function", "return function () {}", /function/],
    ["a symbol", "return Symbol('s')", /symbol/],
    ["a BigInt", "return 10n", /bigint/],
    ["NaN", "return 0 / 0", /NaN/],
    ["Infinity nested in an object", "return { ratio: 1 / 0 }", /Infinity at key "ratio"/],
    ["a function nested in an array", "return [1, () => 2]", /function at key "1"/],
    ["a promise", "return Promise.resolve(1)", /promise/],
    ["a cyclic object", "const o = {}; o.self = o; return o", /circular|cycle/i],
    ["a toJSON that throws", "return { toJSON() { throw new Error('nope') } }", /nope/],
  ])("reports unserializable for %s", async (_label, body, message) => {
    await expectFailure(body, "unserializable", message);
  });

  it("interrupts an infinite loop within a bounded time", async () => {
    const started = Date.now();
    await expectFailure("while (true) {} return 1", "timeout", /time limit of 50 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("interrupts a loop that catches everything it can", async () => {
    await expectFailure("for (;;) { try { for (;;) {} } catch (e) {} finally { continue } } return 1", "timeout");
  });

  it("honours a custom time limit", async () => {
    await expectFailure("let i = 0; while (true) { i++ } return i", "timeout", /time limit of 10 ms/, { timeMs: 10 });
  });

  it.each([
    ["a huge string", "return 'x'.repeat(1e9)"],
    ["a huge array", "return new Array(1e8).fill(0)"],
    ["many medium arrays", "const keep = []; while (true) keep.push(new Array(1e5).fill(keep.length)); return 1"],
    ["many typed arrays", "const keep = []; while (true) keep.push(new Uint8Array(1e6)); return 1"],
    ["a doubling string", "let s = 'ab'; while (true) s = s + s + s.length; return s"],
  ])("stops %s at the memory limit", async (_label, body) => {
    await expectFailure(body, "memory", /memory limit|string too long/);
  });

  it.each([
    ["direct recursion", "function f(n) { return f(n + 1) + 1 } return f(0)"],
    ["recursion through a getter", "const o = { get x() { return this.x } }; return o.x"],
    ["recursion through native callbacks", "const f = () => [1, 2].map(f); return f()"],
    ["deeply nested source", `return ${"(".repeat(5000)}1${")".repeat(5000)}`],
    ["JSON.stringify of a deeply nested array", "let n = []; for (let i = 0; i < 20000; i++) n = [n]; return JSON.stringify(n).length"],
  ])("stops %s at the stack limit", async (_label, body) => {
    await expectFailure(body, "memory", /too deeply/);
  });

  it("survives native recursion that overflows the host stack before QuickJS notices (large stackBytes)", async () => {
    // With 256 KB QuickJS measures too little of the real stack use and V8's own limit trips first;
    // the engine is then discarded and replaced.
    const body = "let n = []; for (let i = 0; i < 20000; i++) n = [n]; return JSON.stringify(n).length";
    await expectFailure(body, "memory", /too deeply/, { stackBytes: 256 * 1024 });
  });
});
