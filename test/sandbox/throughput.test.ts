/** valueExpression sandbox: many evaluations in a row neither leak nor slow down to a crawl. */
import { describe, expect, it } from "vitest";
import { evaluateExpression } from "../../src/pkg/sandbox";
import { acquireEngine, ENGINE_MEMORY_MAX_BYTES, engineAborts } from "../../src/pkg/sandbox/engine";

async function engineState() {
  const lease = await acquireEngine();
  return { generation: lease.generation, wasmBytes: lease.module.getWasmMemory().buffer.byteLength };
}

describe("evaluateExpression: throughput", () => {
  it("runs 200 sequential evaluations without leaking handles or memory", async () => {
    await evaluateExpression("return 0", {}); // instantiate the engine outside the measurement
    const before = await engineState();
    const started = performance.now();
    for (let i = 0; i < 200; i++) {
      const body = i % 10 === 0 ? "throw new Error('e' + i); return 1" : "return { i, doubled: i * 2, label: properties['label-x'] + i }";
      const result = await evaluateExpression(body, { i, "label-x": "n" });
      if (i % 10 === 0) expect(result).toMatchObject({ ok: false, reason: "thrown" });
      else expect(result).toEqual({ ok: true, value: { i, doubled: i * 2, label: `n${i}` } });
    }
    const perEvaluation = (performance.now() - started) / 200;
    // Reported, not asserted: timing depends on the machine (and is frozen between I/O on Workers).
    console.log(`sandbox: ${perEvaluation.toFixed(2)} ms per evaluation over 200 sequential evaluations`);
    // A leaked handle makes QuickJS assert on runtime disposal, which discards the engine and bumps
    // the generation; a leaked runtime would grow the WebAssembly memory.
    expect(await engineState()).toEqual(before);
  });

  it("keeps working after a mix of failures that each end their runtime differently", async () => {
    const bodies = [
      "while (true) {}; return 1",
      "return 'x'.repeat(1e9)",
      "const keep = []; while (true) keep.push(new Uint8Array(1e6)); return 1",
      "return (",
      "function f() { return f() } return f()",
    ];
    const aborts = engineAborts();
    for (let round = 0; round < 5; round++) {
      for (const body of bodies) expect((await evaluateExpression(body, {})).ok).toBe(false);
    }
    expect(await evaluateExpression("return 'still fine'", {})).toEqual({ ok: true, value: "still fine" });
    // A runtime that was interrupted or ran out of memory is not freed (issue 32): its engine is
    // dropped and the next evaluation gets a fresh one, so the generation moves on, but nothing aborts.
    expect(engineAborts()).toBe(aborts);
    expect((await engineState()).wasmBytes).toBeLessThanOrEqual(ENGINE_MEMORY_MAX_BYTES);
  });
});
