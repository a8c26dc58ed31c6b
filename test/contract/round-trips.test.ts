/**
 * Every list page costs a fixed number of D1 round trips whatever the page size: no per-row query
 * (models, monitors and monitor jobs used to read one or two more rows per item, saved queries one
 * per index they name). The D1 binding is wrapped to count round trips (each statement run alone,
 * and each batch, is one), and the same list is read with take=1 and take=200 over at least three
 * items.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { createConfig } from "../dataprocessing/support";
import { STANDARD } from "../search/support";
import { countingDb } from "../support/counting-db";
import { call, tokenFor } from "../support/http";

const app = createApp();
const counted = countingDb(env.DB);
const countedEnv = { ...env, DB: counted.db } as typeof env;

/** Round trips of one GET, everything after the response included. */
async function tripsOf(path: string): Promise<{ trips: number; items: number }> {
  const authorization = `Bearer ${await tokenFor()}`;
  const warm = createExecutionContext();
  await app.fetch(new Request(`https://api.test${path}`, { headers: { authorization } }), countedEnv, warm);
  await waitOnExecutionContext(warm);
  counted.reset();
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`https://api.test${path}`, { headers: { authorization } }), countedEnv, ctx);
  await waitOnExecutionContext(ctx);
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return { trips: counted.count(), items: ((await res.json()) as unknown[]).length };
}

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

const monitorIds: string[] = [];
beforeAll(async () => {
  const def = { name: `external/${unique("m")}`, version: "1" };
  await call("/ModelDefinitions", { method: "POST", body: { ...def, location: "External", uri: "https://models.example.com/score" } });
  const plant = (await call("/Assets", { method: "POST", body: { name: unique("plant"), kind: "plant" } })).body.id;
  for (let i = 0; i < 3; i++) {
    const model = (
      await call("/Models", {
        method: "POST",
        body: { name: unique("model"), modelDefinitionName: def.name, modelDefinitionVersion: def.version, cpuCores: 1, memory: 1 },
      })
    ).body;
    const population = (await call(`/Models/${model.id}/Populations`, { method: "POST", body: { name: "plants", assetType: "Plant" } }))
      .body;
    await call(`/Models/${model.id}/Populations/${population.id}/Items`, { method: "POST", body: { assetReference: { id: plant } } });
    const monitor = (
      await call("/Monitors", { method: "POST", body: { name: unique("monitor"), modelId: model.id, triggerSchedule: "0 * * * *" } })
    ).body;
    const monitorPopulation = (
      await call(`/Monitors/${monitor.id}/Populations`, { method: "POST", body: { name: "plants", assetType: "Plant" } })
    ).body;
    await call(`/Monitors/${monitor.id}/Populations/${monitorPopulation.id}/Items`, {
      method: "POST",
      body: { assetReference: { id: plant } },
    });
    expect((await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" })).status).toBe(201);
    monitorIds.push(monitor.id);
    await call("/Deviations", { method: "POST", body: { description: `crack ${i}` } });
    await call("/WorkItems", { method: "POST", body: { displayName: unique("inspection") } });
    expect((await call(`/Jobs/Execution/${(await createConfig()).id}`, { method: "POST" })).status).toBe(201);
    await call("/Assets", { method: "POST", body: { name: unique("plant"), kind: "plant" } });
    // Saved queries over three different indices: each item names its index.
    const index = [STANDARD.deviations, STANDARD.equipment, STANDARD.workItems][i];
    expect(
      (await call("/Queries", { method: "POST", body: { name: unique("query"), index: { id: index }, queryObject: { text: "x" } } }))
        .status,
    ).toBe(201);
  }
});

describe("a list page costs the same round trips for 1 item as for 200", () => {
  for (const path of ["/Models", "/Monitors", "/Deviations", "/WorkItems", "/JobConfigurations", "/Jobs", "/Assets", "/Queries"]) {
    it(`GET ${path}`, async () => {
      const one = await tripsOf(`${path}?take=1`);
      const many = await tripsOf(`${path}?take=200`);
      expect(one.items).toBe(1);
      expect(many.items).toBeGreaterThanOrEqual(3);
      expect(many.trips, `${path}: ${one.trips} round trips for ${one.items}, ${many.trips} for ${many.items}`).toBe(one.trips);
      expect(many.trips).toBeLessThanOrEqual(6);
    });
  }

  it("GET /MonitorJobs (no paging: the original client reads them all)", async () => {
    const one = await tripsOf(`/MonitorJobs?monitorIds=${monitorIds[0]}`);
    const three = await tripsOf(`/MonitorJobs?monitorIds=${monitorIds.join(",")}`);
    expect([one.items, three.items]).toEqual([1, 3]);
    expect(three.trips).toBe(one.trips);
  });
});
