/**
 * valueExpression evaluation: runs the body of a JavaScript function written by an API client in a
 * QuickJS sandbox (interface spec 2.1). Nothing of the host is exposed inside: no host functions,
 * no fetch, no timers; values cross the boundary only as JSON text.
 */
import type { QuickJSContext, QuickJSRuntime } from "quickjs-emscripten-core";
import { BOOTSTRAP_SOURCE, readReport, type SandboxFailure } from "./bootstrap";
import { acquireEngine, discardEngine, type EngineLease } from "./engine";
import { bindableNames } from "./identifiers";
import {
  DEFAULT_MEMORY_BYTES,
  DEFAULT_STACK_BYTES,
  resolveLimits,
  startInterruptMeter,
  type ExpressionLimits,
  type InterruptMeter,
  type ResolvedLimits,
} from "./limits";

/** Why an expression produced no value. */
export type ExpressionFailureReason = "syntax" | "thrown" | "timeout" | "memory" | "noReturn" | "unserializable";

/** The value an expression returned (as JSON data), or why it produced none. */
export type ExpressionResult = { ok: true; value: unknown } | { ok: false; reason: ExpressionFailureReason; message: string };

// A cheap pre-check only (it also matches `return` inside strings and comments); the authoritative
// check is that the function actually returned something.
const RETURN_TOKEN = /\breturn\b/;

const NO_RETURN_MESSAGE = "the expression returned no value: end every path with a return statement (return null for an empty value)";

interface Job {
  body: string;
  namesJson: string;
  scopeJson: string;
}

/**
 * Evaluates `body` as the body of a function and returns its JSON-serialisable result.
 *
 * - Scope names that are valid identifiers (not reserved words, not `properties`) are parameters;
 *   every name is also on `properties`, a null-prototype object (`properties["wall-thickness"]`).
 * - Scope values go in as JSON: Dates become ISO strings, `undefined` becomes null at the top level.
 * - The result comes back through JSON.stringify inside the sandbox (Dates become ISO strings).
 *   Functions, symbols, BigInts, promises and non-finite numbers anywhere in it give
 *   `unserializable`; other objects follow JSON.stringify (a Map becomes {}).
 * - Returning undefined, explicitly or by falling off the end, gives `noReturn`, the same as a body
 *   with no `return` at all (rejected before the engine starts): the spec requires a return value,
 *   and null is the way to say "no value".
 * - Every evaluation gets a fresh QuickJS runtime and context, so nothing carries over between calls.
 * - It runs as one stretch, bounded like a library's (its poll budget everywhere, and 10 times its time
 *   limit of wall time where the clock moves), after giving the thread to whatever else was waiting.
 *
 * Throws only for caller bugs (a scope that is not JSON-serialisable, a non-positive limit) and for
 * an engine that cannot be instantiated.
 */
