/**
 * D1 read replication through the Sessions API. Every request runs in one D1 session: a read
 * (GET/HEAD) may start on the nearest replica, a write starts on the primary. The answer carries the
 * session's bookmark in `X-Session-Bookmark`; a client that sends it back on its next request gets
 * a session that sees at least everything up to that bookmark, so a phone reads its own writes even
 * when the next read lands on another replica. A bookmark that is not one is ignored.
 */
export const BOOKMARK_HEADER = "x-session-bookmark";
const BOOKMARK = /^[0-9a-f]{8}(-[0-9a-f]{8,64}){2,6}$/i;

export function openSession(db: D1Database, request: Request): D1DatabaseSession {
  const sent = request.headers.get(BOOKMARK_HEADER)?.trim();
  if (sent && BOOKMARK.test(sent)) return db.withSession(sent);
  return db.withSession(request.method === "GET" || request.method === "HEAD" ? "first-unconstrained" : "first-primary");
}

/** The response with the session's latest bookmark (when the request touched D1). */
export function withBookmark(response: Response, session: D1DatabaseSession): Response {
  const bookmark = session.getBookmark();
  if (!bookmark) return response;
  const headers = new Headers(response.headers);
  headers.set(BOOKMARK_HEADER, bookmark);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
