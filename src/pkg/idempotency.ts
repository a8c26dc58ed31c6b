/**
 * Idempotency-Key on POST: the first response for a key is stored (per user, in the IdempotencyStore
 * Durable Object) and replayed for a repeated key with the same request; the same key with a
 * different request is a 422. Responses of 5xx are not stored, so a retry runs again.
 *
 * An answer that holds secrets (run option values, a status token) is kept for 24 hours like any
 * other, so it is never stored as sent: a route whose answer holds one calls
 * {@link answerHoldsSecrets}, and the body is sealed (AES-256-GCM under a key derived from the
 * service's key ring, src/dataprocessing/run-options.ts) before it reaches the store and opened on
 * replay. The store holds no secret in plain text; the replayed answer is the first one, byte for byte.
 */
import { nowMs } from "../platform/services";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, Bindings } from "../env";
import type { BeginResult, StoredResponse } from "../../durable-objects/idempotency-store";
import { openText, sealText } from "./keys";
import { ApiError, invalid } from "./errors";
import { errorFields } from "./logger";
import { BOOKMARK_HEADER } from "./bookmark";
import { BodyTap, discardBody, headFingerprint, wholeFingerprint } from "./body-fingerprint";
import { formBoundary, MAX_DRAIN_BYTES } from "./multipart";
import { configOf, withDatabase } from "../config";

const LEASE_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ["content-type", "etag", "location", "api-supported-versions"];

/** The purpose the stored answers are sealed for (the derived key is theirs alone). */
const SEALED_ANSWER = "idempotent answer";

const secretAnswers = new WeakSet<Context>();
const provisionalAnswers = new WeakSet<Context>();

/**
 * Marks this request's answer as not final: it is not stored for Idempotency-Key replays (the key is
 * freed, as after a 5xx), so a retry runs again. `POST /$batch` calls it when an operation failed in a
 * way a retry may mend (a 5xx, a 429, a 409 with Retry-After): the retry replays the operations that
 * had ended (their answers are kept, {@link batchOperations}) and runs the rest.
 */
export function answerIsProvisional(c: Context<AppEnv>): void {
  provisionalAnswers.add(c);
}

/** What a batch operation finds under its derived key: its first answer, or that it may run. */
export type OperationClaim =
  { outcome: "proceed" } | { outcome: "replay"; response: StoredResponse } | { outcome: "mismatch" } | { outcome: "inProgress" };

/** The answers of one batch's operations, kept under keys derived from the batch's Idempotency-Key. */
export interface OperationMemory {
  /** Claims operation `id` (its fingerprint: what it asks, as sent), or finds its first answer. */
  begin(id: string, fingerprint: string): Promise<OperationClaim>;
  /** Keeps its answer for the batch's retries (sealed when it holds secrets). */
  complete(id: string, fingerprint: string, response: StoredResponse, holdsSecrets: boolean): Promise<void>;
  /** Frees the claim: the operation did not end in an answer worth keeping, so a retry runs it again. */
  release(id: string, fingerprint: string): Promise<void>;
}

/**
 * The memory of a batch's operations when the batch carries an Idempotency-Key (null otherwise), in the
 * caller's IdempotencyStore like every key. An operation's key is the batch's key, a space and the
 * operation's id: a client's key never holds a space, so no client key can name it.
 */
export function batchOperations(c: Context<AppEnv>): OperationMemory | null {
  const key = c.req.header("idempotency-key");
  if (key === undefined || !KEY_PATTERN.test(key)) return null;
  const store = c.env.IDEMPOTENCY.get(c.env.IDEMPOTENCY.idFromName(c.get("principal").id));
  const keyOf = (id: string) => `${key} ${id}`;
  return {
    begin: async (id, fingerprint) => {
      const begun = await store.begin(keyOf(id), fingerprint, LEASE_MS);
      if (begun.outcome !== "replay" || !begun.response.sealed) return begun;
      try {
        return {
          outcome: "replay",
          response: { ...begun.response, body: await openText(c.env, SEALED_ANSWER, begun.response.body), sealed: false },
        };
      } catch {
        throw new ApiError(
          "Conflict",
          `Operation '${id}' of the first batch with Idempotency-Key '${key}' succeeded, but its answer was sealed under a key ` +
            `the service no longer holds and cannot be replayed.`,
        );
      }
    },
    complete: async (id, fingerprint, response, holdsSecrets) => {
      if (!holdsSecrets) return store.complete(keyOf(id), fingerprint, response);
      try {
        const body = await sealText(c.env, SEALED_ANSWER, response.body);
        await store.complete(keyOf(id), fingerprint, { ...response, body, sealed: true });
      } catch (error) {
        // Never in plain text: without a key the answer is not kept, and a retry runs the operation again.
        c.get("log").error("batch operation's answer not stored: it holds secrets and could not be sealed", errorFields(error));
        await store.release(keyOf(id), fingerprint);
      }
    },
    release: (id, fingerprint) => store.release(keyOf(id), fingerprint),
  };
}

