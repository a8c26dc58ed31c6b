/**
 * The Range header (RFC 9110, 14.2), one range per request: `bytes=first-last`, `bytes=first-` and
 * `bytes=-suffix`, shared by the media and file downloads. A header this does not understand
 * (another unit, several ranges, bad syntax, last before first) is ignored and the whole
 * representation is sent, as the RFC allows; a well-formed range that cannot be satisfied (it starts
 * past the end, a zero-length suffix, anything of an empty file) is a 416 problem.
 */
import { ApiError } from "./errors";
import { ProblemSchema } from "./openapi";

export interface ByteRange {
  offset: number;
  length: number;
}

/** A range to send (206), "unsatisfiable" (416), or null to send everything (200). */
export function parseRange(header: string | undefined | null, size: number): ByteRange | "unsatisfiable" | null {
  if (!header) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return null;
  const [, first, last] = match as unknown as [string, string, string];
  if (first === "" && last === "") return null;
  if (first === "") {
    // A suffix: the last n bytes.
    const n = Number(last);
    if (n === 0 || size === 0) return "unsatisfiable";
    const length = Math.min(n, size);
    return { offset: size - length, length };
  }
  const start = Number(first);
  if (!Number.isSafeInteger(start)) return null;
  if (start >= size) return "unsatisfiable";
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (end < start) return null;
  return { offset: start, length: end - start + 1 };
}

/** `Content-Range` of a partial answer. */
export function contentRange(range: ByteRange, size: number): string {
  return `bytes ${range.offset}-${range.offset + range.length - 1}/${size}`;
}

/**
 * The 416 answer: a problem (code RangeNotSatisfiable) carrying `Content-Range: bytes *\/size`, which
 * tells the client the current length so it can ask again (RFC 9110, 15.5.17).
 */
export function rangeNotSatisfiable(size: number): ApiError {
  return new ApiError(
    "RangeNotSatisfiable",
    `The range cannot be satisfied: the representation has ${size} bytes (Content-Range: bytes */${size}).`,
    {
      headers: { "content-range": `bytes */${size}` },
    },
  );
}

/** The OpenAPI response of a 416, for the routes that serve ranges. */
export const RANGE_NOT_SATISFIABLE_RESPONSE = {
  description:
    "The range cannot be satisfied (it starts past the end): a problem with code RangeNotSatisfiable and `Content-Range: bytes */size`.",
  headers: { "content-range": { description: "bytes */size", schema: { type: "string" } } },
  content: { "application/problem+json": { schema: ProblemSchema } },
} as const;
