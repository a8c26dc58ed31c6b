/**
 * Model and monitor parameters become the environment of the monitor's jobs (issue 32): the names the
 * service sets itself (a job's `jobId` and `INTEGRITY_EDGE_*`, a monitor job's `monitorId` and
 * population variables) and values holding a NUL are refused with a 400 naming the field and the
 * rule, as job configs' run options are, and nothing changes.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { definition, monitoredPlants } from "./support";

async function modelBody(overrides: Record<string, unknown> = {}) {
  const def = await definition("External");
  return {
    name: `model ${crypto.randomUUID().slice(0, 8)}`,
    modelDefinitionName: def.name,
    modelDefinitionVersion: def.version,
    cpuCores: 1,
    memory: 1,
    ...overrides,
  };
}

const fieldsAndRules = (body: { errors: { field: string; rule: string }[] }) => body.errors.map((e) => `${e.field} ${e.rule}`).sort();

describe("model and monitor parameters", () => {
  it("refuse the names the service sets for every job, and NUL values, when a model is created or replaced", async () => {
    const body = await modelBody({
      staticParameters: { jobId: "mine", INTEGRITY_EDGE_API_URL: "https://evil.example.net", REGION: "north" },
      configurableParameters: { INTEGRITY_EDGE_JOB_TOKEN: "x", monitorId: "MON-1", THRESHOLD: "0.5\u0000" },
    });
    const created = await call("/Models", { method: "POST", body });
    expect(created.status).toBe(400);
    expect(created.headers.get("content-type")).toContain("application/problem+json");
    expect(fieldsAndRules(created.body)).toEqual([
      "body.configurableParameters.INTEGRITY_EDGE_JOB_TOKEN reserved",
      "body.configurableParameters.THRESHOLD noNulCharacter",
      "body.configurableParameters.monitorId reserved",
      "body.staticParameters.INTEGRITY_EDGE_API_URL reserved",
      "body.staticParameters.jobId reserved",
    ]);
    expect(created.body.detail).toContain("'jobId' is set by the service for every job and cannot be a parameter");
    expect((await call(`/Models?searchText=${encodeURIComponent(body.name)}`)).body).toEqual([]);

    const saved = await call("/Models", { method: "POST", body: await modelBody({ staticParameters: { REGION: "north" } }) });
    expect(saved.status, saved.text).toBe(201);
    const replaced = await call("/Models", {
      method: "PUT",
      body: { ...(await modelBody()), id: saved.body.id, name: saved.body.name, staticParameters: { populationAssetIds: "a,b" } },
    });
    expect(replaced.status).toBe(400);
    expect(fieldsAndRules(replaced.body)).toEqual(["body.staticParameters.populationAssetIds reserved"]);
    expect((await call(`/Models/${saved.body.id}`)).body.staticParameters).toEqual({ REGION: "north" });
  });

  it("refuse them on a monitor's own configurable parameters too", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const before = (await call(`/Monitors/${monitor.id}`)).body;
    for (const [parameters, expected] of [
      [{ jobId: "1" }, "body.configurableParameters.jobId reserved"],
      [{ INTEGRITY_EDGE_OUTPUT_TYPE_ID: "1" }, "body.configurableParameters.INTEGRITY_EDGE_OUTPUT_TYPE_ID reserved"],
      [{ populationAssetCount: "0" }, "body.configurableParameters.populationAssetCount reserved"],
      [{ LIMIT: "\u0000" }, "body.configurableParameters.LIMIT noNulCharacter"],
    ] as const) {
      const put = await call("/Monitors", {
        method: "PUT",
        body: { id: monitor.id, name: before.name, modelId: before.modelId, status: before.status, configurableParameters: parameters },
      });
      expect(put.status, JSON.stringify(parameters)).toBe(400);
      expect(fieldsAndRules(put.body)).toEqual([expected]);
      const post = await call("/Monitors", {
        method: "POST",
        body: { name: `monitor ${crypto.randomUUID().slice(0, 8)}`, modelId: before.modelId, configurableParameters: parameters },
      });
      expect(post.status).toBe(400);
      expect(fieldsAndRules(post.body)).toEqual([expected]);
    }
    expect((await call(`/Monitors/${monitor.id}`)).body).toEqual(before);
  });

  it("still take ordinary names, and names that only look like the service's (another case)", async () => {
    const res = await call("/Models", {
      method: "POST",
      body: await modelBody({ staticParameters: { JOBID: "a", integrity_edge_mode: "b", MONITOR_ID: "c" } }),
    });
    expect(res.status, res.text).toBe(201);
  });
});
