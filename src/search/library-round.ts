/**
 * One round of a custom index library in the QuickJS sandbox (src/search/library.ts runs the rounds):
 * the guest programs (the base module `integrity-edge/search` and the driver) and the host side that
 * runs them in slices.
 *
 * Why slices (issue 32): an isolate serves many requests on one thread, and locally every request of
 * the process shares it. QuickJS cannot be paused in the middle of a job, but a library is async: its
 * work is a chain of jobs (every await, every yield of `entries()`). The host runs those jobs a few at
 * a time, for at most SLICE_MS, then yields to the event loop so other requests are served, and runs
 * the next slice. One job (one stretch between awaits) may take at most MAX_STRETCH_MS; a longer one
 * is stopped and fails the run, since nothing else can run until it ends.
 *
 * Why the logger counts inside the sandbox: every call that crosses to the host costs the host a copy
 * of the line out of WebAssembly memory, on the same thread. The guest counts lines and bytes and cuts
 * long lines before anything crosses; past the cap it sends one "log truncated" marker and nothing more.
 */
import { platform } from "../platform/services";
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { SLICE_MS, startRunMeter, withPrivateEngine, type RunStop } from "../pkg/sandbox";

export const BASE_MODULE = "integrity-edge/search";
const LIBRARY_MODULE = "library";
export const LIBRARY_MEMORY_BYTES = 16 * 1024 * 1024;
const LIBRARY_STACK_BYTES = 256 * 1024;

/** Log lines one run keeps, counted inside the sandbox. */
export const MAX_LOG_LINES = 500;
/** Bytes (UTF-8) of log one run keeps, counted inside the sandbox. */
export const MAX_LOG_BYTES = 256 * 1024;
/** Longest log line, in characters (the index's log keeps 2,000); longer ones are cut to end with "…". */
export const MAX_LOG_LINE_CHARS = 2000;
/** The level the guest's truncation marker is sent with; the host writes its own text for it. */
const TRUNCATED_LEVEL = "truncated";
export const LOG_TRUNCATED_MESSAGE =
  `log truncated: a run keeps at most ${MAX_LOG_LINES} lines and ${MAX_LOG_BYTES / 1024} KiB of log; ` +
  `later lines were dropped inside the sandbox`;

export const SUSPEND = "\u0000suspend";

/** The base module: the abstract class, and the bridge to the host captured before user code runs. */
const BASE_SOURCE = `
const call = globalThis.__ie_call, log = globalThis.__ie_log, emit = globalThis.__ie_emit;
delete globalThis.__ie_call; delete globalThis.__ie_log; delete globalThis.__ie_emit;
const SUSPEND = "\\u0000suspend";
// Captured now: the library's own code, which runs after this module, may replace any global.
const parse = JSON.parse, stringify = JSON.stringify, apply = Reflect.apply, StringCtor = String;
const sliceString = String.prototype.slice;
class Suspended extends Error {}
const entries = [];
function flush() {
  if (entries.length === 0) return;
  const json = "[" + entries.join(",") + "]";
  entries.length = 0;
  emit("e", json);
}
function client(name) {
  const request = (method, args) => {
    // The entries yielded so far reach the host before this call's answer exists: they cannot hold
    // any of it, so they do not carry this client's permission (the host decides that by when an
    // entry arrives, so a library that delays this only makes its own entries need more).
    flush();
    const answer = call(name, method, stringify(args === undefined ? null : args));
    if (answer === SUSPEND) return Promise.reject(new Suspended("suspended"));
    const parsed = parse(answer);
    if (parsed.error !== undefined) return Promise.reject(new Error(parsed.error));
    return Promise.resolve(parsed.value);
  };
  return Object.freeze({ list: (query) => request("list", query ?? {}), get: (id) => request("get", String(id)) });
}
const NAMES = ["deviations", "workItems", "activities", "activityTemplates", "workTemplates", "assets", "files", "monitors", "models"];
const clients = Object.create(null);
for (const name of NAMES) clients[name] = client(name);
export const services = Object.freeze({
  ...clients,
  get(name) {
    if (!Object.prototype.hasOwnProperty.call(clients, name)) {
      throw new Error("no client '" + String(name) + "'; the clients are " + NAMES.join(", "));
    }
    return clients[name];
  },
});
// The log caps, counted here so that nothing past them reaches the host. String concatenation and
// captured natives only (a library's code runs after this module and may replace any global).
let logLines = 0, logBytes = 0, logClosed = false;
const regexpReplace = RegExp.prototype[Symbol.replace], regexpExec = RegExp.prototype.exec;
const ASCII_RUNS = /[\\x00-\\x7f]+/g;
Object.defineProperty(ASCII_RUNS, "exec", { value: regexpExec });
// UTF-8 bytes, counting each non-ASCII UTF-16 unit as 3 (exact for most scripts, an upper bound for the rest).
function utf8Length(text) {
  const nonAscii = apply(regexpReplace, ASCII_RUNS, [text, ""]).length;
  return text.length + 2 * nonAscii;
}
function piece(part) {
  if (typeof part === "string") return part;
  const json = stringify(part);
  return typeof json === "string" ? json : StringCtor(part);
}
const line = (level) => (...parts) => {
  if (logClosed) return;
  let text = "";
  for (let i = 0; i < parts.length && text.length <= ${MAX_LOG_LINE_CHARS}; i++) text += (i === 0 ? "" : " ") + piece(parts[i]);
  if (text.length > ${MAX_LOG_LINE_CHARS}) text = apply(sliceString, text, [0, ${MAX_LOG_LINE_CHARS - 1}]) + "\\u2026";
  const bytes = utf8Length(text);
  if (logLines >= ${MAX_LOG_LINES} || logBytes + bytes > ${MAX_LOG_BYTES}) {
    logClosed = true;
    log("${TRUNCATED_LEVEL}", "");
    return;
  }
  logLines += 1;
  logBytes += bytes;
  log(level, text);
};
export const logger = Object.freeze({
  debug: line("debug"),
  info: line("info"),
  warn: line("warn"),
  error: line("error"),
  log: line("info"),
});
/** The driver's way to the host. A library may use it too: it can only send what it could yield. */
export const __driver = Object.freeze({
  mapping(value) { emit("m", stringify(value)); },
  entry(value) {
    const json = stringify(value);
    entries.push(json === undefined ? "null" : json);
    if (entries.length >= 200) flush();
  },
  flush,
});
export class IndexBuilder {
  constructor(services, logger) {
    this.services = services;
    this.logger = logger;
  }
  mapping() {
    throw new Error("mapping() is not implemented: return an object of fields by name");
  }
  async *entries() {}
}
`;

