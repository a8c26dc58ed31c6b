/** Issue 12, defect 2: a write with no precondition never answers 412, however many write at once. */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

/** Statuses of concurrent PUTs; a 409 must carry Retry-After (the documented "send it again"). */
async function concurrentPuts(path: string, bodies: unknown[]) {
  const answers = await Promise.all(bodies.map((body) => call(path, { method: "PUT", body })));
  for (const answer of answers) if (answer.status === 409) expect(answer.headers.get("retry-after")).toBe("1");
  return answers.map((a) => a.status);
}

describe("20 concurrent PUTs without If-Match", () => {
  it("all succeed on a category (last writer wins)", async () => {
    const created = await call("/Categories", { method: "POST", body: { name: `race ${crypto.randomUUID()}` } });
    const statuses = await concurrentPuts(
      "/Categories",
      Array.from({ length: 20 }, (_, i) => ({ id: created.body.id, name: `${created.body.name} v${i}` })),
    );
    expect(statuses.filter((s) => s === 412)).toEqual([]);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(15);
    const read = await call(`/Categories/${created.body.id}`);
    expect(read.body.name).toMatch(/ v\d+$/);
  });

  it("all succeed on a deviation and on an asset", async () => {
    const deviation = await call("/Deviations", { method: "POST", body: { description: "race" } });
    const dStatuses = await concurrentPuts(
      "/Deviations",
      Array.from({ length: 20 }, (_, i) => ({ id: deviation.body.id, description: `race ${i}` })),
    );
    expect(dStatuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
    expect(dStatuses.filter((s) => s === 200).length).toBeGreaterThan(15);
    const asset = await call("/Assets", { method: "POST", body: { name: `race ${crypto.randomUUID()}`, kind: "plant" } });
    const aStatuses = await concurrentPuts(
      "/Assets",
      Array.from({ length: 20 }, (_, i) => ({ id: asset.body.id, name: `${asset.body.name} ${i}`, kind: "plant" })),
    );
    expect(aStatuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
    expect(aStatuses.filter((s) => s === 200).length).toBeGreaterThan(15);
  });

  it("still answers 412 to a stale If-Match", async () => {
    const created = await call("/Categories", { method: "POST", body: { name: `stale ${crypto.randomUUID()}` } });
    await call("/Categories", { method: "PUT", body: { id: created.body.id, name: `${created.body.name} 2` } });
    const stale = await call("/Categories", {
      method: "PUT",
      headers: { "if-match": created.headers.get("etag")! },
      body: { id: created.body.id, name: `${created.body.name} 3` },
    });
    expect(stale.status).toBe(412);
  });
});
