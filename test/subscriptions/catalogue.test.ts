/**
 * The event catalogue (src/subscriptions/catalogue.ts) kept true to the source: every entity kind a
 * store writes to the outbox can be subscribed to, and each kind's path and permission are what the
 * OpenAPI document gives that path's GET.
 */
import { describe, expect, it } from "vitest";
import { EVENT_KINDS, eventKindOf } from "../../src/subscriptions/catalogue";
import { call } from "../support/http";

const sources = import.meta.glob("../../src/**/*.ts", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** `NAME = "value"` string constants anywhere in src (names are unique enough for kinds). */
function constants(): Map<string, string> {
  const found = new Map<string, string>();
  for (const text of Object.values(sources)) for (const m of text.matchAll(/\b([A-Z_]*KIND)\s*=\s*"([A-Za-z]+)"/g)) found.set(m[1]!, m[2]!);
  return found;
}

/** Entity kinds named in files that write outbox events (`entityKind: "x"` or `entityKind: SOME_KIND`). */
function outboxKinds(): Map<string, string[]> {
  const named = constants();
  const kinds = new Map<string, string[]>();
  for (const [path, text] of Object.entries(sources)) {
    if (path.includes("/events/outbox.ts") || !/\b(guardedOutboxStatements|outboxStatements|outboxManyStatements)\(/.test(text)) continue;
    const local = new Map([...text.matchAll(/\bconst\s+([A-Z_]*KIND)\s*=\s*"([A-Za-z]+)"/g)].map((m) => [m[1]!, m[2]!]));
    for (const m of text.matchAll(/entityKind:\s*(?:"([A-Za-z]+)"|([A-Z_]*KIND)\b)/g)) {
      const kind = m[1] ?? local.get(m[2]!) ?? named.get(m[2]!);
      if (kind) kinds.set(kind, [...(kinds.get(kind) ?? []), path.replace("../../", "")]);
    }
  }
  return kinds;
}

describe("the event catalogue", () => {
  it("names every entity kind the outbox carries", () => {
    const kinds = outboxKinds();
    expect(kinds.size).toBeGreaterThan(20);
    const missing = [...kinds].filter(([kind]) => !eventKindOf(kind)).map(([kind, files]) => `${kind} (${files.join(", ")})`);
    expect(missing, "add these kinds to src/subscriptions/catalogue.ts so subscriptions can ask for their events").toEqual([]);
  });

  it("gives each kind the GET path and the permission the OpenAPI document gives it", async () => {
    const document = (await call("/openapi.json")).body as { paths: Record<string, { get?: { "x-permission"?: string } }> };
    const wrong = Object.entries(EVENT_KINDS)
      .filter(([, entry]) => entry.path !== null)
      .map(([kind, entry]) => ({
        kind,
        path: entry.path,
        permission: entry.permission,
        documented: document.paths[entry.path!]?.get?.["x-permission"] ?? "no GET",
      }))
      // A GET any authenticated caller may call checks the permission the entity itself needs (an import: its
      // kind's); subscribing still takes the one permission the catalogue names.
      .filter((e) => e.documented !== e.permission && e.documented !== "authenticated");
    expect(wrong).toEqual([]);
  });
});
