/**
 * The request log lines of 429s, sampled per user. A client that floods the service is refused
 * thousands of times a second (src/pkg/admission.ts, src/pkg/rate-limit.ts), and a line for each at
 * info would cost more than the refusals: one line a second per user says as much. The first 429 of
 * a user in each second is logged at info, with how many of theirs went to debug since the last line
 * at info; the others go to debug. The count is this isolate's, like the limits themselves.
 */

/** Per user: the second of their last 429 logged at info, and their 429s at debug since. */
const lines = new Map<string, { second: number; notLogged: number }>();
const MAX_USERS = 10_000;

/**
 * Whether a user's 429 at `nowMs` is logged at info, and how many of their 429s went to debug before
 * it (0 when not at info). A clock that steps back starts a new second, as one that steps on does.
 */
export function refusalLine(userId: string, nowMs: number): { info: boolean; notLogged: number } {
  const second = Math.floor(nowMs / 1000);
  const last = lines.get(userId);
  if (last?.second === second) {
    last.notLogged += 1;
    return { info: false, notLogged: 0 };
  }
  lines.set(userId, { second, notLogged: 0 });
  // A user refused within the last second keeps their count; the others have been told theirs (or
  // will not be: a user who stops being refused leaves no line for their last second's count).
  if (lines.size > MAX_USERS) for (const [id, entry] of lines) if (entry.second < second - 1) lines.delete(id);
  return { info: true, notLogged: last?.notLogged ?? 0 };
}