/**
 * Marks this request's answer as holding secrets: if it is stored for Idempotency-Key replays, it is
 * sealed at rest. Any route may call it, before or after writing its answer; a route that does not
 * answer with secrets need not.
 */
export function answerHoldsSecrets(c: Context<AppEnv>): void {
  secretAnswers.add(c);
  const operation = operationEnvs.get(c.env);
  if (operation) operation.secrets = true;
}

/** The env of each batch operation in flight ({@link operationEnv}), and whether its answer held secrets. */
const operationEnvs = new WeakMap<object, { secrets: boolean }>();

/**
 * An env for one operation of a batch (the request's own, same database session) that learns whether
 * the route answering it called {@link answerHoldsSecrets}, so the batch seals what it keeps of that
 * answer, and its own answer, as the route's own replay would be.
 */
export function operationEnv(env: Bindings): { env: Bindings; holdsSecrets(): boolean } {
  const derived = withDatabase(env, env.DB);
  const state = { secrets: false };
  operationEnvs.set(derived, state);
  return { env: derived, holdsSecrets: () => state.secrets };
}

/**
 * Idempotency-Key on POST (and on the routes that opt in, such as upload parts). Two ways, one fingerprint
 * (src/pkg/body-fingerprint.ts):
 *
 * - A body already in memory (a JSON body, read under the JSON limit) or small enough (a Content-Length
 *   within MAX_BODY_BYTES) is hashed first, then the key is claimed with the whole fingerprint.
 * - Any other body (a 95 MiB upload) is never held whole: the key is claimed with the request's method
 *   and path alone, and the body is hashed as the handler reads it (multipart parts as they pass), a
 *   chunk at a time. When the body has passed, its fingerprint is recorded on the claim; when the answer
 *   is ready it is stored under it. A key already taken by the same method and path makes the body be
 *   read and hashed without being kept, then the store tells a replay (same fingerprint) from a
 *   mismatch (422) or a request still running (409).
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return next();
  if (!KEY_PATTERN.test(key)) {
    throw invalid("header.Idempotency-Key", "format", "Idempotency-Key must be 1 to 255 visible ASCII characters.");
  }
  const principal = c.get("principal");
  const store = c.env.IDEMPOTENCY.get(c.env.IDEMPOTENCY.idFromName(principal.id));
  const boundary = formBoundary(c.req.header("content-type"));
  const head = await headFingerprint(c.req.method, c.req.path);
  if (inMemory(c)) {
    const fingerprint = await wholeFingerprint(c.req.method, c.req.path, await c.req.arrayBuffer(), boundary);
    const begun = await store.begin(key, fingerprint, LEASE_MS, head);
    if (begun.outcome !== "proceed") return answerTaken(c, key, begun);
    return runAndStore(c, next, {
      fingerprint: async () => fingerprint,
      complete: (fp, stored) => store.complete(key, fp, stored, head),
      release: () => store.release(key, fingerprint),
    });
  }

  const claimed = await store.claim(key, head, LEASE_MS);
  if (claimed.outcome === "mismatch") {
    await discardBody(c.req.raw.body, MAX_DRAIN_BYTES);
    return answerTaken(c, key, claimed);
  }
  if (claimed.outcome === "check") {
    const tap = new BodyTap(c.req.raw.body!, c.req.method, c.req.path, boundary);
    return answerTaken(c, key, await store.resolve(key, await tap.finish()));
  }
  const { token } = claimed;
  const background: Promise<unknown>[] = [];
  let extendedAt = nowMs();
  const tap = new BodyTap(c.req.raw.body!, c.req.method, c.req.path, boundary, {
    // A slow upload outlives one lease: the claim is extended while its bytes keep arriving.
    onChunk: () => {
      if (nowMs() - extendedAt < LEASE_MS / 3) return;
      extendedAt = nowMs();
      background.push(store.extend(key, token, LEASE_MS).catch(() => undefined));
    },
    // Known before the handler is done: a concurrent retry with another body is a 422 from now on.
    onFingerprint: (fingerprint) => background.push(store.fingerprinted(key, token, fingerprint).catch(() => undefined)),
  });
  c.req.raw = new Request(c.req.raw, { body: tap.stream });
  return runAndStore(c, next, {
    fingerprint: async () => {
      try {
        return await tap.finish();
      } finally {
        await Promise.all(background);
      }
    },
    complete: (fp, stored) => store.complete(key, fp, stored, head),
    release: async () => {
      tap.abandon();
      await Promise.all(background);
      await store.releaseClaim(key, token);
    },
  });
};

/** Whether the body is (or may be) read whole for its fingerprint: absent, already read, or declared within the JSON limit. */
function inMemory(c: Context<AppEnv>): boolean {
  if (!c.req.raw.body || Object.keys(c.req.bodyCache).length > 0) return true;
  const length = c.req.header("content-length");
  return length !== undefined && Number(length) <= configOf(c.env).MAX_BODY_BYTES;
}

