/**
 * Following a running job's output as it is produced (issue 24, "Jobs a user can watch"):
 * `GET /Jobs/{id}/Output?follow=true` is a stream of server-sent events fed from the container host,
 * `GET /Jobs/{id}/Output` (no follow) one read of the same. The job's stored `output` keeps its
 * minute refresh by the runner (rule 5); this reads the host directly and never writes the job.
 *
 * The host gives the tail of a container's output (the local protocol's `?tailBytes=N`), not
 * offsets, so what is new is found by where the text already sent ends in the new tail: exactly
 * while the output fits in the tail (it is then the whole output), by the last 64 characters sent
 * once it does not. A cursor (the SSE event `id`, sent back as `Last-Event-ID`, or `after=` on a
 * plain read) carries those characters, so a client that reconnects gets only what it missed. When
 * more was written between two reads than the tail holds, the text that fell out is lost to the
 * stream and the event says so (`gap: true`); the stored output has the same limit.
 *
 * Bounded: the stream ends when the job ends (with an `end` event), or after
 * JOB_OUTPUT_FOLLOW_SECONDS (default 300) with a `limit` event, whichever is first; it ends at once
 * when the client goes away. When the host reports the container ended, the stream asks the job's
 * runner for a step, so the job ends now rather than at its next minute poll.
 */
import { nowMs } from "../platform/services";
import type { Bindings } from "../env";
import { ApiError } from "../pkg/errors";
import { errorFields, type Logger } from "../pkg/logger";
import { kickChain } from "./execution";
import { hostFor, HostNotConfiguredError, HostUnavailableError, type GroupState } from "./host";
import { ACTIVE_STATUSES, findJob, groupName, OUTPUT_TAIL_BYTES, type JobRow } from "./jobs";
import { configOf } from "../config";

/** Characters of already-sent output a cursor carries to find its place in a later tail. */
const ANCHOR_CHARS = 64;
/** How many occurrences of the anchor in a tail are checked against the longer text known. */
const MAX_CANDIDATES = 200;
/** The least overlap of a tail with the text sent that counts as finding its place (shorter ones match by chance). */
const MIN_OVERLAP = 16;
const HEARTBEAT_MS = 15_000;
/** What an EventSource waits before it reconnects (the SSE `retry` field). */
const RETRY_MS = 2000;

/** Where a reader is in a job's output: the text it has (its end matters), and its length when exact. */
export interface OutputPosition {
  /** The end of the output already delivered: the whole last tail in a stream, the anchor after a reconnect. */
  seen: string;
  /** How many characters of the whole output were delivered, when known exactly (the output fitted in its tail). */
  offset: number | null;
}

export const START: OutputPosition = { seen: "", offset: 0 };

/**
 * What `tail` adds to what the reader has. `truncated` says the tail is not the whole output (its
 * beginning was cut, possibly inside a character: the replacement characters a cut leaves are dropped).
 */
export function continueOutput(
  position: OutputPosition,
  tail: string,
  truncated: boolean,
): { text: string; gap: boolean; next: OutputPosition } {
  const text = truncated ? tail.replace(/^\uFFFD+/, "") : tail;
  const next: OutputPosition = { seen: text, offset: truncated ? null : text.length };
  if (position.seen === "" && (position.offset === 0 || position.offset === null)) return { text, gap: false, next };
  // Nothing the reader lacks: no output yet, or an older state of what it has (a stored output the
  // runner refreshed before the reader's last live read).
  if (text === "" || position.seen.includes(text))
    return { text: "", gap: false, next: text === "" ? position : { seen: position.seen, offset: position.offset } };
  // The whole output, and the reader's exact place in it.
  if (
    !truncated &&
    position.offset !== null &&
    position.offset <= text.length &&
    text.slice(0, position.offset).endsWith(position.seen.slice(-Math.min(position.offset, position.seen.length)))
  ) {
    return { text: text.slice(position.offset), gap: false, next };
  }
  const anchor = position.seen.slice(-ANCHOR_CHARS);
  let from = text.length - anchor.length;
  for (let i = 0; i < MAX_CANDIDATES && from >= 0; i++) {
    const at = text.lastIndexOf(anchor, from);
    if (at < 0) break;
    const end = at + anchor.length;
    // Everything before the anchor in the tail must also be what the reader has.
    if (position.seen.endsWith(text.slice(Math.max(0, end - position.seen.length), end)))
      return { text: text.slice(end), gap: false, next };
    from = at - 1;
  }
  // Less of the text sent is left at the tail's start than the anchor: the longest overlap that is still telling.
  for (let k = Math.min(anchor.length - 1, text.length); k >= MIN_OVERLAP; k--) {
    if (position.seen.endsWith(text.slice(0, k))) return { text: text.slice(k), gap: false, next };
  }
  // The reader's place fell out of the tail: more was written meanwhile than the tail holds.
  return { text, gap: true, next };
}

