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
import type { Bindings } from "../env";
import { configOf } from "../config";
import { MAX_STRETCH_MS } from "../pkg/sandbox";
import { documentPermission } from "./access";
import {
  LIBRARY_MEMORY_BYTES,
  LibraryStop,
  LOG_TRUNCATED_MESSAGE,
  MAX_LOG_BYTES,
  MAX_LOG_LINE_CHARS,
  MAX_LOG_LINES,
  runRound,
  SUSPEND,
  type RoundResult,
} from "./library-round";
import { checkEntry, mappingProblems, type Mapping } from "./mapping";
import { callClient, clientReadPermissions } from "./services";
import { standardIndex, type SearchDocument } from "./standard";
import type { IndexRow } from "./store";

/** Suspensions (rounds of client answers) before a run is given up. */
export const MAX_ROUNDS = 12;
/** Distinct client calls one run may make. */
export const MAX_CALLS = 200;
/** Entries an index may hold. */
export const MAX_ENTRIES = 100_000;
/** Longest library source accepted. */
export const MAX_LIBRARY_BYTES = 256 * 1024;
/** The caps of a run's log, counted inside the sandbox (library-round.ts). */
export { MAX_LOG_BYTES, MAX_LOG_LINES };

export interface LibrarySink {
  /** A new round starts: forget what earlier rounds wrote. */
  reset(): void;
  /** The run's mapping, checked. */
  begin(mapping: Mapping): void;
  /** A batch of checked documents. */
  write(documents: SearchDocument[]): void;
}

/** What a run did; `logTruncated` says the library logged past the caps (its log ends with the marker). */
export type LibraryOutcome = (
  { ok: true; mapping: Mapping; documents: number; logs: LogLine[] } | { ok: false; message: string; logs: LogLine[] }
) & { logTruncated: boolean };

export interface LogLine {
  level: string;
  message: string;
}

/**
 * Runs an index's library to completion, streaming checked documents into `sink`. The outcome says
 * why a run failed, in words the index's log shows: a throw, a time or memory limit, a stretch of
 * work that held the thread too long, a mapping or an entry that breaks the rules, too many entries or
 * client calls.
 */
export async function runLibrary(env: Bindings, row: IndexRow, sink: LibrarySink): Promise<LibraryOutcome> {
  const source = row.library;
  if (!source) return { ok: false, message: "The index has no library file (PUT /Indices/{id}/File).", logs: [], logTruncated: false };
  const grant = new Set(JSON.parse(row.grant_permissions ?? "[]") as string[]);
  // Each answer with what a caller needs to see its data (src/search/access.ts); none for an error.
  const answers = new Map<string, { json: string; permissions: string[] }>();
  const { SEARCH_MAX_FIELDS: maxFields, SEARCH_LIBRARY_TIME_MS: timeMs } = configOf(env);
  const standard = standardIndex(row.id);
  let logs: LogLine[] = [];
  let logTruncated = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    sink.reset();
    logs = [];
    logTruncated = false;
    let logBytes = 0;
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
        pending.set(key, { service, method, args: argsJson === "" ? null : (JSON.parse(argsJson) as unknown) });
        return SUSPEND;
      },
      log(level, message, truncated) {
        // The guest already kept to the caps (library-round.ts); these checks only guard the host
        // should it not have. A line is dropped rather than cut: a cut V8 string keeps its whole
        // original alive, and 500 such lines once held hundreds of megabytes.
        if (logTruncated) return;
        const bytes = message.length > MAX_LOG_LINE_CHARS ? Infinity : encoder.encode(message).length;
        if (truncated || logs.length >= MAX_LOG_LINES || logBytes + bytes > MAX_LOG_BYTES) {
          logTruncated = true;
          logs.push({ level: "warn", message: LOG_TRUNCATED_MESSAGE });
          return;
        }
        logBytes += bytes;
        logs.push({ level: ["debug", "info", "warn", "error"].includes(level) ? level : "info", message });
      },
      emit(kind, json) {
        // Judged on arrival: the calls answered so far are all the data this output can hold.
        const permission = documentPermission(used);
        return () => {
          if (kind === "m") {
            const returned = JSON.parse(json) as unknown;
            const problems = mappingProblems(returned, maxFields);
            if (problems.length > 0) throw new LibraryStop(`The mapping breaks the rules: ${problems.slice(0, 10).join("; ")}.`);
            // A fed standard index keeps its own mapping; the library only supplies entries.
            mapping = standard ? standard.mapping : (returned as Mapping);
            sink.begin(mapping);
            return;
          }
          if (!mapping) throw new LibraryStop("entries came before the mapping");
          const batch = JSON.parse(json) as unknown[];
          entries += batch.length;
          if (entries > MAX_ENTRIES)
            throw new LibraryStop(`The library returned more than ${MAX_ENTRIES} entries, the most an index holds.`);
          const documents: SearchDocument[] = [];
          for (const entry of batch) {
            const checked = checkEntry(mapping, entry);
            if ("problem" in checked) throw new LibraryStop(`An entry breaks the rules: ${checked.problem}.`);
            documents.push({ key: checked.key, fields: checked.fields, permission });
          }
          sink.write(documents);
        };
      },
    });
    if (result.kind === "suspended") {
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
      if (!mapping) return { ok: false, message: "The library finished without returning a mapping.", logs, logTruncated };
      return { ok: true, mapping, documents: entries, logs, logTruncated };
    }
    return { ok: false, message: failureMessage(result, timeMs), logs, logTruncated };
  }
  return {
    ok: false,
    message:
      `The library needed more than ${MAX_ROUNDS} rounds of client calls; make the calls it needs before awaiting ` +
      `their answers one by one (e.g. Promise.all), or fewer of them.`,
    logs,
    logTruncated,
  };
}

const encoder = new TextEncoder();

function failureMessage(result: RoundResult, timeMs: number): string {
  switch (result.kind) {
    case "timeout":
      return `The library exceeded its time limit of ${timeMs} ms.`;
    case "stretch":
      return (
        `The library worked for more than ${MAX_STRETCH_MS} ms without awaiting or yielding. Other requests wait while ` +
        `it does, so a run gives the thread back at every await and yield: split long loops (an \`await null\` ` +
        `every few thousand iterations, or yield entries as they are made).`
      );
    case "memory":
      return `The library exceeded its memory limit of ${LIBRARY_MEMORY_BYTES / 1024 / 1024} MiB (or nested too deeply).`;
    default:
      return `The library failed: ${result.message ?? "unknown error"}`;
  }
}
