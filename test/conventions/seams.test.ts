/**
 * Time and ids come from the platform's seams (src/platform/services.ts) everywhere, background work
 * included (queue consumers, the cron, Durable Objects), so tests drive them instead of sleeping:
 * nothing else in src/ or durable-objects/ reads the system clock or mints a random UUID. Elapsed time
 * (a slice of work, a timing in a log line) is measured with `performance.now()`, which is not a time
 * of the domain.
 */
import { describe, expect, it } from "vitest";

const sources = import.meta.glob(["../../src/**/*.ts", "../../durable-objects/*.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

const SEAM = "src/platform/services.ts";
/** The system clock, read directly, or a random UUID minted directly. */
const PAST_THE_SEAMS = /\bnew Date\(\s*\)|\bDate\.now\(\s*\)|\bcrypto\.randomUUID\(\s*\)/g;

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

function pastTheSeams(files: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [path, text] of Object.entries(files)) {
    const file = path.replace(/^(\.\.\/)+/, "");
    if (file === SEAM) continue;
    withoutComments(text)
      .split("\n")
      .forEach((line, i) => {
        for (const m of line.matchAll(PAST_THE_SEAMS)) found.push(`${file}:${i + 1} ${m[0]}`);
      });
  }
  return found;
}

describe("time and ids come from the seams", () => {
  it("reads the source", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(200);
    expect(Object.keys(sources).some((path) => path.endsWith(SEAM))).toBe(true);
  });

  it("nothing reads the system clock or mints a UUID past the Clock and IdGenerator seams", () => {
    expect(pastTheSeams(sources), "use platform().clock / nowMs() / platform().ids, or a request's clock and ids").toEqual([]);
  });

  it("would see each way past them, and not a comment or an elapsed time", () => {
    const sample = {
      "src/a.ts": "const a = new Date();\nconst b = Date.now();\nconst c = crypto.randomUUID();\n",
      "src/b.ts": "// new Date() in a comment\nconst d = new Date(text);\nconst e = performance.now();\n",
    };
    expect(pastTheSeams(sample)).toEqual(["src/a.ts:1 new Date()", "src/a.ts:2 Date.now()", "src/a.ts:3 crypto.randomUUID()"]);
  });
});
