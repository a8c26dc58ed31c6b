/**
 * The monitors area on the same kit as every other store: deletes honour If-Match and write their
 * event in the same batch, updates write theirs, and a population (part of its owner's
 * representation) changing is a new version of its model or monitor.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

async function eventsOf(entityId: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT entity_kind || ':' || action AS e FROM outbox WHERE entity_id = ?1 ORDER BY seq")
    .bind(entityId)
    .all<{ e: string }>();
  return results.map((r) => r.e);
}

async function definition() {
  const name = `external/${unique("m")}`;
  const res = await call("/ModelDefinitions", {
    method: "POST",
    body: { name, version: "1", location: "External", uri: "https://models.example.com/score" },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; version: string };
}

async function model() {
  const def = await definition();
  const res = await call("/Models", {
    method: "POST",
    body: { name: unique("model"), modelDefinitionName: def.name, modelDefinitionVersion: def.version, cpuCores: 1, memory: 1 },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

async function plant(): Promise<string> {
  const res = await call("/Assets", { method: "POST", body: { name: unique("plant"), kind: "plant" } });
  return res.body.id;
}

describe("the monitors area keeps the resource contract", () => {
  for (const [what, make, path] of [
    ["model definition", async () => (await definition()).id, "/ModelDefinitions"],
    ["model", async () => (await model()).id, "/Models"],
    [
      "monitor",
      async () => (await call("/Monitors", { method: "POST", body: { name: unique("monitor"), modelId: (await model()).id } })).body.id,
      "/Monitors",
    ],
    [
      "monitor with monitor jobs (removed with it by ON DELETE CASCADE)",
      async () => {
        const id = (
          await call("/Monitors", { method: "POST", body: { name: unique("monitor"), modelId: (await model()).id, status: "Active" } })
        ).body.id;
        expect((await call(`/MonitorJobs/Execution/${id}`, { method: "POST" })).status).toBe(201);
        return id;
      },
      "/Monitors",
    ],
  ] as const) {
    it(`a ${what} is deleted only at the version If-Match names, with its event`, async () => {
      const id: string = await make();
      const read = await call(`${path}/${id}`);
      const etag = read.headers.get("etag")!;
      const stale = await call(`${path}/${id}`, { method: "DELETE", headers: { "if-match": '"not-the-version"' } });
      expect(stale.status, stale.text).toBe(412);
      expect((await call(`${path}/${id}`)).status).toBe(200);
      const removed = await call(`${path}/${id}`, { method: "DELETE", headers: { "if-match": etag } });
      expect(removed.status, removed.text).toBe(204);
      expect((await call(`${path}/${id}`)).status).toBe(404);
      expect((await eventsOf(id)).at(-1)).toMatch(/:deleted$/);
    });
  }

  it("updates write their event; a refused update writes none", async () => {
    const { id } = await model();
    const read = await call(`/Models/${id}`);
    const put = await call("/Models", { method: "PUT", body: { ...read.body, description: "bearing vibration" } });
    expect(put.status, put.text).toBe(200);
    expect(await eventsOf(id)).toEqual(["model:created", "model:updated"]);
    const stale = await call("/Models", {
      method: "PUT",
      body: { ...read.body, description: "again" },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(stale.status).toBe(412);
    expect(await eventsOf(id)).toEqual(["model:created", "model:updated"]);
  });

  it("a population changing is a new version of its monitor: a cached read is not revalidated, a stale If-Match is a 412", async () => {
    const monitor = (await call("/Monitors", { method: "POST", body: { name: unique("monitor"), modelId: (await model()).id } })).body;
    const first = await call(`/Monitors/${monitor.id}`);
    const etag = first.headers.get("etag")!;
    const population = await call(`/Monitors/${monitor.id}/Populations`, { method: "POST", body: { name: "plants", assetType: "Plant" } });
    expect(population.status, population.text).toBe(201);
    const item = await call(`/Monitors/${monitor.id}/Populations/${population.body.id}/Items`, {
      method: "POST",
      body: { assetReference: { id: await plant() } },
    });
    expect(item.status, item.text).toBe(201);
    const revalidated = await call(`/Monitors/${monitor.id}`, { headers: { "if-none-match": etag } });
    expect(revalidated.status).toBe(200);
    expect(revalidated.body.populations[0].items).toHaveLength(1);
    const stale = await call(`/Monitors/${monitor.id}/Populations/${population.body.id}`, {
      method: "DELETE",
      headers: { "if-match": etag },
    });
    expect(stale.status).toBe(412);
    const removed = await call(`/Monitors/${monitor.id}/Populations/${population.body.id}`, {
      method: "DELETE",
      headers: { "if-match": revalidated.headers.get("etag")! },
    });
    expect(removed.status, removed.text).toBe(204);
    expect((await call(`/Monitors/${monitor.id}`)).body.populations).toEqual([]);
    expect((await eventsOf(monitor.id)).filter((e) => e === "monitor:updated")).toHaveLength(3);
  });

  it("a monitor job's end is an event subscribers can hear (monitorJob updated, with its status), written once", async () => {
    const monitor = (
      await call("/Monitors", { method: "POST", body: { name: unique("monitor"), modelId: (await model()).id, status: "Active" } })
    ).body;
    const job = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    expect(job.status, job.text).toBe(201);
    const token = job.body.statusToken as string;
    const put = (status: string) =>
      call(`/MonitorJobs/${job.body.id}/${status}`, { method: "PUT", anonymous: true, headers: { authorization: `Bearer ${token}` } });
    expect((await put("InProgress")).status).toBe(200);
    expect((await put("Succeeded")).status).toBe(200);
    const { results } = await env.DB.prepare(
      "SELECT action, payload FROM outbox WHERE entity_kind = 'monitorJob' AND entity_id = ?1 ORDER BY seq",
    )
      .bind(job.body.id)
      .all<{ action: string; payload: string }>();
    expect(results.map((r) => [r.action, JSON.parse(r.payload).status])).toEqual([
      ["updated", "InProgress"],
      ["updated", "Succeeded"],
    ]);
    // The same end again changes nothing and writes no second event.
    await put("Succeeded");
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE entity_kind = 'monitorJob' AND entity_id = ?1")
        .bind(job.body.id)
        .first<{ n: number }>())!.n,
    ).toBe(2);
  });
});
