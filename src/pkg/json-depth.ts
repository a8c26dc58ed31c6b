/**
 * How deep a JSON text nests, found without parsing it. Every JSON body is scanned once, as text,
 * before anything parses or walks it (docs/decisions.md, "JSON nesting depth"): a body nested
 * thousands of levels deep would otherwise overflow the stack of the first recursive walk (the
 * Unicode check, zod, a schema validator) and answer 500. The scan is one loop, with no recursion,
 * and leaves the text as it is for the single JSON.parse that follows.
 */

/** The deepest a JSON body may nest arrays and objects; the body's own object or array is level 1. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * The offset of the first `{` or `[` (outside strings) that opens level `limit + 1`, or -1 when the
 * text never nests deeper than `limit`. Malformed text is not judged here: JSON.parse refuses it
 * afterwards, so an unterminated string or an unbalanced bracket simply ends the scan.
 */
export function jsonDepthExceeded(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: its end is the next quote not escaped by an odd run of backslashes.
      let end = i + 1;
      for (;;) {
        end = text.indexOf('"', end);
        if (end < 0) return -1;
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
        end++;
      }
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return i;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return -1;
}