export async function evaluateExpression(
  body: string,
  scope: Record<string, unknown>,
  limits: ExpressionLimits = {},
): Promise<ExpressionResult> {
  const resolved = resolveLimits(limits);
  if (!RETURN_TOKEN.test(body)) return failure("noReturn", NO_RETURN_MESSAGE);
  const job: Job = { body, namesJson: JSON.stringify(bindableNames(scope)), scopeJson: serializeScope(scope) };
  const lease = await acquireEngine();
  warmUp(lease);
  // One evaluation is one stretch on the thread (bounded in limits.ts); a request that
  // evaluates many gives the thread back between them, so their sum never holds other requests.
  await yieldToEventLoop();
  return evaluateWith(lease, job, resolved);
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

const warmed = new WeakSet<EngineLease>();
const WARM_UP_JOB: Job = {
  body: "return [a, properties.a, JSON.stringify({ a: [a] })]",
  namesJson: '["a"]',
  scopeJson: '{"a":1}',
};

/**
 * Runs one throwaway evaluation on a new engine before the first real one. V8 compiles WebAssembly
 * functions lazily on first call, so the first evaluation in an isolate is many times slower than
 * later ones; where the clock moves, that cold start could otherwise trip the wall-clock backstop
 * and report a timeout that the same expression would never get again.
 */
function warmUp(lease: EngineLease): void {
  if (warmed.has(lease)) return;
  warmed.add(lease);
  evaluateWith(lease, WARM_UP_JOB, { timeMs: 60_000, memoryBytes: DEFAULT_MEMORY_BYTES, stackBytes: DEFAULT_STACK_BYTES });
}

function serializeScope(scope: Record<string, unknown>): string {
  // Object.fromEntries defines own properties, so a "__proto__" name stays an ordinary key.
  const topLevel = Object.fromEntries(Object.entries(scope).map(([name, value]) => [name, value ?? null]));
  try {
    return JSON.stringify(topLevel);
  } catch (error) {
    throw new TypeError("expression scope must be JSON-serialisable", { cause: error });
  }
}

function evaluateWith(lease: EngineLease, job: Job, limits: ResolvedLimits): ExpressionResult {
  const meter = startInterruptMeter(limits.timeMs);
  let runtime: QuickJSRuntime;
  let result: ExpressionResult;
  try {
    runtime = lease.module.newRuntime({
      memoryLimitBytes: limits.memoryBytes,
      maxStackSizeBytes: limits.stackBytes,
      interruptHandler: meter.handler,
    });
    result = runInRuntime(runtime, job, meter, limits);
  } catch (error) {
    // A host exception unwound through WebAssembly frames; see discardEngine for why nothing is
    // disposed here.
    discardEngine(lease);
    return hostFailure(error, limits);
  }
  if (meter.interrupted || (!result.ok && result.reason === "memory")) {
    // QuickJS may leave objects on its GC list after an interrupt or an out-of-memory, and freeing
    // the runtime then aborts the instance (JS_FreeRuntime's assertion, issue 32): the engine is
    // dropped instead, and the next evaluation instantiates a fresh one.
    discardEngine(lease);
    return result;
  }
  try {
    runtime.dispose();
  } catch {
    // QuickJS asserts when the runtime still owns objects; the instance is unusable afterwards.
    // The evaluation itself finished, so its result stands.
    discardEngine(lease);
  }
  return result;
}

/** Runs the bootstrap in a fresh context. QuickJS-level errors come back as results, not throws. */
function runInRuntime(runtime: QuickJSRuntime, job: Job, meter: InterruptMeter, limits: ResolvedLimits): ExpressionResult {
  const context = runtime.newContext();
  const text = callBootstrap(context, job);
  context.dispose();
  if (meter.interrupted) return failure("timeout", `the expression exceeded its time limit of ${limits.timeMs} ms`);
  if (text === undefined) return memoryFailure(limits);
  const report = readReport(text);
  if (report === undefined) throw new Error("expression sandbox returned a malformed report");
  if (report.kind === "value") return { ok: true, value: report.value };
  return classify(report, limits);
}

/**
 * The bootstrap's report string, or undefined when an error escaped it. Only the engine throws past
 * the bootstrap's own try/catch (an interrupt, which is uncatchable, or running out of memory while
 * reporting), so the escaped value is not inspected: reading it could run user-defined getters.
 */
function callBootstrap(context: QuickJSContext, job: Job): string | undefined {
  const compiled = context.evalCode(BOOTSTRAP_SOURCE, "expression-sandbox.js");
  if (compiled.error) {
    compiled.error.dispose();
    return undefined;
  }
  const args = [context.newString(job.namesJson), context.newString(job.body), context.newString(job.scopeJson)];
  const called = context.callFunction(compiled.value, context.undefined, ...args);
  for (const handle of args) handle.dispose();
  compiled.value.dispose();
  if (called.error) {
    called.error.dispose();
    return undefined;
  }
  const text = context.typeof(called.value) === "string" ? context.getString(called.value) : undefined;
  called.value.dispose();
  return text;
}

function classify(report: SandboxFailure, limits: ResolvedLimits): ExpressionResult {
  // QuickJS's resource errors; "string too long" is its 2^30-character cap, which strings built from
  // ropes reach before the memory limit.
  if (report.name === "InternalError" && /out of memory|string too long/.test(report.message)) return memoryFailure(limits);
  // The parser reports deep nesting as a SyntaxError with the same message.
  if (report.message === "stack overflow") return stackFailure(limits);
  const described = report.name === "" ? report.message : `${report.name}: ${report.message}`;
  switch (report.stage) {
    case "compile":
      return failure("syntax", described);
    case "run":
      return failure("thrown", described);
    case "noReturn":
      return failure("noReturn", NO_RETURN_MESSAGE);
    case "serialize":
      return failure("unserializable", `the returned value is not JSON-serialisable: ${described}`);
  }
}

/**
 * Exceptions thrown by the host while WebAssembly ran. V8's own stack overflow (RangeError) and
 * WebAssembly traps (RuntimeError, which includes emscripten aborts) are resource exhaustion caused
 * by the expression; anything else is a defect here or in the library and is rethrown.
 */
function hostFailure(error: unknown, limits: ResolvedLimits): ExpressionResult {
  if (error instanceof RangeError) return stackFailure(limits);
  if (error instanceof WebAssembly.RuntimeError) return memoryFailure(limits);
  throw error;
}

function memoryFailure(limits: ResolvedLimits): ExpressionResult {
  return failure("memory", `the expression exceeded the sandbox memory limit of ${limits.memoryBytes} bytes`);
}

function stackFailure(limits: ResolvedLimits): ExpressionResult {
  return failure("memory", `the expression nested or recursed too deeply (stack limit ${limits.stackBytes} bytes)`);
}

function failure(reason: ExpressionFailureReason, message: string): ExpressionResult {
  return { ok: false, reason, message };
}