/** The answer when the key is not this request's to run: a replay, or a problem. */
async function answerTaken(c: Context<AppEnv>, key: string, taken: BeginResult | { outcome: "mismatch" }): Promise<Response> {
  switch (taken.outcome) {
    case "replay": {
      const headers = new Headers(taken.response.headers);
      headers.set("idempotent-replayed", "true");
      headers.set("x-request-id", c.get("requestId"));
      // Like every answer, a replay carries a D1 bookmark that sees what the first request wrote.
      if (!headers.has(BOOKMARK_HEADER)) await touchSession(c);
      return new Response(await replayedBody(c, key, taken.response), { status: taken.response.status, headers });
    }
    case "mismatch":
      throw new ApiError("IdempotencyKeyReused", `Idempotency-Key '${key}' was already used for a different request.`);
    case "inProgress":
    case "proceed":
      // (proceed: the key was freed while this request read its body; the retry will claim it.)
      throw new ApiError("IdempotencyKeyInProgress", `A request with Idempotency-Key '${key}' is still running; retry shortly.`, {
        headers: { "retry-after": "1" },
      });
  }
}

interface Claim {
  /** The request's fingerprint, once its body has been read to the end; rejects when it could not be. */
  fingerprint(): Promise<string>;
  complete(fingerprint: string, stored: StoredResponse): Promise<void>;
  release(): Promise<void>;
}

/** Runs the request holding the key, then stores its answer (4xx included) for replays; a 5xx or a failure frees the key. */
async function runAndStore(c: Context<AppEnv>, next: () => Promise<void>, claim: Claim): Promise<void> {
  try {
    await next();
  } catch (error) {
    await claim.release();
    throw error;
  }
  const res = c.res;
  if (res.status >= 500 || provisionalAnswers.has(c)) {
    await claim.release();
    return;
  }
  let fingerprint: string;
  try {
    fingerprint = await claim.fingerprint();
  } catch {
    // The body could not be read to its end (the client went away, or it passed the route's limit):
    // there is no fingerprint to keep the answer under, so a retry runs again.
    await claim.release();
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  // The session's bookmark after the write: a replay hands it out again (src/pkg/bookmark.ts).
  const bookmark = sessionOf(c)?.getBookmark();
  if (bookmark) headers[BOOKMARK_HEADER] = bookmark;
  let body = await res.clone().text();
  const sealed = secretAnswers.has(c);
  if (sealed) {
    try {
      body = await sealText(c.env, SEALED_ANSWER, body);
    } catch (error) {
      // Never store the secrets in plain text: without a key the answer is not kept, as after a 5xx.
      c.get("log").error("idempotent answer not stored: it holds secrets and could not be sealed", errorFields(error));
      await claim.release();
      return;
    }
  }
  await claim.complete(fingerprint, { status: res.status, headers, body, ...(sealed ? { sealed: true } : {}) });
}

/** The request's D1 session (src/handlers.ts runs every request in one); absent when an app is driven without it. */
function sessionOf(c: Context<AppEnv>): D1DatabaseSession | null {
  const db = c.env.DB as unknown as Partial<D1DatabaseSession>;
  return typeof db.getBookmark === "function" ? (db as D1DatabaseSession) : null;
}

/**
 * A replay of an answer stored without its bookmark: one read on the request's session (a POST's
 * starts on the primary, which holds the first request's write) gives it a bookmark to carry.
 */
async function touchSession(c: Context<AppEnv>): Promise<void> {
  if (!sessionOf(c)) return;
  await c.env.DB.prepare("SELECT 1")
    .first()
    .catch(() => undefined);
}

async function replayedBody(c: Context<AppEnv>, key: string, response: StoredResponse): Promise<string> {
  if (!response.sealed) return response.body;
  try {
    return await openText(c.env, SEALED_ANSWER, response.body);
  } catch {
    const where = response.headers.location ? ` (it is at ${response.headers.location})` : "";
    throw new ApiError(
      "Conflict",
      `The first request with Idempotency-Key '${key}' succeeded, but its answer was sealed under a key the service ` +
        `no longer holds and cannot be replayed; read what it created${where} instead.`,
    );
  }
}
