/**
 * The trusted program that runs inside each fresh QuickJS context before any user code, and the
 * host-side reader of what it reports.
 *
 * Why the body is compiled inside the sandbox: QuickJS's own `Function` constructor parses it, so the
 * host never splices user text into host-evaluated source. QuickJS builds that function by
 * concatenating `(function anonymous(<params>\n) {\n<body>\n})`, though, so a body such as
 * `}); globalThis.x = 1; (function(){` would close the wrapper early and hand back a different
 * function. The bootstrap therefore compares the compiled function's source text with the exact text
 * a genuine wrapper has: only a body that parses as one complete function body reproduces it. Escaping
 * code may already have run by then, but only inside this throwaway context, whose result is rejected.
 *
 * Everything the bootstrap relies on after user code starts (Reflect.apply, JSON.stringify, ...) is
 * captured up front, because the body may replace globals and prototypes. The report is a primitive
 * string so reading it on the host cannot run user code: "v" + value JSON, or "e" + JSON of a
 * null-prototype object holding only strings.
 */

/** The stage at which an evaluation stopped, as reported from inside the sandbox. */
export type FailureStage = "compile" | "run" | "noReturn" | "serialize";

/** A failure reported by the bootstrap; every field is untrusted text. */
export interface SandboxFailure {
  stage: FailureStage;
  /** The thrown value's `name` ("SyntaxError", "InternalError", ...) or "" when it had none. */
  name: string;
  message: string;
}

export type SandboxReport = { kind: "value"; value: unknown } | ({ kind: "failure" } & SandboxFailure);

/** Longest message the bootstrap copies out; a body can throw a string as large as its memory. */
export const MAX_MESSAGE_CHARS = 1000;

/**
 * Evaluates to a function `(namesJson, body, scopeJson) => report`. Plain ES5-style code on purpose:
 * it is parsed afresh for every evaluation, so it stays short and avoids features with hidden hooks
 * (iterators, spread) that user code could have patched.
 */
export const BOOTSTRAP_SOURCE = `(function (namesJson, body, scopeJson) {
  "use strict";
  var FunctionCtor = Function;
  var apply = Reflect.apply;
  var functionToString = FunctionCtor.prototype.toString;
  var sliceString = String.prototype.slice;
  var StringCtor = String;
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var isFiniteNumber = Number.isFinite;
  var createObject = Object.create;
  var keysOf = Object.keys;
  var PromiseCtor = Promise;
  var REJECTED = createObject(null);
  var rejection = "";

  function clip(text) {
    return text.length > ${MAX_MESSAGE_CHARS} ? apply(sliceString, text, [0, ${MAX_MESSAGE_CHARS}]) : text;
  }
  function report(stage, name, message) {
    var envelope = createObject(null);
    envelope.stage = stage;
    envelope.name = clip(name);
    envelope.message = clip(message);
    return "e" + stringify(envelope);
  }
  function reportThrown(stage, error) {
    var name = "";
    var message = "";
    try {
      if (error !== null && (typeof error === "object" || typeof error === "function")) {
        var errorName = error.name;
        var errorMessage = error.message;
        name = typeof errorName === "string" ? errorName : "";
        if (typeof errorMessage === "string") message = errorMessage;
        else {
          var json = stringify(error);
          message = typeof json === "string" ? json : StringCtor(error);
        }
      } else {
        message = StringCtor(error);
      }
    } catch (ignored) {
      message = "(a value that cannot be printed was thrown)";
    }
    return report(stage, name, message);
  }
  function rejectNonJson(key, item) {
    var kind = typeof item;
    // A promise would otherwise serialise as {}: expressions are synchronous and jobs never run.
    if (kind === "object" && item instanceof PromiseCtor) kind = "promise";
    var bad = kind === "function" || kind === "symbol" || kind === "bigint" || kind === "promise" ||
      (kind === "number" && !isFiniteNumber(item));
    if (bad) {
      rejection = (kind === "number" ? StringCtor(item) : "a " + kind) +
        (key === "" ? " is not" : " at key " + stringify(key) + " is not") + " representable as JSON";
      throw REJECTED;
    }
    return item;
  }

  var names = parse(namesJson);
  var scope = parse(scopeJson);
  var properties = createObject(null);
  var keys = keysOf(scope);
  for (var i = 0; i < keys.length; i++) properties[keys[i]] = scope[keys[i]];
  var args = [];
  for (var j = 0; j < names.length; j++) args[j] = properties[names[j]];
  args[names.length] = properties;
  var params = names.concat(["properties"]);
  var expectedSource = "function anonymous(" + params.join(",") + "\\n) {\\n" + body + "\\n}";

  var fn;
  try {
    fn = apply(FunctionCtor, undefined, params.concat([body]));
  } catch (error) {
    return reportThrown("compile", error);
  }
  var intact = false;
  try {
    intact = typeof fn === "function" && apply(functionToString, fn, []) === expectedSource;
  } catch (ignored) {}
  if (!intact) {
    return report("compile", "SyntaxError", "the expression must be a single function body; it closes the function it is wrapped in");
  }

  var value;
  try {
    value = apply(fn, undefined, args);
  } catch (error) {
    return reportThrown("run", error);
  }
  if (value === undefined) return report("noReturn", "", "");

  var text;
  try {
    text = stringify(value, rejectNonJson);
  } catch (error) {
    if (error === REJECTED) return report("serialize", "TypeError", rejection);
    return reportThrown("serialize", error);
  }
  if (typeof text !== "string") return report("serialize", "TypeError", "the returned value has no JSON representation");
  return "v" + text;
})`;

const STAGES: ReadonlySet<string> = new Set<FailureStage>(["compile", "run", "noReturn", "serialize"]);

/**
 * Reads the bootstrap's report. Returns undefined for anything malformed, which only a broken
 * bootstrap could produce; the caller treats it as an engine failure.
 */
export function readReport(text: string): SandboxReport | undefined {
  try {
    if (text.startsWith("v")) return { kind: "value", value: JSON.parse(text.slice(1)) as unknown };
    if (!text.startsWith("e")) return undefined;
    const envelope = JSON.parse(text.slice(1)) as unknown;
    if (typeof envelope !== "object" || envelope === null) return undefined;
    const { stage, name, message } = envelope as Record<string, unknown>;
    if (typeof stage !== "string" || !STAGES.has(stage)) return undefined;
    if (typeof name !== "string" || typeof message !== "string") return undefined;
    return { kind: "failure", stage: stage as FailureStage, name, message };
  } catch {
    return undefined;
  }
}
