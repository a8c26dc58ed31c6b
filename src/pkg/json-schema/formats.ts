/**
 * The string formats that user JSON Schemas are checked against: @cfworker/json-schema's, except two
 * that put the native regex engine in the hands of whoever writes the output:
 * - `regex`: whether the string is a pattern this service accepts (src/pkg/regex.ts: JavaScript with
 *   the u flag, runnable by RE2), instead of compiling it with `new RegExp`.
 * - `url`: the library's expression (dperini's URL regex) backtracks exponentially on a host that
 *   does not end as expected (`http://` and 29 a's then `!` took 0.7 s, doubling per character).
 *   Checked here with the URL parser: http, https or ftp, no white space, and a host that is an IPv4
 *   address or a dotted name whose last label has at least two letters. Unlike the regex, private
 *   IPv4 ranges are not refused.
 * The library's other format expressions were tried against 3,000 to 24,000-character adversarial
 * strings (repeated fragments with a failing end) and stay linear, all under 10 ms.
 */
import { format } from "@cfworker/json-schema";
import { checkPattern } from "../regex";

const URL_SCHEME = /^(?:https?|ftp):\/\//i;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

function url(input: string): boolean {
  if (!URL_SCHEME.test(input) || /\s/u.test(input)) return false;
  let host: string;
  try {
    host = new URL(input).hostname;
  } catch {
    return false;
  }
  if (IPV4.test(host)) return true;
  // The parser gives international names in punycode (xn--...).
  const dot = host.lastIndexOf(".");
  const last = host.slice(dot + 1);
  return dot > 0 && (/^\p{L}{2,}$/u.test(last) || last.startsWith("xn--"));
}

export const formats: Record<string, (text: string) => boolean> = {
  ...format,
  regex: (text) => checkPattern(text, "unicode").ok,
  url,
};