/**
 * The trusted driver: constructs the library's class and streams its mapping and entries to the host.
 * Its completion carries a token only this source holds (the library cannot read the driver's text),
 * so a library that finds `__ie_done` on the global object before the driver removes it cannot end
 * the run as it likes.
 */
function driverSource(token: string): string {
  return `
import Library from "${LIBRARY_MODULE}";
import { IndexBuilder, services, logger, __driver } from "${BASE_MODULE}";
const done = globalThis.__ie_done;
delete globalThis.__ie_done;
try {
  if (typeof Library !== "function" || !(Library.prototype instanceof IndexBuilder)) {
    throw new TypeError(
      "the library's default export must be a class extending IndexBuilder (import { IndexBuilder } from \\"${BASE_MODULE}\\")",
    );
  }
  const builder = new Library(services, logger);
  __driver.mapping(await builder.mapping());
  for await (const entry of builder.entries()) __driver.entry(entry);
  __driver.flush();
  done(${JSON.stringify(token)}, "", "");
} catch (error) {
  const name = error && error.name ? String(error.name) : "Error";
  done(${JSON.stringify(token)}, name, error && error.message !== undefined ? String(error.message) : String(error));
}
`;
}

export interface RoundResult {
  kind: "done" | "failed" | "suspended" | "timeout" | "stretch" | "memory";
  message?: string;
}

/** What a round asks of the host. Everything is called on the thread between or inside slices. */
export interface RoundHost {
  /** A client call: its answer (JSON) when known, else SUSPEND (the round ends, the host reads it). */
  call(service: string, method: string, argsJson: string): string;
  /** A log line the guest let through (already within the caps), or the truncation marker. */
  log(level: string, message: string, truncated: boolean): void;
  /**
   * Output of the library ("m" its mapping, "e" a batch of entries). Returns the work that checks and
   * stores it, run between slices; whatever must be judged when the output arrived (the permissions of
   * the calls made so far) is taken now. The work throws a {@link LibraryStop} to end the run.
   */
  emit(kind: string, json: string): () => void;
}

/** Thrown by the host's work on the library's output: the run ends with this message. */
export class LibraryStop extends Error {}

/** Gives the thread to whatever else is waiting (other requests, other runs' slices). */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Slices of the runs in this isolate so far; tests read it to see that a run is under way. */
let slicesRun = 0;
export function librarySlicesRun(): number {
  return slicesRun;
}

