/**
 * Custom index libraries (spec 2.10): a JavaScript module whose default export is a class extending
 * `IndexBuilder` (imported from "integrity-edge/search"), constructed with (services, logger), that
 * returns a mapping and its entries (an async iterable). It runs in a fresh QuickJS runtime with time
 * and memory limits, never in the Worker's own JavaScript context; no module but the base one can be
 * imported, and nothing of the host is reachable except the read-only clients.
 *
 * The engine is synchronous (the release-sync QuickJS variant), and the clients read D1, which is
 * asynchronous. A client call whose answer is not known yet therefore suspends the run: the host
 * records the request, the run is abandoned (its entries discarded), the host reads the answers, and
 * the library runs again from the start with them. A library that asks the same questions in the
 * same order (any deterministic one) finishes in as many rounds as it has distinct calls in a chain,
 * at most {@link MAX_ROUNDS}.
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { Bindings } from "../env";
import { configOf } from "../config";
import { acquireEngine, discardEngine, startInterruptMeter } from "../pkg/sandbox";
import { documentPermission } from "./access";
import { checkEntry, mappingProblems, type Mapping } from "./mapping";
import { callClient, clientReadPermissions } from "./services";
import { standardIndex, type SearchDocument } from "./standard";
import type { IndexRow } from "./store";

export const BASE_MODULE = "integrity-edge/search";
const LIBRARY_MODULE = "library";
/** Suspensions (rounds of client answers) before a run is given up. */
export const MAX_ROUNDS = 12;
/** Distinct client calls one run may make. */
export const MAX_CALLS = 200;
/** Entries an index may hold. */
export const MAX_ENTRIES = 100_000;
export const LIBRARY_MEMORY_BYTES = 16 * 1024 * 1024;
/** Longest library source accepted. */
export const MAX_LIBRARY_BYTES = 256 * 1024;
/** Log lines kept from one run. */
const MAX_LOG_LINES = 500;

const SUSPEND = "\u0000suspend";

