/**
 * Random deviations and random text and filter queries, checked against an independent evaluator
 * (plain JavaScript over the deviations as created), as the list filters are.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { indexPendingEvents, search, STANDARD } from "./support";
import { seededRandom } from "../support/random";

const WORDS = ["valve", "pümp", "flange", "crack", "seal", "gasket", "weld", "bolt", "Corrosión", "leak", "housing", "nozzle"];
const STATUSES = ["new", "active", "closed"];
const fold = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

function random<T>(items: readonly T[], rnd: () => number): T {
  return items[Math.floor(rnd() * items.length)]!;
}

describe("search, differential", () => {
  it("matches an independent evaluator on random data and queries", async () => {
    const seed = Date.now() % 100000;
    const rnd = seededRandom(seed);
    const tag = `t${crypto.randomUUID().slice(0, 8)}`;
    const docs: { id: string; referenceId: string; words: string[]; status: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const words = Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => random(WORDS, rnd));
      const status = random(STATUSES, rnd);
      const referenceId = `R${String(i).padStart(3, "0")}-${tag}`;
      const res = await call("/Deviations", { method: "POST", body: { referenceId, description: `${tag} ${words.join(" ")}`, status } });
      expect(res.status, res.text).toBe(201);
      docs.push({ id: res.body.id, referenceId, words: words.map(fold), status });
    }
    await indexPendingEvents();
    for (let q = 0; q < 60; q++) {
      const terms = Array.from({ length: Math.floor(rnd() * 3) }, () => {
        const word = fold(random(WORDS, rnd));
        return rnd() < 0.3
          ? { text: `${word.slice(0, 2 + Math.floor(rnd() * 3))}*`, prefix: true, word: word.slice(0, 2 + Math.floor(rnd() * 3)) }
          : { text: rnd() < 0.5 ? word.toUpperCase() : word, prefix: false, word };
      });
      // Prefix terms: recompute the word from the text actually sent.
      for (const term of terms) if (term.prefix) term.word = term.text.slice(0, -1);
      const statuses = STATUSES.filter(() => rnd() < 0.5);
      const negate = rnd() < 0.3;
      const filter =
        statuses.length === 0
          ? undefined
          : negate
            ? statuses.map((s) => `status ne '${s}'`).join(" and ")
            : `status in (${statuses.map((s) => `'${s}'`).join(", ")})`;
      const expected = docs
        .filter((d) => terms.every((t) => d.words.some((w) => (t.prefix ? w.startsWith(t.word) : w === t.word))))
        .filter((d) => statuses.length === 0 || (negate ? !statuses.includes(d.status) : statuses.includes(d.status)))
        .map((d) => d.id);
      const request = {
        text: [tag, ...terms.map((t) => t.text)].join(" "),
        ...(filter ? { filter } : {}),
        order: "referenceId",
        take: 200,
      };
      const res = await search(STANDARD.deviations, request);
      expect(res.status, res.text).toBe(200);
      expect(
        res.body.results.map((r: { id: string }) => r.id),
        `seed ${seed}, ${JSON.stringify(request)}`,
      ).toEqual(expected);
      expect(res.body.total).toBe(expected.length);
    }
  }, 60_000);
});