export function encodeCursor(position: OutputPosition): string {
  const json = JSON.stringify({ o: position.offset, a: position.seen.slice(-ANCHOR_CHARS) });
  const bytes = new TextEncoder().encode(json);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A cursor back from a client; a 400 naming `field` when it is not one this service gave. */
export function decodeCursor(cursor: string, field: string): OutputPosition {
  try {
    const binary = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const parsed = JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))),
    ) as { o?: unknown; a?: unknown };
    if (
      typeof parsed.a !== "string" ||
      parsed.a.length > ANCHOR_CHARS ||
      !(parsed.o === null || (Number.isSafeInteger(parsed.o) && (parsed.o as number) >= 0))
    )
      throw new Error("shape");
    return { seen: parsed.a, offset: parsed.o as number | null };
  } catch {
    const message =
      `${field.replace(/^(query|header)\./, "")} is not a cursor of this job's output: send back the cursor (or SSE ` +
      `event id) an earlier answer gave, unchanged, or leave it out to read from the start.`;
    throw new ApiError("ValidationFailed", message, { errors: [{ field, rule: "cursor", message }] });
  }
}

/** The bounds of a stream, from the environment (tests shorten them). */
export function followSettings(env: Bindings): { maxMs: number; pollMs: number } {
  const { JOB_OUTPUT_FOLLOW_SECONDS: seconds, JOB_OUTPUT_POLL_MS: pollMs } = configOf(env);
  return { maxMs: seconds * 1000, pollMs };
}

/** The output as the host has it now, or null (not running there, or the host does not answer). */
async function liveState(env: Bindings, job: JobRow, log: Logger): Promise<GroupState | null> {
  if (job.status !== "InProgress") return null;
  try {
    return await hostFor(env).inspectGroup(groupName(job.id), OUTPUT_TAIL_BYTES);
  } catch (error) {
    if (!(error instanceof HostUnavailableError) && !(error instanceof HostNotConfiguredError)) throw error;
    log.warn("job output not read from the host", { jobId: job.id, ...errorFields(error) });
    return null;
  }
}

function endOf(job: JobRow) {
  return {
    status: job.status,
    errorMessage: job.error_message,
    cancelledBy: job.cancelled_at ? { id: job.cancelled_by_id, name: job.cancelled_by_name } : null,
    cancelledAt: job.cancelled_at,
    endedAt: job.ended_at,
  };
}

/** One read (no follow): what is new since `position`, live from the host while the job runs. */
export async function readOutput(env: Bindings, jobId: string, position: OutputPosition, log: Logger) {
  const job = await findJob(env.DB, jobId);
  if (!job) throw new ApiError("NotFound", `Job ${jobId} does not exist.`);
  const live = await liveState(env, job, log);
  const source = live
    ? { output: live.output, truncated: live.outputTruncated }
    : { output: job.output ?? "", truncated: job.output_truncated === 1 };
  const { text, gap, next } = continueOutput(position, source.output, source.truncated);
  const ended = !ACTIVE_STATUSES.includes(job.status);
  return {
    jobId,
    status: job.status,
    text,
    gap,
    cursor: encodeCursor(next),
    live: live !== null,
    ended,
    ...(ended ? { end: endOf(job) } : {}),
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });

