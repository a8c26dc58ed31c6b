/**
 * Text the service stores must be well-formed Unicode: D1 (SQLite, UTF-8) replaces a lone surrogate
 * with U+FFFD, so a string like "x\ud800" would be answered as sent and stored as something else,
 * and its ETag would never match again. Such strings are refused, once, for every request part.
 */

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (matched per UTF-16 unit). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const isWellFormed = (text: string): boolean => !LONE_SURROGATE.test(text);

/** Paths (e.g. `["name"]`, `["items", 2, "description"]`) of strings that are not well-formed, at most `limit`. */
export function illFormedStrings(value: unknown, limit = 20): (string | number)[][] {
  const found: (string | number)[][] = [];
  const walk = (node: unknown, path: (string | number)[]) => {
    if (found.length >= limit) return;
    if (typeof node === "string") {
      if (!isWellFormed(node)) found.push(path);
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, [...path, i]));
    } else if (node !== null && typeof node === "object") {
      for (const [key, item] of Object.entries(node)) {
        if (!isWellFormed(key)) found.push([...path, key]);
        walk(item, [...path, key]);
      }
    }
  };
  walk(value, []);
  return found;
}

/**
 * The key under which a name is unique and looked up without regard to case (docs/decisions.md,
 * "Unique names"): NFC, then Unicode full case folding, then NFC again. Folding is upper-casing then
 * lower-casing, which applies Unicode's full mappings (SpecialCasing): "ß" and "ẞ" fold to "ss", final
 * sigma to σ, the "ﬁ" ligature to "fi", as CaseFolding.txt's C+F mappings do. So `Ünïcødé`, `ünïcødé`
 * and its decomposed spelling (U+0308 after the U) are one name, and `STRASSE` is `Straße`. The stored
 * name stays exactly as the client sent it. For ASCII the key is SQLite's lower(name).
 */
export function nameKey(name: string): string {
  return name.normalize("NFC").toUpperCase().toLowerCase().normalize("NFC");
}
