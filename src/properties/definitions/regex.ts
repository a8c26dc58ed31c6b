/**
 * Checks for the regex of a text property. Patterns run on every text value written, in the request's
 * isolate, so besides compiling they must not invite catastrophic backtracking: a quantified group
 * that itself holds an unbounded quantifier (`(a+)+`, `(\w*)*`, `(x+y?){2,}`) is refused. This is a
 * heuristic, not a proof; the length cap on patterns and on text values bounds the rest.
 */

export type RegexCheck = { ok: true } | { ok: false; rule: "syntax" | "unsafe"; message: string };

export function checkRegex(source: string): RegexCheck {
  try {
    new RegExp(source);
  } catch (error) {
    return { ok: false, rule: "syntax", message: `The regex does not compile: ${error instanceof Error ? error.message : String(error)}.` };
  }
  if (hasNestedUnboundedQuantifier(source)) {
    return {
      ok: false,
      rule: "unsafe",
      message: "The regex repeats a group that itself repeats without bound (like (a+)+), which can take exponential time; rewrite it.",
    };
  }
  return { ok: true };
}

/** Whether the text at `i` starts a quantifier, and whether that quantifier is unbounded. */
function quantifierAt(source: string, i: number): { length: number; unbounded: boolean } | undefined {
  const c = source[i];
  if (c === "*" || c === "+") return { length: 1, unbounded: true };
  if (c === "?") return { length: 1, unbounded: false };
  if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i));
    if (!m) return undefined;
    const unbounded = m[2] !== undefined && (m[3] === "" || Number(m[3]) > 1);
    return { length: m[0].length, unbounded };
  }
  return undefined;
}

function hasNestedUnboundedQuantifier(source: string): boolean {
  // One frame per open group: whether something inside it repeats without bound.
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") {
      inClass = true;
      continue;
    }
    if (c === "(") {
      groups.push(false);
      continue;
    }
    if (c === ")") {
      const innerRepeats = groups.pop() ?? false;
      const q = quantifierAt(source, i + 1);
      if (q?.unbounded && innerRepeats) return true;
      // A group that repeats (or holds a repetition) makes its enclosing group repeat too.
      if (groups.length > 0 && (innerRepeats || q?.unbounded)) groups[groups.length - 1] = true;
      continue;
    }
    const q = quantifierAt(source, i);
    if (q) {
      if (q.unbounded && groups.length > 0) groups[groups.length - 1] = true;
      i += q.length - 1;
    }
  }
  return false;
}