/** The base module: the abstract class, and the bridge to the host captured before user code runs. */
const BASE_SOURCE = `
const call = globalThis.__ie_call, log = globalThis.__ie_log, emit = globalThis.__ie_emit;
delete globalThis.__ie_call; delete globalThis.__ie_log; delete globalThis.__ie_emit;
const SUSPEND = "\\u0000suspend";
const parse = JSON.parse, stringify = JSON.stringify;
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
const line = (level) => (...parts) => log(level, parts.map((p) => (typeof p === "string" ? p : stringify(p))).join(" "));
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

/** The trusted driver: constructs the library's class and streams its mapping and entries to the host. */
const DRIVER_SOURCE = `
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
  done("", "");
} catch (error) {
  done(error && error.name ? String(error.name) : "Error", error && error.message !== undefined ? String(error.message) : String(error));
}
`;

export interface LibrarySink {
  /** A new round starts: forget what earlier rounds wrote. */
  reset(): void;
  /** The run's mapping, checked. */
  begin(mapping: Mapping): void;
  /** A batch of checked documents. */
  write(documents: SearchDocument[]): void;
}

export type LibraryOutcome =
  { ok: true; mapping: Mapping; documents: number; logs: LogLine[] } | { ok: false; message: string; logs: LogLine[] };

export interface LogLine {
  level: string;
  message: string;
}

interface RoundResult {
  kind: "done" | "failed" | "suspended" | "timeout" | "memory";
  message?: string;
}

class Stop extends Error {}

/**
 * Runs an index's library to completion, streaming checked documents into `sink`. The outcome says
 * why a run failed, in words the index's log shows: a throw, a time or memory limit, a mapping or an
 * entry that breaks the rules, too many entries or client calls.
 */
export async function runLibrary(env: Bindings, row: IndexRow, sink: LibrarySink): Promise<LibraryOutcome> {
  const source = row.library;
  if (!source) return { ok: false, message: "The index has no library file (PUT /Indices/{id}/File).", logs: [] };
  const grant = new Set(JSON.parse(row.grant_permissions ?? "[]") as string[]);
  // Each answer with what a caller needs to see its data (src/search/access.ts); none for an error.
  const answers = new Map<string, { json: string; permissions: string[] }>();
  const { SEARCH_MAX_FIELDS: maxFields, SEARCH_LIBRARY_TIME_MS: timeMs } = configOf(env);
  const standard = standardIndex(row.id);
  let logs: LogLine[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    sink.reset();
    logs = [];
    const pending = new Map<string, { service: string; method: string; args: unknown }>();
    // The read permissions of the clients that returned data so far in this round (a round starts in a
    // fresh runtime, so nothing the library holds can come from a call it has not made in it): every
    // document emitted from here on carries them, as the document may hold what they returned.
    const used = new Set<string>();
    let mapping: Mapping | null = null;
    let entries = 0;
    const result = await runRound(source, timeMs, {
      call(service, method, argsJson) {
        const key = `${service}\u0000${method}\u0000${argsJson}`;
        const known = answers.get(key);
        if (known !== undefined) {
          for (const p of known.permissions) used.add(p);
          return known.json;
        }
        if (answers.size + pending.size >= MAX_CALLS)
          return JSON.stringify({ error: `a synchronisation may make at most ${MAX_CALLS} distinct client calls` });
        pending.set(key, { service, method, args: JSON.parse(argsJson) as unknown });
        return SUSPEND;
      },
      log(level, message) {
        if (logs.length < MAX_LOG_LINES)
          logs.push({ level: ["debug", "info", "warn", "error"].includes(level) ? level : "info", message: message.slice(0, 2000) });
      },
      emit(kind, json) {
        if (pending.size > 0) return; // this round is already suspended; its output is discarded
        if (kind === "m") {
          const returned = JSON.parse(json) as unknown;
          const problems = mappingProblems(returned, maxFields);
          if (problems.length > 0) throw new Stop(`The mapping breaks the rules: ${problems.slice(0, 10).join("; ")}.`);
          // A fed standard index keeps its own mapping; the library only supplies entries.
          mapping = standard ? standard.mapping : (returned as Mapping);
          sink.begin(mapping);
          return;
        }
        if (!mapping) throw new Stop("entries came before the mapping");
        const batch = JSON.parse(json) as unknown[];
        entries += batch.length;
        if (entries > MAX_ENTRIES) throw new Stop(`The library returned more than ${MAX_ENTRIES} entries, the most an index holds.`);
        const documents: SearchDocument[] = [];
        const permission = documentPermission(used);
        for (const entry of batch) {
          const checked = checkEntry(mapping, entry);
          if ("problem" in checked) throw new Stop(`An entry breaks the rules: ${checked.problem}.`);
          documents.push({ key: checked.key, fields: checked.fields, permission });
        }
        sink.write(documents);
      },
    });
    if (result.kind === "suspended" || pending.size > 0) {
      if (round === MAX_ROUNDS - 1) break;
      for (const [key, request] of pending) {
        const answer = await callClient(env, row, grant, request.service, request.method, request.args);
        answers.set(key, {
          json: JSON.stringify(answer),
          permissions: "value" in answer ? clientReadPermissions(request.service, row.owner_id) : [],
        });
      }
      continue;
    }
    if (result.kind === "done") {
      if (!mapping) return { ok: false, message: "The library finished without returning a mapping.", logs };
      return { ok: true, mapping, documents: entries, logs };
    }
    const message =
      result.kind === "timeout"
        ? `The library exceeded its time limit of ${timeMs} ms.`
        : result.kind === "memory"
          ? `The library exceeded its memory limit of ${LIBRARY_MEMORY_BYTES / 1024 / 1024} MiB (or nested too deeply).`
          : `The library failed: ${result.message ?? "unknown error"}`;
    return { ok: false, message, logs };
  }
  return {
    ok: false,
    message:
      `The library needed more than ${MAX_ROUNDS} rounds of client calls; make the calls it needs before awaiting ` +
      `their answers one by one (e.g. Promise.all), or fewer of them.`,
    logs,
  };
}

interface Host {
  call(service: string, method: string, argsJson: string): string;
  log(level: string, message: string): void;
  emit(kind: string, json: string): void;
}

async function runRound(source: string, timeMs: number, host: Host): Promise<RoundResult> {
  const lease = await acquireEngine();
  const meter = startInterruptMeter(timeMs);
  let outcome: RoundResult | null = null;
  let suspended = false;
  let runtime;
  try {
    // Also stops at once when the run is suspended or failed: nothing it does afterwards counts.
    runtime = lease.module.newRuntime({
      memoryLimitBytes: LIBRARY_MEMORY_BYTES,
      maxStackSizeBytes: 256 * 1024,
      interruptHandler: () => suspended || outcome?.kind === "failed" || meter.handler(),
    });
  } catch (error) {
    discardEngine(lease);
    throw error;
  }
  try {
    runtime.setModuleLoader((name) => {
      if (name === BASE_MODULE) return BASE_SOURCE;
      if (name === LIBRARY_MODULE) return source;
      return { error: new Error(`import of '${name}' is not allowed: a library imports only "${BASE_MODULE}"`) };
    });
    const context = runtime.newContext();
    const fns: QuickJSHandle[] = [];
    const define = (name: string, fn: (ctx: QuickJSContext, args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
      const handle = context.newFunction(name, (...args) => fn(context, args));
      context.setProp(context.global, name, handle);
      fns.push(handle);
    };
    const str = (h: QuickJSHandle | undefined) => (h && context.typeof(h) === "string" ? context.getString(h) : "");
    define("__ie_call", (ctx, [service, method, args]) => {
      const answer = host.call(str(service), str(method), str(args));
      if (answer === SUSPEND) suspended = true;
      return ctx.newString(answer);
    });
    define("__ie_log", (_ctx, [level, message]) => {
      host.log(str(level), str(message));
      return undefined;
    });
    define("__ie_emit", (_ctx, [kind, json]) => {
      if (outcome) return undefined;
      try {
        host.emit(str(kind), str(json));
      } catch (error) {
        // The interrupt handler stops the library on its next poll (uncatchable).
        outcome = {
          kind: "failed",
          message: error instanceof Stop ? error.message : error instanceof Error ? error.message : String(error),
        };
      }
      return undefined;
    });
    define("__ie_done", (_ctx, [name, message]) => {
      const n = str(name);
      if (!outcome) outcome = n === "" ? { kind: "done" } : { kind: "failed", message: `${n}: ${str(message)}` };
      return undefined;
    });
    const evaluated = context.evalCode(DRIVER_SOURCE, "driver.js", { type: "module" });
    if (evaluated.error) {
      const dumped = context.dump(evaluated.error) as { name?: string; message?: string } | string;
      evaluated.error.dispose();
      if (!outcome)
        outcome =
          typeof dumped === "object" && dumped
            ? { kind: "failed", message: `${dumped.name ?? "Error"}: ${dumped.message ?? ""}` }
            : { kind: "failed", message: String(dumped) };
    } else {
      for (let i = 0; i < 1_000_000 && !outcome && !meter.interrupted; i++) {
        const jobs = runtime.executePendingJobs();
        if (jobs.error) {
          jobs.error.dispose();
          break;
        }
        if (jobs.value === 0) break;
      }
      // A module that failed to link or threw before the driver's try (an import refused) rejects its promise.
      const state = context.getPromiseState(evaluated.value);
      if (!outcome && state.type === "rejected") {
        const dumped = context.dump(state.error) as { name?: string; message?: string } | string;
        state.error.dispose();
        outcome =
          typeof dumped === "object" && dumped
            ? { kind: "failed", message: `${dumped.name ?? "Error"}: ${dumped.message ?? ""}` }
            : { kind: "failed", message: String(dumped) };
      } else if (state.type === "fulfilled") state.value.dispose();
      evaluated.value.dispose();
    }
    for (const f of fns) f.dispose();
    context.dispose();
  } catch (error) {
    discardEngine(lease);
    if (error instanceof RangeError || error instanceof WebAssembly.RuntimeError) return { kind: "memory" };
    throw error;
  }
  try {
    runtime.dispose();
  } catch {
    discardEngine(lease);
  }
  if (suspended) return { kind: "suspended" };
  // An interrupt can surface as a caught "InternalError: interrupted" in an async function.
  if (meter.interrupted && (outcome as RoundResult | null)?.kind !== "done") return { kind: "timeout" };
  if (outcome) {
    const o = outcome as RoundResult;
    if (o.kind === "failed" && /out of memory|stack overflow|string too long/i.test(o.message ?? "")) return { kind: "memory" };
    return o;
  }
  if (meter.interrupted) return { kind: "timeout" };
  return { kind: "failed", message: "the library's entries never finished (an await that never settles?)" };
}
