/** Issue 12: D1 sessions; the bookmark of a write, sent back, gives read-your-writes. */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

describe("X-Session-Bookmark", () => {
  it("comes with every answer that touched D1, and a read with a write's bookmark sees the write", async () => {
    const created = await call("/Categories", { method: "POST", body: { name: `bookmark ${crypto.randomUUID()}` } });
    const bookmark = created.headers.get("x-session-bookmark");
    expect(bookmark).toMatch(/^[0-9a-f]{8}(-[0-9a-f]{8,64}){2,6}$/i);
    const read = await call(`/Categories/${created.body.id}`, { headers: { "x-session-bookmark": bookmark! } });
    expect(read.status).toBe(200);
    expect(read.body.name).toBe(created.body.name);
    const later = read.headers.get("x-session-bookmark")!;
    expect(later >= bookmark!).toBe(true);
  });

  it(
    "answers a value that is not a bookmark with a 400 naming the header, rather than silently dropping " + "read-your-writes (issue 24)",
    async () => {
      const res = await call("/Categories", { headers: { "x-session-bookmark": "not-a-bookmark" } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "BadRequest" });
      expect(res.body.errors).toEqual([expect.objectContaining({ field: "header.X-Session-Bookmark", rule: "format" })]);
      expect(res.body.detail).toContain("'not-a-bookmark' is not a bookmark");
      // An empty header is no bookmark at all, as if it were left out.
      expect((await call("/Categories", { headers: { "x-session-bookmark": " " } })).status).toBe(200);
    },
  );
});

describe("X-Session-Bookmark on idempotent replays (issue 24)", () => {
  it("comes with a replayed answer too, and reads with it see the first request's write", async () => {
    const key = `bookmark-replay-${crypto.randomUUID()}`;
    const body = { name: `replayed ${crypto.randomUUID()}` };
    const first = await call("/Categories", { method: "POST", body, headers: { "idempotency-key": key } });
    expect(first.status).toBe(201);
    const replay = await call("/Categories", { method: "POST", body, headers: { "idempotency-key": key } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const bookmark = replay.headers.get("x-session-bookmark");
    expect(bookmark).toMatch(/^[0-9a-f]{8}(-[0-9a-f]{8,64}){2,6}$/i);
    expect(bookmark! >= first.headers.get("x-session-bookmark")!).toBe(true);
    const read = await call(`/Categories/${replay.body.id}`, { headers: { "x-session-bookmark": bookmark! } });
    expect(read.status).toBe(200);
  });
});