/** A library that reaches the engine's paths a real one does: module loading, classes, async generators, JSON. */
const WARM_UP_SOURCE = `import { IndexBuilder } from "${BASE_MODULE}";
export default class WarmUp extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() {
    const rows = await this.services.deviations.list({ take: 1 });
    this.logger.info("warm", rows.length, { up: true });
    for (let i = 0; i < 3; i++) yield { id: String(i), title: JSON.stringify({ i, rows }) };
  }
}`;
const WARM_UP_HOST: RoundHost = {
  call: () => JSON.stringify({ value: [] }),
  log: () => undefined,
  emit: () => () => undefined,
};
let warmedUp: Promise<unknown> | undefined;

/**
 * Runs the library once from the start, in a fresh runtime of an engine of its own, in slices. The
 * engine is dropped afterwards, so nothing the run left behind (whatever state an interrupt or an
 * out-of-memory leaves QuickJS in) can touch another run.
 *
 * The first round in an isolate is preceded by a warm-up round: V8 compiles WebAssembly functions on
 * their first call (the compiled code is then shared by every instance of the module), and that
 * compilation, counted as wall time, would otherwise push a first stretch past MAX_STRETCH_MS.
 */
export async function runRound(source: string, timeMs: number, host: RoundHost): Promise<RoundResult> {
  warmedUp ??= runSlicedRound(WARM_UP_SOURCE, 60_000, WARM_UP_HOST, false).catch(() => undefined);
  await warmedUp;
  return runSlicedRound(source, timeMs, host, true);
}

