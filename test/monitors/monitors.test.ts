import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { dispatchDueRuns } from "../../src/pkg/schedule";
import { monitorScheduleKind, expireMonitorJobs } from "../../src/monitors/monitor-jobs/run";
import { createLogger } from "../../src/pkg/logger";
import { groupRecord, scriptGroup } from "../support/fake-host";
import { call } from "../support/http";
import { step } from "../dataprocessing/support";
import { createDataType, uploadFile } from "../support/factories/upload";
import { entityTypeWith } from "../support/factories/properties";

const log = createLogger("error", { test: "monitors" });

async function definition(location: "ACR" | "External" = "ACR") {
  const version = location === "ACR" ? (Math.random() < 0.5 ? "1.0" : "2.0") : `ext-${crypto.randomUUID().slice(0, 8)}`;
  const name = location === "ACR" ? "models/criticality" : `external/model-${crypto.randomUUID().slice(0, 8)}`;
  const existing = await call(`/ModelDefinitions/${encodeURIComponent(name)}/versions/${version}`);
  if (existing.status === 200) return existing.body;
  const res = await call("/ModelDefinitions", {
    method: "POST",
    body: { name, version, location, uri: location === "External" ? "https://models.example.com/score" : null },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function model(overrides: Record<string, unknown> = {}, location: "ACR" | "External" = "ACR") {
  const def = await definition(location);
  const res = await call("/Models", {
    method: "POST",
    body: {
      name: `model ${crypto.randomUUID().slice(0, 6)}`,
      modelDefinitionName: def.name,
      modelDefinitionVersion: def.version,
      cpuCores: 1,
      memory: 2,
      configurableParameters: { THRESHOLD: "0.5" },
      staticParameters: { REGION: "north" },
      ...overrides,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function asset(kind: string): Promise<{ id: string; name: string }> {
  // Main systems and equipment live under a plant in the asset catalogue.
  const parentId = kind === "plant" || kind === "organization" ? undefined : (await asset("plant")).id;
  const res = await call("/Assets", {
    method: "POST",
    body: { name: `${kind} ${crypto.randomUUID().slice(0, 6)}`, kind, ...(parentId ? { parentId } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

async function monitor(modelId: string, overrides: Record<string, unknown> = {}) {
  const res = await call("/Monitors", {
    method: "POST",
    body: { name: `monitor ${crypto.randomUUID().slice(0, 6)}`, modelId, ...overrides },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe("model definitions", () => {
  it("needs an image the host lists for ACR and a uri for External only, and is read by name and version", async () => {
    const missing = await call("/ModelDefinitions", { method: "POST", body: { name: "models/unknown", version: "9", location: "ACR" } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatchObject({ field: "body.name", rule: "exists" });
    const withUri = await call("/ModelDefinitions", {
      method: "POST",
      body: { name: "models/criticality", version: "1.0", location: "ACR", uri: "https://x.example" },
    });
    expect(withUri.body.errors?.[0]).toMatchObject({ field: "body.uri", rule: "forbidden" });
    const noUri = await call("/ModelDefinitions", { method: "POST", body: { name: "ext/m", version: "1", location: "External" } });
    expect(noUri.body.errors[0]).toMatchObject({ field: "body.uri", rule: "required" });
    const name = `external/versions-${crypto.randomUUID().slice(0, 6)}`;
    for (const version of ["1", "2"]) {
      expect(
        (await call("/ModelDefinitions", { method: "POST", body: { name, version, location: "External", uri: "https://m.example" } }))
          .status,
      ).toBe(201);
    }
    const versions = await call(`/ModelDefinitions/${encodeURIComponent(name)}/versions`);
    expect(versions.body.map((d: { version: string }) => d.version)).toEqual(["1", "2"]);
    expect((await call(`/ModelDefinitions/${encodeURIComponent(name)}/versions/2`)).body.version).toBe("2");
    expect((await call(`/ModelDefinitions/${encodeURIComponent(name)}/versions/2`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/ModelDefinitions/${encodeURIComponent(name)}/versions/2`)).status).toBe(404);
    expect(
      (await call("/ModelDefinitions", { method: "POST", body: { name, version: "1", location: "External", uri: "https://m.example" } }))
        .status,
    ).toBe(409);
  });
});

describe("models", () => {
  it("numbers 50 concurrent creates MOD-n, each number once", async () => {
    const def = await definition();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call("/Models", {
          method: "POST",
          body: { name: `concurrent ${i}`, modelDefinitionName: def.name, modelDefinitionVersion: def.version, cpuCores: 1, memory: 1 },
        }),
      ),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const ids = answers.map((a) => a.body.modelId as string);
    expect(ids.every((id) => /^MOD-\d+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(50);
  });

  it("moves Draft to Active to Deprecated and never back to Draft", async () => {
    const created = await model();
    expect(created.status).toBe("Draft");
    const put = (status: string) => call("/Models", { method: "PUT", body: { ...pick(created), status } });
    expect((await put("Active")).status).toBe(200);
    const back = await put("Draft");
    expect(back.status).toBe(400);
    expect(back.body.errors[0]).toMatchObject({ field: "body.status", rule: "transition" });
    expect((await put("Deprecated")).status).toBe(200);
  });

  it("accepts only assets of the population's type, by header or by path", async () => {
    const created = await model();
    const population = await call(`/Models/${created.id}/Populations`, { method: "POST", body: { name: "pumps", assetType: "Equipment" } });
    expect(population.status, population.text).toBe(201);
    const pump = await asset("equipment");
    const plant = await asset("plant");
    const byHeader = await call(`/Models/${created.id}/PopulationItems`, {
      method: "POST",
      headers: { populationId: population.body.id },
      body: { assetReference: { id: pump.id } },
    });
    expect(byHeader.status, byHeader.text).toBe(201);
    expect(byHeader.body.assetReference).toEqual({ id: pump.id, name: pump.name });
    const wrong = await call(`/Models/${created.id}/Populations/${population.body.id}/Items`, {
      method: "POST",
      body: { assetReference: { id: plant.id } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0]).toMatchObject({ field: "body.assetReference.id", rule: "assetType" });
    expect(wrong.body.detail).toContain("expected equipment");
  });
});

describe("model properties", () => {
  it("carries values of the Model properties linked to its entity type, checked by the property model", async () => {
    const { entityTypeId, definitions } = await entityTypeWith(
      [{ applicationRule: "Model", format: "integer" } as never, { applicationRule: "Model", format: "text" } as never],
      { appliesTo: "Model" },
    );
    const [depth, label] = definitions as { name: string }[];
    const created = await model({
      typeId: entityTypeId,
      properties: [
        { name: depth!.name, value: 7 },
        { name: label!.name, value: "pumps" },
      ],
    });
    expect(created.typeId).toBe(entityTypeId);
    expect(created.properties).toEqual(
      expect.arrayContaining([
        { name: depth!.name, value: 7 },
        { name: label!.name, value: "pumps" },
      ]),
    );
    const wrong = await call("/Models", {
      method: "PUT",
      body: { ...pick(created), typeId: entityTypeId, properties: [{ name: depth!.name, value: "not a number" }] },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0].field).toMatch(/^body\.properties/);
    const changed = await call("/Models", {
      method: "PUT",
      body: { ...pick(created), typeId: entityTypeId, properties: [{ name: depth!.name, value: 9 }] },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.properties).toEqual(expect.arrayContaining([{ name: depth!.name, value: 9 }]));
    const unknown = await call("/Models", {
      method: "PUT",
      body: { ...pick(created), typeId: entityTypeId, properties: [{ name: "noSuchProperty", value: 1 }] },
    });
    expect(unknown.status).toBe(400);
  });
});

function pick(m: Record<string, unknown>) {
  const {
    id,
    name,
    description,
    modelDefinitionName,
    modelDefinitionVersion,
    status,
    cpuCores,
    memory,
    gpuCores,
    gpuSku,
    configurableParameters,
    staticParameters,
  } = m;
  return {
    id,
    name,
    description,
    modelDefinitionName,
    modelDefinitionVersion,
    status,
    cpuCores,
    memory,
    gpuCores,
    gpuSku,
    configurableParameters,
    staticParameters,
  };
}

describe("monitors", () => {
  it("numbers 50 concurrent creates MON-n, each number once", async () => {
    const m = await model();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call("/Monitors", { method: "POST", body: { name: `concurrent ${i}`, modelId: m.id } })),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const ids = answers.map((a) => a.body.monitorId as string);
    expect(ids.every((id) => /^MON-\d+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(50);
  });

  it("inherits resources and configurable parameters unless it overrides them, and follows model changes", async () => {
    const m = await model();
    const inheriting = await monitor(m.id);
    expect(inheriting.monitorId).toMatch(/^MON-\d+$/);
    expect(inheriting).toMatchObject({
      cpuCores: 1,
      memory: 2,
      configurableParameters: { THRESHOLD: "0.5" },
      inherited: { cpuCores: true, memory: true, configurableParameters: true },
    });
    const overriding = await monitor(m.id, { cpuCores: 3, configurableParameters: { THRESHOLD: "0.9" } });
    expect(overriding).toMatchObject({
      cpuCores: 3,
      memory: 2,
      configurableParameters: { THRESHOLD: "0.9" },
      inherited: { cpuCores: false, memory: true, configurableParameters: false },
    });
    expect(
      (await call("/Models", { method: "PUT", body: { ...pick(m), cpuCores: 2, memory: 4, configurableParameters: { THRESHOLD: "0.7" } } }))
        .status,
    ).toBe(200);
    expect((await call(`/Monitors/${inheriting.id}`)).body).toMatchObject({
      cpuCores: 2,
      memory: 4,
      configurableParameters: { THRESHOLD: "0.7" },
    });
    expect((await call(`/Monitors/${overriding.id}`)).body).toMatchObject({
      cpuCores: 3,
      memory: 4,
      configurableParameters: { THRESHOLD: "0.9" },
    });
  });

  it("refuses static parameters, a bad CRON and a Deprecated model; accepts GreaterThan as GreaterThen", async () => {
    const m = await model();
    const staticTry = await call("/Monitors", {
      method: "POST",
      body: { name: "x", modelId: m.id, staticParameters: { REGION: "south" } },
    });
    expect(staticTry.status).toBe(400);
    expect(staticTry.body.errors[0]).toMatchObject({ field: "body.staticParameters", rule: "readOnly" });
    const badCron = await call("/Monitors", { method: "POST", body: { name: "x", modelId: m.id, triggerSchedule: "every minute" } });
    expect(badCron.body.errors[0].field).toBe("body.triggerSchedule");
    const created = await monitor(m.id, {
      controllers: [{ name: "wall", conditions: [{ variableName: "thickness", operator: "GreaterThan", comparisonValue: 4.5 }] }],
    });
    expect(created.controllers[0].conditions[0].operator).toBe("GreaterThen");
    await call("/Models", { method: "PUT", body: { ...pick(m), status: "Deprecated" } });
    const deprecated = await call("/Monitors", { method: "POST", body: { name: "x", modelId: m.id } });
    expect(deprecated.body.errors[0]).toMatchObject({ field: "body.modelId", rule: "status" });
  });

  it(
    "copies the model's populations on creation and changes them apart; duplicates with a new number, Draft, " + "criticality cleared",
    async () => {
      const m = await model();
      const population = await call(`/Models/${m.id}/Populations`, { method: "POST", body: { name: "plants", assetType: "Plant" } });
      const plant = await asset("plant");
      await call(`/Models/${m.id}/Populations/${population.body.id}/Items`, { method: "POST", body: { assetReference: { id: plant.id } } });
      const mon = await monitor(m.id, { status: "Active" });
      expect(mon.populations).toHaveLength(1);
      expect(mon.populations[0]).toMatchObject({
        name: "plants",
        assetType: "Plant",
        items: [{ assetReference: { id: plant.id }, criticality: null }],
      });
      expect(mon.populations[0].id).not.toBe(population.body.id);
      const other = await asset("plant");
      await call(`/Monitors/${mon.id}/Populations/${mon.populations[0].id}/Items`, {
        method: "POST",
        body: { assetReference: { id: other.id } },
      });
      expect((await call(`/Models/${m.id}`)).body.populations[0].items).toHaveLength(1);
      await env.DB.prepare("UPDATE population_items SET criticality = 75 WHERE population_id = ?1").bind(mon.populations[0].id).run();
      const copy = await call(`/Monitors/${mon.id}/Duplication`, { method: "POST" });
      expect(copy.status, copy.text).toBe(201);
      expect(copy.body.monitorId).not.toBe(mon.monitorId);
      expect(copy.body.status).toBe("Draft");
      expect(copy.body.populations[0].items).toHaveLength(2);
      expect(copy.body.populations[0].items.every((i: { criticality: number | null }) => i.criticality === null)).toBe(true);
      // Created as POST /Monitors creates one: subscribers and the change feed hear of the copy.
      const event = await env.DB.prepare("SELECT action, payload FROM outbox WHERE entity_kind = 'monitor' AND entity_id = ?1")
        .bind(copy.body.id)
        .all<{ action: string; payload: string }>();
      expect(event.results.map((r) => [r.action, JSON.parse(r.payload)])).toEqual([
        ["created", { id: copy.body.id, monitorId: copy.body.monitorId, name: copy.body.name }],
      ]);
    },
  );

  it("answers GET /Monitors/PopulationItems as table 4.2 shapes it, and needs assetType with assetIds", async () => {
    const m = await model();
    const population = await call(`/Models/${m.id}/Populations`, { method: "POST", body: { name: "systems", assetType: "MainSystem" } });
    const system = await asset("mainSystem");
    await call(`/Models/${m.id}/Populations/${population.body.id}/Items`, { method: "POST", body: { assetReference: { id: system.id } } });
    const mon = await monitor(m.id);
    const refused = await call(`/Monitors/PopulationItems?assetIds=${system.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain("assetType is required");
    const found = await call(`/Monitors/PopulationItems?assetIds=${system.id}&assetType=MainSystem`);
    expect(found.body).toEqual([
      {
        id: expect.any(String),
        monitor: { id: mon.id, name: mon.name },
        population: { id: mon.populations[0].id, name: "systems" },
        assetReference: { id: system.id, name: system.name },
        type: "MainSystem",
        criticality: null,
        band: null,
        lastMonitorJobId: null,
        alarms: [],
      },
    ]);
  });
});

describe("monitor jobs", () => {
  async function monitoredPlant(location: "ACR" | "External" = "ACR") {
    const m = await model({}, location);
    const population = await call(`/Models/${m.id}/Populations`, { method: "POST", body: { name: "plants", assetType: "Plant" } });
    const plants = [await asset("plant"), await asset("plant"), await asset("plant"), await asset("plant")];
    for (const plant of plants)
      await call(`/Models/${m.id}/Populations/${population.body.id}/Items`, { method: "POST", body: { assetReference: { id: plant.id } } });
    return { model: m, plants, monitor: await monitor(m.id, { status: "Active", configurableParameters: { THRESHOLD: "0.9" } }) };
  }

  it("runs an ACR model as a data processing job with its parameters and copies its end back, criticality and bands included", async () => {
    const { monitor: mon, plants } = await monitoredPlant();
    const run = await call(`/MonitorJobs/Execution/${mon.id}`, { method: "POST" });
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({
      status: "InProgress",
      parameters: {
        REGION: "north",
        THRESHOLD: "0.9",
        monitorId: mon.monitorId,
        populationAssetIds: plants
          .map((p) => p.id)
          .sort()
          .join(","),
      },
    });
    const jobId = run.body.jobId as string;
    const chainId = (await call(`/Jobs/${jobId}`)).body.chainId;
    await step(chainId);
    const record = await groupRecord(`containergroup-${jobId}`);
    expect(record?.spec).toMatchObject({
      image: "models/criticality:" + (await call(`/Models/${mon.modelId}`)).body.modelDefinitionVersion,
      cpuCores: 1,
      memoryGb: 2,
    });
    expect(record?.spec?.environment).toMatchObject({ REGION: "north", THRESHOLD: "0.9", monitorId: mon.monitorId });
    const token = record!.spec!.environment.INTEGRITY_EDGE_JOB_TOKEN!;
    const values = [59, 60, 79, 80];
    const posted = await call("/JobOutputs", {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: { jobId, output: { criticality: plants.map((p, i) => ({ assetId: p.id, criticality: values[i] })) } },
    });
    expect(posted.status, posted.text).toBe(201);
    await scriptGroup(`containergroup-${jobId}`, { phase: "succeeded", exitCode: 0, output: "scored 4 plants\n" });
    await step(chainId);
    const done = await call(`/MonitorJobs/${run.body.id}`);
    expect(done.body).toMatchObject({ status: "Succeeded", output: "scored 4 plants\n", errorMessage: null });
    const items = (await call(`/Monitors/${mon.id}`)).body.populations[0].items as {
      id: string;
      assetReference: { id: string };
      criticality: number;
      band: string;
      lastMonitorJobId: string;
    }[];
    const byAsset = new Map(items.map((i) => [i.assetReference.id, i]));
    expect(plants.map((p) => [byAsset.get(p.id)!.criticality, byAsset.get(p.id)!.band])).toEqual([
      [59, "green"],
      [60, "yellow"],
      [79, "yellow"],
      [80, "red"],
    ]);
    expect(items.every((i) => i.lastMonitorJobId === run.body.id)).toBe(true);
    const history = await call(`/Monitors/${mon.id}/PopulationItems/${byAsset.get(plants[3]!.id)!.id}/Criticality`);
    expect(history.body).toEqual([{ monitorJobId: run.body.id, criticality: 80, band: "red", recordedAt: expect.any(String) }]);
  });

  it("copies a failed job's error message", async () => {
    const { monitor: mon } = await monitoredPlant();
    const run = await call(`/MonitorJobs/Execution/${mon.id}`, { method: "POST" });
    const chainId = (await call(`/Jobs/${run.body.jobId}`)).body.chainId;
    await step(chainId);
    await scriptGroup(`containergroup-${run.body.jobId}`, { phase: "failed", exitCode: 2, error: "no sensor data" });
    await step(chainId);
    expect((await call(`/MonitorJobs/${run.body.id}`)).body).toMatchObject({ status: "Failed", errorMessage: "no sensor data" });
  });

  it("lets an External model's system set its job status with a token scoped to that run", async () => {
    const { monitor: mon, plants } = await monitoredPlant("External");
    const other = await monitoredPlant("External");
    const run = await call(`/MonitorJobs/Execution/${mon.id}`, { method: "POST" });
    expect(run.body.status).toBe("Started");
    const token = run.body.statusToken as string;
    const otherRun = await call(`/MonitorJobs/Execution/${other.monitor.id}`, { method: "POST" });
    const refused = await call(`/MonitorJobs/${otherRun.body.id}/Succeeded`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(403);
    expect((await call(`/Monitors/${mon.id}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(403);
    const progress = await call(`/MonitorJobs/${run.body.id}/InProgress`, { method: "PUT", headers: { authorization: `Bearer ${token}` } });
    expect(progress.status, progress.text).toBe(200);
    const done = await call(`/MonitorJobs/${run.body.id}/Succeeded`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}` },
      body: { criticality: [{ assetId: plants[0]!.id, criticality: 91 }] },
    });
    expect(done.body.status).toBe("Succeeded");
    const item = (await call(`/Monitors/${mon.id}`)).body.populations[0].items.find(
      (i: { assetReference: { id: string } }) => i.assetReference.id === plants[0]!.id,
    );
    expect(item).toMatchObject({ criticality: 91, band: "red", lastMonitorJobId: run.body.id });
    // The run has ended: its token with it.
    expect(
      (await call(`/MonitorJobs/${run.body.id}/Failed`, { method: "PUT", headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
  });

  it("creates one monitor job for a schedule tick delivered twice, and fails jobs past their deadline", async () => {
    const { monitor: mon } = await monitoredPlant("External");
    await call("/Monitors", {
      method: "PUT",
      body: { id: mon.id, name: mon.name, modelId: mon.modelId, status: "Active", triggerSchedule: "*/5 * * * *" },
    });
    const next = (await call(`/Monitors/${mon.id}`)).body.nextRunAt as string;
    expect(next).toMatch(/:(00|05|10|15|20|25|30|35|40|45|50|55):00/);
    const at = new Date(new Date(next).getTime() + 10_000);
    await Promise.all([dispatchDueRuns(env, at, [monitorScheduleKind], log), dispatchDueRuns(env, at, [monitorScheduleKind], log)]);
    const jobs = (await call(`/MonitorJobs?monitorIds=${mon.id}`)).body as { id: string; status: string; trigger: string }[];
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.trigger).toBe("schedule");
    await expireMonitorJobs(env, new Date(Date.now() + 3 * 3600_000));
    expect((await call(`/MonitorJobs/${jobs[0]!.id}`)).body).toMatchObject({
      status: "Failed",
      errorMessage: expect.stringContaining("deadline"),
    });
  });
});

describe("trigger events", () => {
  it("starts one monitor job when a deviation on a population's asset changes, however often the event is delivered", async () => {
    const { triggerMonitors } = await import("../../src/monitors/triggers");
    const m = await model({}, "External");
    const population = await call(`/Models/${m.id}/Populations`, { method: "POST", body: { name: "systems", assetType: "MainSystem" } });
    const system = await asset("mainSystem");
    await call(`/Models/${m.id}/Populations/${population.body.id}/Items`, { method: "POST", body: { assetReference: { id: system.id } } });
    const mon = await monitor(m.id, { status: "Active", triggerEvent: { kind: "deviationChanged" } });
    const quiet = await monitor(m.id, { status: "Active" });
    const deviation = await call("/Deviations", {
      method: "POST",
      body: { description: "leak", assetReference: { mainSystem: { id: system.id } } },
    });
    expect(deviation.status, deviation.text).toBe(201);
    const row = await env.DB.prepare("SELECT * FROM outbox WHERE entity_kind = 'deviation' AND entity_id = ?1")
      .bind(deviation.body.id)
      .first<Record<string, string>>();
    const event = {
      id: row!.id!,
      entityKind: "deviation" as const,
      entityId: deviation.body.id,
      action: "created" as const,
      occurredAt: row!.occurred_at!,
      actorId: null,
      requestId: null,
      payload: JSON.parse(row!.payload!),
    };
    await triggerMonitors(event, env, log);
    await triggerMonitors(event, env, log);
    const jobs = (await call(`/MonitorJobs?monitorIds=${mon.id}`)).body as { trigger: string }[];
    expect(jobs.map((j) => j.trigger)).toEqual(["event"]);
    expect((await call(`/MonitorJobs?monitorIds=${quiet.id}`)).body).toEqual([]);
  });
});

describe("file trigger events", () => {
  it("starts a monitor job when a file of its data type reaches status processed, not before", async () => {
    const { triggerMonitors } = await import("../../src/monitors/triggers");
    const dataType = await createDataType();
    const m = await model({}, "External");
    const mon = await monitor(m.id, { status: "Active", triggerEvent: { kind: "fileProcessed", dataTypeId: dataType.id } });
    const file = (await uploadFile(dataType.id, { name: "readings.csv", content: "a,b\n" })).body;
    const eventsOf = async () => {
      const { results } = await env.DB.prepare("SELECT * FROM outbox WHERE entity_kind = 'file' AND entity_id = ?1 ORDER BY seq")
        .bind(file.id)
        .all<Record<string, string>>();
      return results.map((r) => ({
        id: r.id!,
        entityKind: "file" as const,
        entityId: file.id,
        action: r.action as "created" | "updated",
        occurredAt: r.occurred_at!,
        actorId: null,
        requestId: null,
        payload: JSON.parse(r.payload!),
      }));
    };
    for (const event of await eventsOf()) await triggerMonitors(event, env, log);
    expect((await call(`/MonitorJobs?monitorIds=${mon.id}`)).body).toEqual([]);
    expect((await call("/Files/status", { method: "PUT", body: { id: file.id, status: "processed" } })).status).toBe(200);
    for (const event of await eventsOf()) await triggerMonitors(event, env, log);
    expect((await call(`/MonitorJobs?monitorIds=${mon.id}`)).body).toHaveLength(1);
  });
});

describe("lists", () => {
  it("lists models and monitors on the query engine: filters, order, paging, totals, unique values, property filters", async () => {
    const { entityTypeId, definitions } = await entityTypeWith([{ applicationRule: "Model", format: "integer" } as never], {
      appliesTo: "Model",
    });
    const depth = (definitions[0] as { name: string }).name;
    const tag = crypto.randomUUID().slice(0, 8);
    const deep = await model({ name: `list ${tag} deep`, typeId: entityTypeId, properties: [{ name: depth, value: 9 }], status: "Active" });
    const shallow = await model({ name: `list ${tag} shallow`, typeId: entityTypeId, properties: [{ name: depth, value: 2 }] });
    const found = await call(`/Models?searchText=${tag}&properties=${encodeURIComponent(`${depth} gt 5`)}`);
    expect(found.body.map((m: { id: string }) => m.id)).toEqual([deep.id]);
    const active = await call(`/Models?searchText=${tag}&statuses=Active&includeTotal=true`);
    expect(active.body.map((m: { id: string }) => m.id)).toEqual([deep.id]);
    expect(active.headers.get("x-total-count")).toBe("1");
    const ordered = await call(`/Models?searchText=${tag}&order=name%20desc&take=1`);
    expect(ordered.body.map((m: { id: string }) => m.id)).toEqual([shallow.id]);
    expect((await call("/Models?statuses=Retired")).status).toBe(400);
    const a = await monitor(deep.id, { name: `watch ${tag} a`, status: "Active" });
    await monitor(shallow.id, { name: `watch ${tag} b` });
    const ofDeep = await call(`/Monitors?modelIds=${deep.id}`);
    expect(ofDeep.body.map((m: { id: string }) => m.id)).toEqual([a.id]);
    const unique = await call(`/Monitors/UniqueValues?fieldNames=status&ids=${a.id}`);
    expect(unique.status, unique.text).toBe(200);
    expect(JSON.stringify(unique.body)).toContain("Active");
    const models = await call(`/Models/UniqueValues?fieldNames=status&ids=${deep.id},${shallow.id}`);
    expect(models.status, models.text).toBe(200);
    expect(JSON.stringify(models.body)).toContain("Draft");
    const definitionsList = await call("/ModelDefinitions?locations=ACR&includeTotal=true");
    expect(definitionsList.body.every((d: { location: string }) => d.location === "ACR")).toBe(true);
  });
});
