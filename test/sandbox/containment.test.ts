/** valueExpression sandbox: a body cannot leave its function, reach the host, or see other evaluations. */
import { describe, expect, it } from "vitest";
import { evaluateExpression } from "../../src/pkg/sandbox";

describe("evaluateExpression: containment", () => {
  it.each([
    ["closing the wrapper and reopening it", "}); globalThis.x = 1; (function(){ return 1"],
    ["a comma expression after the wrapper", "}, globalThis.x = 1, function(){ return 1"],
    ["closing the wrapper and commenting out the rest", "return 1 }); globalThis.x = 1; //"],
    ["a wrapper closed inside a line comment's newline", "return 1\n}); globalThis.x = 1; (function(){"],
  ])("refuses a body that breaks out of its function by %s", async (_label, body) => {
    const result = await evaluateExpression(body, {});
    expect(result).toMatchObject({ ok: false, reason: "syntax" });
    expect(await evaluateExpression("return typeof x", {})).toEqual({ ok: true, value: "undefined" });
  });

  it("does not bind a scope name crafted to break out of the parameter list", async () => {
    const name = "a){}); globalThis.y = 1; (function(b";
    const result = await evaluateExpression("return [properties[name], typeof y]", { [name]: 5, name });
    expect(result).toEqual({ ok: true, value: [5, "undefined"] });
  });

  it("treats the body's text as data, including template and quote characters", async () => {
    const body = "const s = `${'`'}\\`\"'})(`; return s.length";
    expect(await evaluateExpression(body, {})).toEqual({ ok: true, value: 7 });
  });

  it("exposes no host globals", async () => {
    const names = [
      "fetch",
      "require",
      "process",
      "setTimeout",
      "setInterval",
      "queueMicrotask",
      "console",
      "WebAssembly",
      "crypto",
      "caches",
      "navigator",
      "scheduler",
      "Deno",
      "Bun",
      "importScripts",
      "XMLHttpRequest",
      "Request",
      "Response",
    ];
    const body = `return ${JSON.stringify(names)}.filter((name) => typeof globalThis[name] !== "undefined")`;
    expect(await evaluateExpression(body, {})).toEqual({ ok: true, value: [] });
  });

  it("has no module loader for dynamic import", async () => {
    const result = await evaluateExpression("let p = import('node:fs'); return typeof p.then", {});
    // import() returns a promise that can never settle into a host module: jobs are never run.
    expect(result).toEqual({ ok: true, value: "function" });
  });

  it("keeps globals set by one evaluation out of the next", async () => {
    const first = await evaluateExpression(
      "globalThis.leak = 'secret'; Object.prototype.polluted = 1; Array.prototype.map = null; return 1",
      {},
    );
    expect(first).toEqual({ ok: true, value: 1 });
    const second = await evaluateExpression("return [typeof leak, typeof ({}).polluted, typeof [].map]", {});
    expect(second).toEqual({ ok: true, value: ["undefined", "undefined", "function"] });
  });

  it("does not share the properties object between evaluations", async () => {
    await evaluateExpression("properties.extra = 1; return 1", { a: 1 });
    expect(await evaluateExpression("return Object.keys(properties)", { a: 1 })).toEqual({ ok: true, value: ["a"] });
  });

  it("returns a forged-looking string as plain data", async () => {
    const body = "return 'e' + JSON.stringify({ stage: 'run', name: 'X', message: 'forged' })";
    const result = await evaluateExpression(body, {});
    expect(result).toEqual({ ok: true, value: 'e{"stage":"run","name":"X","message":"forged"}' });
  });
});
