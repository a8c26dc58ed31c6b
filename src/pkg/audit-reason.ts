/**
 * The reason a caller gives for a write (issue 34): the `Audit-Reason` request header, recorded with
 * the write's audit records. Any write route takes it; it is checked before the write runs, so a
 * reason that breaks the rules is a 400 and nothing is written.
 */
import type { Context } from "hono";
import type { AppEnv, RouteStep } from "../env";
import { ApiError } from "./errors";

export const AUDIT_REASON_HEADER = "Audit-Reason";
/** Characters (UTF-16 code units) a reason may hold. */
export const MAX_AUDIT_REASON = 500;

// Control characters (C0, DEL, C1), and line or paragraph separators: a reason is one line of text.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const refuse = (rule: string, message: string) =>
  new ApiError("ValidationFailed", message, { errors: [{ field: `header.${AUDIT_REASON_HEADER}`, rule, message }] });

/**
 * The reason as sent, checked: at most {@link MAX_AUDIT_REASON} characters, no control characters.
 * Text beyond Latin-1 is sent percent-encoded (UTF-8) and decoded here. Absent or blank: null.
 */
export function checkedAuditReason(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  let text = raw;
  if (/%[0-9a-f]{2}/i.test(raw)) {
    try {
      text = decodeURIComponent(raw);
    } catch {
      throw refuse("encoding", `${AUDIT_REASON_HEADER} holds a % sequence that is not percent-encoded UTF-8.`);
    }
  }
  if (CONTROL.test(text))
    throw refuse("noControlCharacters", `${AUDIT_REASON_HEADER} must not hold control characters (one line of text).`);
  if (text.length > MAX_AUDIT_REASON)
    throw refuse("maxLength", `${AUDIT_REASON_HEADER} is ${text.length} characters long; at most ${MAX_AUDIT_REASON} are accepted.`);
  const trimmed = text.trim();
  return trimmed === "" ? null : trimmed;
}

/** The route step of every write: refuses a bad reason before anything is read or written. */
export const auditReasonStep: RouteStep = (c) => {
  checkedAuditReason(c.req.header(AUDIT_REASON_HEADER));
};

/** The request's reason (already checked by {@link auditReasonStep}), or null. */
export function auditReasonOf(c: Context<AppEnv>): string | null {
  return checkedAuditReason(c.req.header(AUDIT_REASON_HEADER));
}