function runSlicedRound(source: string, timeMs: number, host: RoundHost, limitStretches: boolean): Promise<RoundResult> {
  return withPrivateEngine(async (lease) => {
    const meter = startRunMeter(timeMs, limitStretches);
    const token = platform().ids.uuid();
    const state: RoundState = { outcome: null, suspended: false, stop: undefined, interrupted: false };
    const pending: (() => void)[] = [];
    let runtime: QuickJSRuntime;
    try {
      runtime = lease.module.newRuntime({
        memoryLimitBytes: LIBRARY_MEMORY_BYTES,
        maxStackSizeBytes: LIBRARY_STACK_BYTES,
        // Also stops at once when the run is suspended or has an outcome: nothing it does afterwards counts.
        interruptHandler: () => {
          const stop = state.suspended || state.outcome !== null || meter.handler();
          if (stop) state.interrupted = true;
          return stop;
        },
      });
    } catch (error) {
      return engineFailure(error);
    }
    /** Runs the host's work on the output so far, giving the thread back every SLICE_MS. */
    const processOutput = async () => {
      let started = performance.now();
      while (pending.length > 0 && state.stop === undefined) {
        const work = pending.shift()!;
        try {
          work();
        } catch (error) {
          if (!(error instanceof LibraryStop)) throw error;
          state.stop = error.message;
          state.outcome = { kind: "failed", message: error.message };
        }
        if (performance.now() - started >= SLICE_MS) {
          await yieldToEventLoop();
          started = performance.now();
        }
      }
    };
    const handles: QuickJSHandle[] = [];
    let context: QuickJSContext | undefined;
    try {
      runtime.setModuleLoader((name) => {
        if (name === BASE_MODULE) return BASE_SOURCE;
        if (name === LIBRARY_MODULE) return source;
        return { error: new Error(`import of '${name}' is not allowed: a library imports only "${BASE_MODULE}"`) };
      });
      const ctx = runtime.newContext();
      context = ctx;
      const str = (h: QuickJSHandle | undefined) => (h && ctx.typeof(h) === "string" ? ctx.getString(h) : "");
      const define = (name: string, fn: (args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
        const handle = ctx.newFunction(name, (...args) => fn(args));
        ctx.setProp(ctx.global, name, handle);
        handles.push(handle);
      };
      define("__ie_call", ([service, method, args]) => {
        const answer = host.call(str(service), str(method), str(args));
        if (answer === SUSPEND) state.suspended = true;
        return ctx.newString(answer);
      });
      define("__ie_log", ([level, message]) => {
        const kind = str(level);
        host.log(kind, kind === TRUNCATED_LEVEL ? LOG_TRUNCATED_MESSAGE : str(message), kind === TRUNCATED_LEVEL);
        return undefined;
      });
      define("__ie_emit", ([kind, json]) => {
        if (!state.outcome && !state.suspended) pending.push(host.emit(str(kind), str(json)));
        return undefined;
      });
      define("__ie_done", ([given, name, message]) => {
        if (str(given) !== token || state.outcome) return undefined;
        const n = str(name);
        state.outcome = n === "" ? { kind: "done" } : { kind: "failed", message: `${n}: ${str(message)}` };
        return undefined;
      });

      // The module's own evaluation (the library's top level up to its first await) is the first stretch.
      meter.beginSlice();
      meter.beginStretch();
      const evaluated = ctx.evalCode(driverSource(token), "driver.js", { type: "module" });
      let modulePromise: QuickJSHandle | undefined;
      if (evaluated.error) {
        state.outcome ??= failedWith(ctx, evaluated.error);
        evaluated.error.dispose();
      } else {
        modulePromise = evaluated.value;
        handles.push(modulePromise);
      }
      let jobs = 0;
      while (!state.outcome && !state.suspended && !meter.stopped) {
        if (meter.sliceSpent(jobs)) {
          slicesRun += 1;
          await processOutput();
          await yieldToEventLoop();
          meter.beginSlice();
          jobs = 0;
          continue;
        }
        if (!runtime.hasPendingJob()) break;
        meter.beginStretch();
        const ran = runtime.executePendingJobs(1);
        jobs += 1;
        meter.countJob();
        if (ran.error) {
          // Only what no promise can catch escapes a job: an interrupt, or running out of memory
          // while the engine itself reported an error.
          if (!state.outcome && !state.suspended && !meter.stopped) state.outcome = failedWith(ctx, ran.error);
          ran.error.dispose();
          break;
        }
      }
      slicesRun += 1;
      // A module that failed to link or threw before the driver's try (an import refused) rejects its
      // promise. Every handle read here is disposed whatever the outcome: one left alive makes QuickJS
      // abort when the runtime is freed (issue 32).
      if (modulePromise) {
        const settled = ctx.getPromiseState(modulePromise);
        if (settled.type === "rejected") {
          if (!state.outcome && !state.suspended && !meter.stopped) state.outcome = failedWith(ctx, settled.error);
          settled.error.dispose();
        } else if (settled.type === "fulfilled" && !settled.notAPromise) settled.value.dispose();
      }
    } catch (error) {
      // A host exception unwound through WebAssembly frames: the engine is dropped with the round.
      return engineFailure(error);
    }
    const result = roundResult(state, meter.stopped);
    // Freeing a runtime that was interrupted or ran out of memory can abort the engine: QuickJS may
    // leave objects on its GC list in either case (issue 32, test/sandbox/aborts.test.ts), and
    // JS_FreeRuntime asserts that list is empty. Such a runtime is not freed: the engine is private
    // to this round and dropped with everything in it. A runtime that ended cleanly is freed, which
    // keeps a handle this file forgot to dispose visible (the same assertion, counted by engineAborts).
    if (!state.interrupted && result.kind !== "memory") {
      try {
        for (const handle of handles) handle.dispose();
        context?.dispose();
        runtime.dispose();
      } catch {
        // Counted by engineAborts(); the tests hold it at zero. The round's result stands.
      }
    }
    if (!state.suspended) await processOutput();
    return state.stop !== undefined ? { kind: "failed", message: state.stop } : result;
  });
}

interface RoundState {
  outcome: RoundResult | null;
  suspended: boolean;
  /** The host's own reason to end the run (a rule broken), which wins over what the interrupt caused. */
  stop: string | undefined;
  /** The interrupt handler stopped the runtime at least once. */
  interrupted: boolean;
}

function roundResult(state: RoundState, stopped: RunStop | undefined): RoundResult {
  if (state.suspended) return { kind: "suspended" };
  if (state.stop !== undefined) return { kind: "failed", message: state.stop };
  const outcome = state.outcome;
  if (outcome?.kind === "done") return outcome;
  if (outcome && /out of memory|stack overflow|string too long/i.test(outcome.message ?? "")) return { kind: "memory" };
  // An interrupt can also surface as a caught "InternalError: interrupted" in an async function.
  if (stopped === "stretch") return { kind: "stretch" };
  if (stopped === "time") return { kind: "timeout" };
  if (outcome) return outcome;
  return { kind: "failed", message: "the library's entries never finished (an await that never settles?)" };
}

/**
 * The failure an escaped error stands for. Reading it may run a getter of a value the library threw;
 * the interrupt handler still bounds that.
 */
function failedWith(context: QuickJSContext, error: QuickJSHandle): RoundResult {
  const dumped = context.dump(error) as { name?: string; message?: string } | string;
  return typeof dumped === "object" && dumped
    ? { kind: "failed", message: `${dumped.name ?? "Error"}: ${dumped.message ?? ""}` }
    : { kind: "failed", message: String(dumped) };
}

function engineFailure(error: unknown): RoundResult {
  if (error instanceof RangeError || error instanceof WebAssembly.RuntimeError) return { kind: "memory" };
  throw error;
}
