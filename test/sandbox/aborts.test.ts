/**
 * Issue 32: "Assertion failed: list_empty(&rt->gc_obj_list)" in JS_FreeRuntime, seen during a batch
 * of hostile libraries. Freeing a QuickJS runtime that still owns objects aborts the WebAssembly
 * instance. Two ways to get there, both reproduced here:
 * - the runner left a handle alive: a library that records a failure from its module's top level and
 *   then fails its evaluation made the module promise's rejection outlive the run (the two last
 *   library cases; they fail on the runner before issue 32);
 * - freeing a runtime that was interrupted (a time or stretch limit) while it held many objects:
 *   QuickJS leaves some on its GC list (the "out of memory" cases, which the stretch limit now stops
 *   before memory runs out; they failed while the sliced runner still freed such runtimes). Such
 *   runtimes are never freed now; their engine is dropped.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { evaluateExpression } from "../../src/pkg/sandbox";
import { engineAborts } from "../../src/pkg/sandbox/engine";
import { runLibrary } from "../../src/search/library";
import type { IndexRow } from "../../src/search/store";

const FILL = `for (;;) keep.push("x".repeat(100000) + keep.length)`;

/** Libraries that end their runtime with live objects after an out-of-memory, an interrupt or a stop. */
const HOSTILE_LIBRARIES: [string, string][] = [
  ["out of memory, module-level array", `const keep = [];\n${lib(FILL)}`],
  ["out of memory, array on the builder", lib(`this.keep = []; const keep = this.keep; ${FILL}`)],
  ["out of memory inside a pending promise chain", lib(`const keep = []; await Promise.resolve(); await new Promise((r) => { ${FILL} });`)],
  [
    "out of memory in a generator left suspended",
    `const keep = []; function* g() { yield 1; ${FILL} }\n${lib(`const it = g(); it.next(); it.next();`)}`,
  ],
  [
    "out of memory while logging",
    lib(`const keep = []; for (;;) { keep.push("y".repeat(50000) + keep.length); this.logger.info(keep.length); }`),
  ],
  ["interrupted with promises pending", lib(`const ps = []; for (let i = 0; i < 1000; i++) ps.push(new Promise(() => {})); for (;;) {}`)],
  // The host stops these (a rule broken) while the library still runs: the stop is an interrupt,
  // which rejects the module's promise after the outcome is known.
  ["an entry against the rules, then more work", lib(`for (let i = 0; i < 200; i++) yield { id: "a" + i, nope: 1 }; for (;;) {}`)],
  [
    "a mapping against the rules, then more work",
    lib(`for (;;) {}`).replace(`{ title: { type: "text", displayName: "Title" } }`, `{ "bad name": 1 }`),
  ],
  // Found by these tests: a failure the host records while the module's own evaluation then fails
  // left the module promise's rejection handle alive, and freeing the runtime aborted.
  [
    "a mapping against the rules sent from the module's top level, then a loop",
    `import { __driver } from "integrity-edge/search";\nawait null;\n__driver.mapping({ "bad name": 1 });\nfor (;;) {}\n${lib("")}`,
  ],
  [
    "the driver's completion called from the module's top level, then a throw",
    `const done = globalThis.__ie_done;\nawait null;\ndone("Error", "early");\nthrow new Error("after");\n${lib("")}`,
  ],
];

function lib(body: string): string {
  return `import { IndexBuilder } from "integrity-edge/search";
export default class L extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() { ${body} }
}`;
}

function row(library: string): IndexRow {
  const at = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    name: "hostile",
    display_name: "hostile",
    description: null,
    type: "custom",
    owner_id: "owner-1",
    owner_name: "Owner",
    trigger_schedule: null,
    mapping: null,
    library,
    library_file_name: "library.js",
    grant_permissions: "[]",
    status: "Pending",
    document_count: 0,
    last_sync: null,
    etag: "e",
    created_at: at,
    updated_at: at,
    created_by: "owner-1",
  };
}

const sink = { reset() {}, begin() {}, write() {} };

describe("QuickJS never aborts on a hostile run", () => {
  it.each(HOSTILE_LIBRARIES)("a library: %s", async (_label, source) => {
    const before = engineAborts();
    const outcome = await runLibrary(env, row(source), sink);
    expect(outcome.ok).toBe(false);
    expect(engineAborts()).toBe(before);
  });

  it.each([
    ["out of memory with a global array", `globalThis.keep = []; ${FILL}; return 1`],
    ["out of memory with a closure kept on a global", `const keep = []; globalThis.f = () => keep; ${FILL}; return 1`],
  ])("an expression: %s", async (_label, body) => {
    const before = engineAborts();
    const result = await evaluateExpression(body, {});
    expect(result).toMatchObject({ ok: false, reason: "memory" });
    expect(engineAborts()).toBe(before);
    expect(await evaluateExpression("return 1 + 1", {})).toEqual({ ok: true, value: 2 });
  });
});
