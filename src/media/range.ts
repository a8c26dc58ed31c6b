/**
 * The Range header (RFC 9110, 14.2), one range per request: `bytes=first-last`, `bytes=first-` and
 * `bytes=-suffix`. A header this does not understand (another unit, several ranges, bad syntax) is
 * ignored and the whole representation is sent, as the RFC allows; a well-formed range that starts
 * past the end is unsatisfiable (416).
 */

export type RangeRequest = { kind: "none" } | { kind: "range"; offset: number; length: number } | { kind: "unsatisfiable" };

export function parseRange(header: string | undefined, total: number): RangeRequest {
  if (!header) return { kind: "none" };
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return { kind: "none" };
  const [, first, last] = match as unknown as [string, string, string];
  if (first === "" && last === "") return { kind: "none" };
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0) return { kind: "unsatisfiable" };
    const length = Math.min(suffix, total);
    return { kind: "range", offset: total - length, length };
  }
  const start = Number(first);
  if (!Number.isSafeInteger(start)) return { kind: "none" };
  if (start >= total) return { kind: "unsatisfiable" };
  const end = last === "" ? total - 1 : Math.min(Number(last), total - 1);
  if (end < start) return { kind: "none" };
  return { kind: "range", offset: start, length: end - start + 1 };
}
