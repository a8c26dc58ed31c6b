/**
 * Optimistic concurrency. Every entity row carries an `etag` token that changes on each write; reads
 * send it as a strong ETag, updates and deletes honour If-Match (412 on mismatch), and GETs honour
 * If-None-Match (304) so phones on poor links can revalidate without downloading the body again.
 */
import { platform } from "../platform/services";
import type { Context, TypedResponse } from "hono";
import type { JSONParsed } from "hono/utils/types";
import { ApiError } from "./errors";

export function formatEtag(token: string): string {
  return `"${token}"`;
}

export function newEtagToken(): string {
  return platform().ids.uuid().replace(/-/g, "").slice(0, 20);
}

function listedTokens(header: string): string[] {
  return header.split(",").map((t) => t.trim().replace(/^W\//, "").replace(/^"|"$/g, ""));
}

/** Never equal to a stored ETag token: what a weak validator in If-Match compares as. */
const WEAK_NEVER_MATCHES = "W/";

/**
 * The If-Match token the caller sent, if any (`*` is returned as undefined: any version matches).
 * If-Match compares strongly (RFC 9110, 13.1.1): a weak validator `W/"..."` matches no version, so a
 * write that sends one gets 412.
 */
export function ifMatchToken(c: Context): string | undefined {
  const header = c.req.header("if-match");
  if (!header || header.trim() === "*") return undefined;
  const raw = header.split(",").map((t) => t.trim());
  if (raw.length !== 1) {
    throw new ApiError("BadRequest", "If-Match must name exactly one ETag.");
  }
  if (raw[0]!.startsWith("W/")) return WEAK_NEVER_MATCHES;
  return listedTokens(header)[0];
}

/** Throws 412 when If-Match was sent and names another version than `current`. */
export function assertIfMatch(c: Context, current: string): void {
  const expected = ifMatchToken(c);
  if (expected !== undefined && expected !== current) throw preconditionFailed();
}

export function preconditionFailed(): ApiError {
  return new ApiError("PreconditionFailed", "The resource has changed since it was read (If-Match does not match its ETag).");
}

/**
 * A JSON answer with its ETag, typed as the route's JSON answer of `status` so zod-openapi checks the
 * body against the route's schema; or a 304 when If-None-Match already names this version (the one
 * answer the route's schema does not describe: it has no body).
 */
export type JsonAnswer<T, S extends 200 | 201> = ReturnType<Context["json"]> & TypedResponse<JSONParsed<T>, S, "json">;
export function jsonWithEtag<T>(c: Context, body: T, token: string): JsonAnswer<T, 200>;
export function jsonWithEtag<T, S extends 200 | 201>(c: Context, body: T, token: string, status: S): JsonAnswer<T, S>;
export function jsonWithEtag<T>(c: Context, body: T, token: string, status: 200 | 201 = 200): JsonAnswer<T, 200 | 201> {
  const etag = formatEtag(token);
  const inm = c.req.header("if-none-match");
  if (status === 200 && inm && (inm.trim() === "*" || listedTokens(inm).includes(token))) {
    return c.body(null, 304, { etag }) as unknown as JsonAnswer<T, 200>;
  }
  c.header("etag", etag);
  return c.json(body as object, status) as unknown as JsonAnswer<T, 200 | 201>;
}
