/**
 * The interface document's own spellings, as a client written from it sends them: each is taken as
 * today's spelling, answered with the canonical one, and two spellings naming different values are
 * a 400 naming the spelling.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createConfig } from "../dataprocessing/support";
import { call } from "../support/http";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

async function definition() {
  const name = `external/${unique("m")}`;
  const res = await call("/ModelDefinitions", {
    method: "POST",
    body: { name, version: "1", location: "External", uri: "https://models.example.com/score" },
  });
  expect(res.status, res.text).toBe(201);
  return { modelDefinitionName: name, modelDefinitionVersion: "1" };
}

describe("the spec's spellings", () => {
  it("runConfigs.gpusku (2.7) is gpuSku", async () => {
    const res = await call("/JobConfigurations", {
      method: "POST",
      body: {
        name: unique("gpu"),
        jobDefinition: "examples/hello:latest",
        runConfigs: { cpuCores: 1, memory: 1, gpuCores: 1, gpusku: "K80" },
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.runConfigs).toEqual({ cpuCores: 1, memory: 1, gpuCores: 1, gpuSku: "K80" });
    expect(res.body.runConfigs).not.toHaveProperty("gpusku");
    // And on a whole-object PUT, next to the read shape's gpuSku with the same value.
    const read = await call(`/JobConfigurations/${res.body.id}`);
    const put = await call("/JobConfigurations", {
      method: "PUT",
      body: { ...read.body, runConfigs: { ...read.body.runConfigs, gpusku: "K80" } },
    });
    expect(put.status, put.text).toBe(200);
    const plain = await call("/JobConfigurations", {
      method: "POST",
      body: { name: unique("nogpu"), jobDefinition: "examples/hello:latest", runConfigs: { cpuCores: 1, memory: 1, gpusku: null } },
    });
    expect(plain.status, plain.text).toBe(201);
    expect(plain.body.runConfigs).toEqual({ cpuCores: 1, memory: 1, gpuCores: null, gpuSku: null });
    const both = await call("/JobConfigurations", {
      method: "POST",
      body: {
        name: unique("both"),
        jobDefinition: "examples/hello:latest",
        runConfigs: { cpuCores: 1, memory: 1, gpuCores: 1, gpuSku: "K80", gpusku: "V100" },
      },
    });
    expect(both.status).toBe(400);
    expect(both.body.errors[0]).toMatchObject({ rule: "conflict" });
    expect(both.body.errors[0].field).toContain("gpusku");
  });

  it("a model's and a monitor's GPUSKU (2.8) is gpuSku", async () => {
    const model = await call("/Models", {
      method: "POST",
      body: { name: unique("model"), ...(await definition()), cpuCores: 1, memory: 1, gpuCores: 1, GPUSKU: "K80" },
    });
    expect(model.status, model.text).toBe(201);
    expect(model.body.gpuSku).toBe("K80");
    expect(model.body).not.toHaveProperty("GPUSKU");
    const monitor = await call("/Monitors", {
      method: "POST",
      body: { name: unique("monitor"), modelId: model.body.id, gpuCores: 1, GPUSKU: "K80" },
    });
    expect(monitor.status, monitor.text).toBe(201);
    expect(monitor.body.gpuSku).toBe("K80");
  });

  it("a monitor's model (2.8 Model*) is its id or an object with its id", async () => {
    const model = await call("/Models", {
      method: "POST",
      body: { name: unique("model"), ...(await definition()), cpuCores: 1, memory: 1 },
    });
    const byObject = await call("/Monitors", { method: "POST", body: { name: unique("monitor"), model: { id: model.body.id } } });
    expect(byObject.status, byObject.text).toBe(201);
    expect(byObject.body.modelId).toBe(model.body.id);
    const byId = await call("/Monitors", { method: "POST", body: { name: unique("monitor"), model: model.body.id } });
    expect(byId.status, byId.text).toBe(201);
    expect(byId.body.model.id).toBe(model.body.id);
    const other = await call("/Models", {
      method: "POST",
      body: { name: unique("model"), ...(await definition()), cpuCores: 1, memory: 1 },
    });
    const conflicting = await call("/Monitors", {
      method: "POST",
      body: { name: unique("monitor"), modelId: model.body.id, model: { id: other.body.id } },
    });
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.errors[0]).toMatchObject({ field: "body.model", rule: "conflict" });
    const neither = await call("/Monitors", { method: "POST", body: { name: unique("monitor") } });
    expect(neither.status).toBe(400);
    expect(neither.body.errors[0]).toMatchObject({ field: "body.modelId", rule: "required" });
    // A GET sent back whole, with the model moved by its object only: the object and modelId disagree.
    const read = await call(`/Monitors/${byObject.body.id}`);
    const moved = await call("/Monitors", {
      method: "PUT",
      body: { ...read.body, model: { ...read.body.model, id: other.body.id }, modelId: other.body.id },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.modelId).toBe(other.body.id);
  });

  it("POST /Jobs/ChainExecution takes run options for each job config as an array; only the first may hold any (rule 3)", async () => {
    const [a, b] = [await createConfig(), await createConfig()];
    const jobsBefore = (await env.DB.prepare("SELECT count(*) AS n FROM jobs").first<{ n: number }>())!.n;
    const refused = await call("/Jobs/ChainExecution", {
      method: "POST",
      body: { jobConfigIds: [a.id, b.id], runOptions: [{ X: "1" }, { Y: "2" }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ field: "body.runOptions.1", rule: "firstJobOnly" });
    expect(refused.body.detail).toContain("rule 3");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM jobs").first<{ n: number }>())!.n).toBe(jobsBefore);
    const ok = await call("/Jobs/ChainExecution", { method: "POST", body: { jobConfigIds: [a.id, b.id], runOptions: [{ X: "1" }, {}] } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.jobIds).toHaveLength(2);
    const withNull = await call("/Jobs/ChainExecution", {
      method: "POST",
      body: { jobConfigIds: [a.id, b.id], runOptions: [{ X: "1" }, null] },
    });
    expect(withNull.status, withNull.text).toBe(201);
    const tooMany = await call("/Jobs/ChainExecution", { method: "POST", body: { jobConfigIds: [a.id], runOptions: [{}, {}] } });
    expect(tooMany.status).toBe(400);
  });
});
