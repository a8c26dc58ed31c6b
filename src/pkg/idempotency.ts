/**
 * Idempotency-Key on POST: the first response for a key is stored (per user, in the IdempotencyStore
 * Durable Object) and replayed for a repeated key with the same request; the same key with a
 * different request is a 422. Responses of 5xx are not stored, so a retry runs again.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { StoredResponse } from "../../durable-objects/idempotency-store";
import { ApiError, invalid } from "./errors";
import { formBoundary, readForm } from "./multipart";

const LEASE_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ["content-type", "etag", "location", "api-supported-versions"];

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
      return new Response(begun.response.body, { status: begun.response.status, headers });
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
  const stored: StoredResponse = { status: res.status, headers, body: await res.clone().text() };
  await store.complete(key, fingerprint, stored);
};
