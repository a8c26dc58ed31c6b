/**
 * A monitor's model is given every asset of its population (issue 20, section 3): past 1,000 items
 * `populationAssetIds` used to hold the first 1,000 and the rest were never scored, with no word said.
 * Now the environment says how many there are, holds the ids only when it can hold them all, and the
 * model pages the rest from the API with its own job token.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { groupRecord, scriptGroup } from "../support/fake-host";
import { call } from "../support/http";
import { step } from "../dataprocessing/support";
import { bearer, monitoredPlants } from "./support";

const ITEMS = 1_234;

/** Adds population items straight to D1 (the API adds them one at a time), returning every asset id of the monitor. */
async function growPopulation(populationId: string, existing: string[], total: number): Promise<string[]> {
  const now = new Date().toISOString();
  const insert = env.DB.prepare(
    "INSERT INTO population_items (id, population_id, asset_id, asset_name, criticality, last_monitor_job_id, " +
      "created_at) VALUES (?1, ?2, ?3, NULL, NULL, NULL, ?4)",
  );
  const added = Array.from({ length: total - existing.length }, () => crypto.randomUUID());
  const statements = added.map((assetId) => insert.bind(crypto.randomUUID(), populationId, assetId, now));
  for (let i = 0; i < statements.length; i += 200) await env.DB.batch(statements.slice(i, i + 200));
  return [...existing, ...added].sort();
}

async function pageAll(path: string, token: string): Promise<string[]> {
  const ids: string[] = [];
  for (let skip = 0; ; skip += 1000) {
    const page = await call(`${path}?skip=${skip}&take=1000`, { headers: bearer(token) });
    expect(page.status, page.text).toBe(200);
    ids.push(...(page.body as string[]));
    if ((page.body as string[]).length < 1000) return ids;
  }
}

describe("a monitor's population past 1,000 items", () => {
  it(
    "gives an ACR model every asset: the count, no partial list, and every id paged with its job token; every item " + "is scored",
    async () => {
      const { monitor, plants } = await monitoredPlants("ACR", 1);
      const populationId = monitor.populations[0]!.id;
      const all = await growPopulation(
        populationId,
        plants.map((p) => p.id),
        ITEMS,
      );

      const run = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
      expect(run.status, run.text).toBe(201);
      const path = `/MonitorJobs/${run.body.id}/PopulationAssetIds`;
      expect(run.body.parameters).toMatchObject({ populationAssetCount: String(ITEMS), populationAssetIdsPath: path });
      // Never the first 1,000 passed off as the whole population.
      expect(run.body.parameters.populationAssetIds).toBeUndefined();

      const jobId = run.body.jobId as string;
      const chainId = (await call(`/Jobs/${jobId}`)).body.chainId as string;
      await step(chainId);
      const environment = (await groupRecord(`containergroup-${jobId}`))!.spec!.environment;
      expect(environment).toMatchObject({ populationAssetCount: String(ITEMS), populationAssetIdsPath: path });
      expect(environment.populationAssetIds).toBeUndefined();
      const token = environment.INTEGRITY_EDGE_JOB_TOKEN!;

      const paged = await pageAll(path, token);
      expect(paged).toEqual(all);
      const total = await call(`${path}?take=1&includeTotal=true`, { headers: bearer(token) });
      expect(total.headers.get("x-total-count")).toBe(String(ITEMS));

      // The model scores them all, in outputs of 1,000 (an output is at most 256 KiB), and every item gets its value.
      for (let i = 0; i < paged.length; i += 1000) {
        const posted = await call("/JobOutputs", {
          method: "POST",
          headers: bearer(token),
          body: { jobId, output: { criticality: paged.slice(i, i + 1000).map((assetId) => ({ assetId, criticality: 70 })) } },
        });
        expect(posted.status, posted.text).toBe(201);
      }
      await scriptGroup(`containergroup-${jobId}`, { phase: "succeeded", exitCode: 0 });
      await step(chainId);
      const ended = (await call(`/MonitorJobs/${run.body.id}`)).body;
      expect(ended).toMatchObject({ status: "Succeeded", errorMessage: null });
      const scored = await env.DB.prepare(
        "SELECT count(*) AS n FROM population_items WHERE population_id = ?1 AND criticality = 70 AND last_monitor_job_id = ?2",
      )
        .bind(populationId, run.body.id)
        .first<{ n: number }>();
      expect(scored!.n).toBe(ITEMS);
    },
  );

  it("lets only the monitor job's own tokens page its assets", async () => {
    const mine = await monitoredPlants("External", 2);
    const theirs = await monitoredPlants("External", 1);
    const run = await call(`/MonitorJobs/Execution/${mine.monitor.id}`, { method: "POST" });
    const other = await call(`/MonitorJobs/Execution/${theirs.monitor.id}`, { method: "POST" });
    // An External model gets the same variables in the execution's answer, and reads with its status token.
    expect(run.body.parameters).toMatchObject({
      populationAssetCount: "2",
      populationAssetIds: mine.plants
        .map((p) => p.id)
        .sort()
        .join(","),
    });
    const own = await call(`/MonitorJobs/${run.body.id}/PopulationAssetIds`, { headers: bearer(run.body.statusToken) });
    expect(own.status, own.text).toBe(200);
    expect(own.body).toEqual(mine.plants.map((p) => p.id).sort());
    const foreign = await call(`/MonitorJobs/${other.body.id}/PopulationAssetIds`, { headers: bearer(run.body.statusToken) });
    expect(foreign.status).toBe(403);
    expect(foreign.body.detail).toContain("its own run only");
    // A status token still reads nothing else.
    expect((await call(`/Monitors/${mine.monitor.id}`, { headers: bearer(run.body.statusToken) })).status).toBe(403);
  });
});
