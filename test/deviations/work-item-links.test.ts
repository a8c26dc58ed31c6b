import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createDeviation, eventsOf, insertWorkItem, workItemEtag } from "../support/factories/work";

describe("deviation <-> work item links", () => {
  it("links from the deviation side, shows both sides, and is idempotent", async () => {
    const deviation = await createDeviation();
    const work = await insertWorkItem({ displayName: "Replace flange", dueDate: "2026-05-01T00:00:00.000Z" });
    const before = await workItemEtag(work.id);
    const link = await call(`/Deviations/${deviation.id}/WorkItems/${work.id}`, { method: "POST" });
    expect(link.status).toBe(204);
    expect(await workItemEtag(work.id)).not.toBe(before);
    const again = await call(`/Deviations/${deviation.id}/WorkItems/${work.id}`, { method: "POST" });
    expect(again.status).toBe(204);
    const items = await call(`/Deviations/${deviation.id}/WorkItems`);
    expect(items.body).toEqual([
      {
        id: work.id,
        displayName: "Replace flange",
        referenceId: `WI-${work.id.slice(0, 6)}`,
        status: "new",
        dueDate: "2026-05-01T00:00:00.000Z",
        objectOwner: { id: "owner-1", name: "Olga Owner" },
      },
    ]);
    const read = await call(`/Deviations/${deviation.id}`);
    expect(read.body.workItemIds).toEqual([work.id]);
    expect(read.headers.get("etag")).not.toBe(deviation.etag);
    const mirror = await call(`/WorkItems/${work.id}/Deviations`);
    expect(mirror.body.map((d: { id: string }) => d.id)).toEqual([deviation.id]);
    // One event per side for the one real change; the repeated link wrote nothing.
    expect((await eventsOf(deviation.id)).map((e) => [e.kind, e.action])).toEqual([
      ["deviation", "created"],
      ["deviation", "updated"],
    ]);
    expect((await eventsOf(work.id)).map((e) => [e.kind, e.action, e.payload])).toEqual([
      ["workItem", "updated", { deviationId: deviation.id, workItemId: work.id, linked: true }],
    ]);
  });

  it("links and unlinks from the work item side; unlinking twice is 404", async () => {
    const deviation = await createDeviation();
    const work = await insertWorkItem();
    expect((await call(`/WorkItems/${work.id}/Deviations/${deviation.id}`, { method: "POST" })).status).toBe(204);
    expect((await call(`/Deviations/${deviation.id}/WorkItems`)).body.map((w: { id: string }) => w.id)).toEqual([work.id]);
    expect((await call(`/WorkItems/${work.id}/Deviations/${deviation.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/Deviations/${deviation.id}/WorkItems`)).body).toEqual([]);
    const twice = await call(`/Deviations/${deviation.id}/WorkItems/${work.id}`, { method: "DELETE" });
    expect(twice.status).toBe(404);
    expect(twice.body.code).toBe("NotFound");
  });

  it("deleting a deviation removes its links", async () => {
    const deviation = await createDeviation();
    const work = await insertWorkItem();
    await call(`/Deviations/${deviation.id}/WorkItems/${work.id}`, { method: "POST" });
    expect((await call(`/Deviations/${deviation.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/WorkItems/${work.id}/Deviations`)).body).toEqual([]);
  });

  it.each<[string, string]>([
    ["POST", "/Deviations/{d}/WorkItems/{w}"],
    ["DELETE", "/Deviations/{d}/WorkItems/{w}"],
    ["POST", "/WorkItems/{w}/Deviations/{d}"],
    ["DELETE", "/WorkItems/{w}/Deviations/{d}"],
  ])("%s %s: 404 when either side does not exist", async (method, template) => {
    const deviation = await createDeviation();
    const work = await insertWorkItem();
    const path = (d: string, w: string) => template.replace("{d}", d).replace("{w}", w);
    expect((await call(path(crypto.randomUUID(), work.id), { method })).status).toBe(404);
    expect((await call(path(deviation.id, crypto.randomUUID()), { method })).status).toBe(404);
  });

  it("404 for the lists of an unknown deviation or work item; 400 for a malformed id", async () => {
    expect((await call(`/Deviations/${crypto.randomUUID()}/WorkItems`)).status).toBe(404);
    expect((await call(`/WorkItems/${crypto.randomUUID()}/Deviations`)).status).toBe(404);
    const bad = await call("/Deviations/nope/WorkItems");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe("path.id");
  });

  it.each<[string, string]>([
    ["GET", `/Deviations/${crypto.randomUUID()}/WorkItems`],
    ["POST", `/Deviations/${crypto.randomUUID()}/WorkItems/${crypto.randomUUID()}`],
    ["DELETE", `/Deviations/${crypto.randomUUID()}/WorkItems/${crypto.randomUUID()}`],
    ["GET", `/WorkItems/${crypto.randomUUID()}/Deviations`],
    ["POST", `/WorkItems/${crypto.randomUUID()}/Deviations/${crypto.randomUUID()}`],
    ["DELETE", `/WorkItems/${crypto.randomUUID()}/Deviations/${crypto.randomUUID()}`],
  ])("%s %s: 401 without a token, 403 without the permission", async (method, path) => {
    expect((await call(path, { method, anonymous: true })).status).toBe(401);
    expect((await call(path, { method, user: { permissions: [method === "GET" ? "work_write" : "work_read"] } })).status).toBe(403);
  });
});
