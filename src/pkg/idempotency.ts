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
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { StoredResponse } from "../../durable-objects/idempotency-store";
import { openText, sealText } from "../dataprocessing/run-options";
import { ApiError, invalid } from "./errors";
import { errorFields } from "./logger";
import { BOOKMARK_HEADER } from "./bookmark";
import { formBoundary, readForm } from "./multipart";

const LEASE_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ["content-type", "etag", "location", "api-supported-versions"];

/** The purpose the stored answers are sealed for (the derived key is theirs alone). */
const SEALED_ANSWER = "idempotent answer";

const secretAnswers = new WeakSet<Context>();

/**
 * Marks this request's answer as holding secrets: if it is stored for Idempotency-Key replays, it is
 * sealed at rest. Any route may call it, before or after writing its answer; a route that does not
 * answer with secrets need not.
 */
export function answerHoldsSecrets(c: Context<AppEnv>): void {
  secretAnswers.add(c);
}

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * What a multipart form means, independent of its random boundary and of how a client lays out the
 * parts' headers: each part's field name, file name, content type and the SHA-256 of its content, in
 * order. A phone that retries an upload with the same fields and bytes sends the same meaning. Null
 * when the body is not a readable form (its raw bytes are fingerprinted then).
 */
async function formMeaning(body: ArrayBuffer, boundary: string): Promise<ArrayBuffer | null> {
  try {
    const lines: string[] = [];
    for await (const part of readForm(new Response(body).body!, boundary)) {
      const digest = new crypto.DigestStream("SHA-256");
      const writer = digest.getWriter();
      for await (const chunk of part.chunks) await writer.write(chunk);
      await writer.close();
      lines.push(JSON.stringify([part.head.name, part.head.filename, part.head.contentType, hex(await digest.digest)]));
    }
    return new TextEncoder().encode(lines.join("\n")).buffer as ArrayBuffer;
  } catch {
    return null;
  }
}

async function fingerprintOf(method: string, path: string, body: ArrayBuffer): Promise<string> {
  const prefix = new TextEncoder().encode(`${method} ${path}\n`);
  const bytes = new Uint8Array(prefix.byteLength + body.byteLength);
  bytes.set(prefix, 0);
  bytes.set(new Uint8Array(body), prefix.byteLength);
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return next();
  if (!KEY_PATTERN.test(key)) {
    throw invalid("header.Idempotency-Key", "format", "Idempotency-Key must be 1 to 255 visible ASCII characters.");
  }
  const principal = c.get("principal");
  const store = c.env.IDEMPOTENCY.get(c.env.IDEMPOTENCY.idFromName(principal.id));
  const raw = await c.req.arrayBuffer();
  const boundary = formBoundary(c.req.header("content-type"));
  const meaning = boundary ? await formMeaning(raw, boundary) : null;
  const fingerprint = await fingerprintOf(c.req.method, c.req.path, meaning ?? raw);
  const begun = await store.begin(key, fingerprint, LEASE_MS);
  switch (begun.outcome) {
    case "replay": {
      const headers = new Headers(begun.response.headers);
      headers.set("idempotent-replayed", "true");
      headers.set("x-request-id", c.get("requestId"));
      // Like every answer, a replay carries a D1 bookmark that sees what the first request wrote.
      if (!headers.has(BOOKMARK_HEADER)) await touchSession(c);
      return new Response(await replayedBody(c, key, begun.response), { status: begun.response.status, headers });
    }
    case "mismatch":
      throw new ApiError("IdempotencyKeyReused", `Idempotency-Key '${key}' was already used for a different request.`);
    case "inProgress":
      throw new ApiError("IdempotencyKeyInProgress", `A request with Idempotency-Key '${key}' is still running; retry shortly.`, {
        headers: { "retry-after": "1" },
      });
    case "proceed":
      break;
  }
  try {
    await next();
  } catch (error) {
    await store.release(key, fingerprint);
    throw error;
  }
  const res = c.res;
  if (res.status >= 500) {
    await store.release(key, fingerprint);
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
      await store.release(key, fingerprint);
      return;
    }
  }
  const stored: StoredResponse = { status: res.status, headers, body, ...(sealed ? { sealed: true } : {}) };
  await store.complete(key, fingerprint, stored);
};

/** The request's D1 session (src/index.ts runs every request in one); absent when an app is driven without it. */
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
  await c.env.DB.prepare("SELECT 1").first().catch(() => undefined);
}

async function replayedBody(c: Context<AppEnv>, key: string, response: StoredResponse): Promise<string> {
  if (!response.sealed) return response.body;
  try {
    return await openText(c.env, SEALED_ANSWER, response.body);
  } catch {
    const where = response.headers.location ? ` (it is at ${response.headers.location})` : "";
    throw new ApiError("Conflict", `The first request with Idempotency-Key '${key}' succeeded, but its answer was sealed under a key the service no longer holds and cannot be replayed; read what it created${where} instead.`);
  }
}