/**
 * The server-sent event stream of a job's output. Events: `status` ({ status }, first and on each
 * change), `output` ({ text, gap }, with the cursor as its id), `end` (the job ended: { status,
 * errorMessage, cancelledBy, cancelledAt, endedAt }), `limit` (the stream's time is up while the job
 * runs: { reason, seconds }; reconnect with Last-Event-ID); comments as heartbeats.
 */
export function followOutput(
  env: Bindings,
  job: JobRow,
  start: OutputPosition,
  signal: AbortSignal,
  log: Logger,
): ReadableStream<Uint8Array> {
  const { maxMs, pollMs } = followSettings(env);
  const deadline = nowMs() + maxMs;
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener("abort", onAbort);
  // The client went away (the stream was cancelled): stop polling at once.
  writer.closed.catch(onAbort);

  // A client that stops reading holds a write until the deadline at most.
  const send = async (chunk: string): Promise<void> => {
    const wait = Math.max(deadline - nowMs(), 0) + 5000;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("the client stopped reading")), wait)));
    try {
      await Promise.race([writer.ready.then(() => writer.write(encoder.encode(chunk))), timeout]);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  };
  const event = (name: string, data: unknown, id?: string) =>
    send(`${id ? `id: ${id}\n` : ""}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);

  const run = async () => {
    let position = start;
    let status: string | null = null;
    let kicked = false;
    let beat = nowMs();
    await send(`retry: ${RETRY_MS}\n\n`);
    let current: JobRow | null = job;
    for (;;) {
      if (stop.signal.aborted) return;
      if (!current)
        return void (await event("end", {
          status: "Unknown",
          errorMessage: `Job ${job.id} no longer exists.`,
          cancelledBy: null,
          cancelledAt: null,
          endedAt: null,
        }));
      if (current.status !== status) {
        status = current.status;
        await event("status", { status });
      }
      if (!ACTIVE_STATUSES.includes(current.status)) {
        // Ended: what the stored output adds (the runner took it from the host as the job ended), then the end.
        const { text, gap, next } = continueOutput(position, current.output ?? "", current.output_truncated === 1);
        if (text || gap) await event("output", { text, gap }, encodeCursor(next));
        return void (await event("end", endOf(current)));
      }
      const live = await liveState(env, current, log);
      if (live) {
        const { text, gap, next } = continueOutput(position, live.output, live.outputTruncated);
        if (text || gap) {
          await event("output", { text, gap }, encodeCursor(next));
          beat = nowMs();
        }
        position = next;
      }
      // The container ended (or is gone): the runner ends the job now instead of at its next minute.
      const containerEnded = current.status === "InProgress" && (live?.phase === "succeeded" || live?.phase === "failed");
      if (containerEnded && !kicked) {
        kicked = true;
        await kickChain(env, current.chain_id).catch((error: unknown) =>
          log.warn("job step not asked for", { jobId: job.id, ...errorFields(error) }),
        );
        current = await findJob(env.DB, job.id);
        continue;
      }
      if (nowMs() >= deadline) {
        return void (await event("limit", {
          reason: "maxDuration",
          seconds: Math.round(maxMs / 1000),
          status: current.status,
          message: "The stream's time is up while the job runs: reconnect with Last-Event-ID (EventSource does) to go on where it stopped.",
        }));
      }
      if (nowMs() - beat >= HEARTBEAT_MS) {
        await send(": the job is still running\n\n");
        beat = nowMs();
      }
      await sleep(Math.min(pollMs, Math.max(deadline - nowMs(), 0)), stop.signal);
      if (stop.signal.aborted) return;
      current = await findJob(env.DB, job.id);
    }
  };

  void run()
    .catch((error: unknown) => {
      if (!stop.signal.aborted) log.warn("job output stream ended early", { jobId: job.id, ...errorFields(error) });
    })
    .finally(async () => {
      signal.removeEventListener("abort", onAbort);
      await writer.close().catch(() => undefined);
    });
  return readable;
}
