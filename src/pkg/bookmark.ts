/**
 * D1 read replication through the Sessions API. Every request runs in one D1 session: a read
 * (GET/HEAD) may start on the nearest replica, a write starts on the primary. The answer carries the
 * session's bookmark in `X-Session-Bookmark`; a client that sends it back on its next request gets
 * a session that sees at least everything up to that bookmark, so a phone reads its own writes even
 * when the next read lands on another replica. A value that is not a bookmark is a 400
 * ({@link requireWellFormedBookmark}): ignoring it would silently drop the read-your-writes the
 * client asked for.
 */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "./errors";

export const BOOKMARK_HEADER = "x-session-bookmark";
/** D1's bookmarks: hex groups, e.g. `0000000b-00000002-00004ed7-6b3c8ff3c8ebe68c31e2d96ed9ab7431`. */
const BOOKMARK = /^[0-9a-f]{8}(-[0-9a-f]{8,64}){2,6}$/i;

/** A sent X-Session-Bookmark that is not one is a 400 naming the header (an empty one counts as none). */
export const requireWellFormedBookmark: MiddlewareHandler = (c, next) => {
  const sent = c.req.header(BOOKMARK_HEADER)?.trim();
  if (sent && !BOOKMARK.test(sent)) {
    const shown = sent.length > 40 ? `${sent.slice(0, 37)}...` : sent;
    const message =
      `X-Session-Bookmark '${shown}' is not a bookmark: send back the X-Session-Bookmark of an earlier answer ` +
      `unchanged (hex groups such as 0000000b-00000002-00004ed7-6b3c8ff3c8ebe68c31e2d96ed9ab7431), or leave the ` +
      `header out.`;
    throw new ApiError("BadRequest", message, { errors: [{ field: "header.X-Session-Bookmark", rule: "format", message }] });
  }
  return next();
};

export function openSession(db: D1Database, request: Request): D1DatabaseSession {
  const sent = request.headers.get(BOOKMARK_HEADER)?.trim();
  if (sent && BOOKMARK.test(sent)) return db.withSession(sent);
  return db.withSession(request.method === "GET" || request.method === "HEAD" ? "first-unconstrained" : "first-primary");
}

/**
 * The response with the session's latest bookmark (when the request touched D1): set on the response
 * itself (the app's answers have mutable headers), copied only when its headers cannot change. A copy
 * on every request cost about 25 µs of CPU per read (docs/benchmarks.md, "Reads (issue 22)").
 */
export function withBookmark(response: Response, session: D1DatabaseSession): Response {
  const bookmark = session.getBookmark();
  if (!bookmark) return response;
  try {
    response.headers.set(BOOKMARK_HEADER, bookmark);
    return response;
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
  const headers = new Headers(response.headers);
  headers.set(BOOKMARK_HEADER, bookmark);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
