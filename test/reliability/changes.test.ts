/**
 * Issue 12: the change feed. A differential test: random creates, updates and deletes of categories
 * and deviations, then the feed replayed from an empty store rebuilds exactly what the lists return.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDeviationType } from "../support/factories/work";
import { call } from "../support/http";
import { seededRandom } from "../support/random";

async function feedFrom(since: string, types: string) {
  const store = new Map<string, unknown>();
  let cursor = since;
  for (;;) {
    const page = await call(`/Changes?since=${cursor}&types=${types}&take=7`);
    expect(page.status, page.text).toBe(200);
    for (const change of page.body.changes as { type: string; id: string; action: string; data: unknown }[]) {
      if (change.action === "deleted") store.delete(`${change.type}:${change.id}`);
      else store.set(`${change.type}:${change.id}`, change.data);
    }
    cursor = page.body.next;
    if (!page.body.hasMore) return { store, cursor };
  }
}

describe("GET /Changes", () => {
  it("replayed from an empty store rebuilds exactly what the lists return (random creates, updates, deletes)", async () => {
    for (const seed of [1, 2, 3]) {
      const next = seededRandom(seed);
      const start = (await call("/Changes?types=category,deviation&take=500")).body.next as string;
      const categories: string[] = [];
      const deviations: string[] = [];
      for (let i = 0; i < 40; i++) {
        const op = Math.floor(next() * 6);
        const pick = (list: string[]) => list[Math.floor(next() * list.length)];
        if (op === 0 || categories.length === 0) {
          categories.push(
            (await call("/Categories", { method: "POST", body: { name: `feed ${seed}-${i} ${crypto.randomUUID().slice(0, 4)}` } })).body.id,
          );
        } else if (op === 1) {
          await call("/Categories", {
            method: "PUT",
            body: { id: pick(categories), name: `feed renamed ${seed}-${i} ${crypto.randomUUID().slice(0, 4)}` },
          });
        } else if (op === 2) {
          const id = pick(categories)!;
          if ((await call(`/Categories/${id}`, { method: "DELETE" })).status === 204) categories.splice(categories.indexOf(id), 1);
        } else if (op === 3 || deviations.length === 0) {
          deviations.push((await call("/Deviations", { method: "POST", body: { description: `feed ${seed}-${i}` } })).body.id);
        } else if (op === 4) {
          await call("/Deviations", { method: "PUT", body: { id: pick(deviations), description: `changed ${seed}-${i}` } });
        } else {
          const id = pick(deviations)!;
          if ((await call(`/Deviations/${id}`, { method: "DELETE" })).status === 204) deviations.splice(deviations.indexOf(id), 1);
        }
      }
      const { store } = await feedFrom(start, "category,deviation");
      const expected = new Map<string, unknown>();
      for (const category of (await call("/Categories")).body as { id: string; isDefault: boolean }[]) {
        if (!category.isDefault) expected.set(`category:${category.id}`, category);
      }
      for (const deviation of (await call(`/Deviations?take=500`)).body as { id: string }[])
        expected.set(`deviation:${deviation.id}`, deviation);
      // Entities made before this round are in the lists but not in this replay: compare this round's.
      const mine = new Set([...categories.map((id) => `category:${id}`), ...deviations.map((id) => `deviation:${id}`)]);
      const expectedMine = new Map([...expected].filter(([key]) => mine.has(key)));
      const replayedMine = new Map([...store].filter(([key]) => key.startsWith("category:") || key.startsWith("deviation:")));
      expect(new Set(replayedMine.keys())).toEqual(new Set(expectedMine.keys()));
      for (const [key, value] of expectedMine) expect(replayedMine.get(key), key).toEqual(value);
    }
  });

  it("filters kinds by the caller's permissions, refuses unknown kinds, and answers 410 for an expired cursor", async () => {
    await call("/Categories", { method: "POST", body: { name: `feed perm ${crypto.randomUUID()}` } });
    const workOnly = await call("/Changes?take=500", { user: { id: "feed-reader", permissions: ["work_read"] } });
    expect(workOnly.status).toBe(200);
    expect(
      (workOnly.body.changes as { type: string }[]).every((c) =>
        ["deviation", "deviationType", "workItem", "activity", "workTemplate", "activityTemplate", "activityType"].includes(c.type),
      ),
    ).toBe(true);
    expect((await call("/Changes?types=category", { user: { id: "feed-reader", permissions: ["work_read"] } })).status).toBe(403);
    expect((await call("/Changes?types=files")).status).toBe(400);
    await env.DB.prepare("UPDATE outbox SET dispatched_at = '2000-01-01T00:00:00Z' WHERE seq = (SELECT min(seq) FROM outbox)").run();
    await env.DB.prepare("DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox ORDER BY seq LIMIT 3)").run();
    const expired = await call("/Changes?since=1");
    expect(expired.status).toBe(410);
    expect(expired.body.code).toBe("CursorExpired");
  });

  it("shows a deviation type's changes to whoever may read deviation types (work_read, as GET /DeviationTypes/{id})", async () => {
    const type = await createDeviationType();
    const workOnly = { user: { id: "feed-reader", permissions: ["work_read"] } };
    expect((await call(`/DeviationTypes/${type.id}`, workOnly)).status).toBe(200);
    const asked = await call("/Changes?types=deviationType&take=500", workOnly);
    expect(asked.status, asked.text).toBe(200);
    expect((asked.body.changes as { id: string }[]).some((c) => c.id === type.id)).toBe(true);
    const everything = await call("/Changes?take=500", workOnly);
    expect((everything.body.changes as { id: string }[]).some((c) => c.id === type.id)).toBe(true);
  });

  it("answers a cursor beyond the newest change with a 400 naming the newest, not an empty page forever (issue 24)", async () => {
    await call("/Categories", { method: "POST", body: { name: `feed newest ${crypto.randomUUID()}` } });
    const { newest } = (await env.DB.prepare("SELECT max(seq) AS newest FROM outbox").first<{ newest: number }>())!;
    const current = await call(`/Changes?since=${newest}`);
    expect(current.status, current.text).toBe(200);
    expect(current.body).toMatchObject({ changes: [], next: String(newest), hasMore: false });

    const beyond = await call(`/Changes?since=${newest + 1000}`);
    expect(beyond.status).toBe(400);
    expect(beyond.body.code).toBe("InvalidQuery");
    expect(beyond.body.detail).toContain(`newest change (cursor ${newest})`);
    expect(beyond.body.errors).toEqual([expect.objectContaining({ field: "query.since", rule: "beyondNewest" })]);

    // With every change pruned, the newest cursor ever given still counts.
    await env.DB.prepare("DELETE FROM outbox").run();
    expect((await call(`/Changes?since=${newest}`)).status).toBe(200);
    expect((await call(`/Changes?since=${newest + 1}`)).status).toBe(400);
  });
});
