/**
 * The rules of controller evaluation (issue 25): operators, missing data, the spec's controller shape,
 * validation of variables and of controllers' actions, what the evaluation cannot do named in the
 * job's error message, criticality, removed controllers, Plant and Organization items, the lists.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { groupRecord, scriptGroup } from "../support/fake-host";
import { step } from "../dataprocessing/support";
import { asset, count, outbox, run, watchedEquipment, workTemplate } from "./alarm-support";
import { bearer, definition } from "./support";
import { createPropertyDefinition } from "../support/factories/properties";
import { createDeviationType } from "../support/factories/work";

const controller = (name: string, operator: string, comparisonValue: number, extra: Record<string, unknown> = {}) => ({
  name,
  conditions: [{ variableName: "v", operator, comparisonValue }],
  ...extra,
});
const values = (assetId: string, vars: Record<string, number>) => ({
  variables: Object.entries(vars).map(([name, value]) => ({ assetId, name, value })),
});
async function alarmsOf(monitorId: string, assetId: string): Promise<string[]> {
  const items = (await call(`/Monitors/${monitorId}`)).body.populations.flatMap((p: { items: unknown[] }) => p.items) as {
    assetReference: { id: string };
    alarms: { controller: string }[];
  }[];
  return items
    .find((i) => i.assetReference.id === assetId)!
    .alarms.map((a) => a.controller)
    .sort();
}

describe("controller evaluation", () => {
  it("holds when every condition holds, with the spec's operators (GreaterThen as spelled, GreaterThan accepted)", async () => {
    const { monitor, assets } = await watchedEquipment(
      [
        controller("lt", "LessThan", 5),
        controller("le", "LessThanOrEqual", 5),
        controller("gt", "GreaterThen", 5),
        controller("gt2", "GreaterThan", 4.9),
        controller("ge", "GreaterThanOrEqual", 5),
        controller("eq", "Equal", 5),
        {
          name: "both",
          conditions: [
            { variableName: "v", operator: "GreaterThanOrEqual", comparisonValue: 5 },
            { variableName: "w", operator: "LessThan", comparisonValue: 1 },
          ],
        },
        { name: "none", conditions: [] },
      ],
      1,
    );
    const pump = assets[0]!.id;
    expect((await run(monitor.id, values(pump, { v: 5, w: 0.5 }))).done.status).toBe(200);
    expect(await alarmsOf(monitor.id, pump)).toEqual(["both", "eq", "ge", "gt2", "le"]);
    expect((await run(monitor.id, values(pump, { v: 4, w: 2 }))).done.status).toBe(200);
    expect(await alarmsOf(monitor.id, pump)).toEqual(["le", "lt"]);
  });

  it("a condition whose variable was not reported does not hold, unless the controller says alarmOnNoData", async () => {
    const { monitor, assets } = await watchedEquipment(
      [controller("plain", "GreaterThen", 1), controller("strict", "GreaterThen", 1, { alarmOnNoData: true })],
      2,
    );
    const [reported, silent] = assets.map((a) => a.id) as [string, string];
    await run(monitor.id, values(reported, { v: 0 }));
    expect(await alarmsOf(monitor.id, reported)).toEqual([]);
    expect(await alarmsOf(monitor.id, silent)).toEqual(["strict"]);
    const history = (await call(`/Monitors/PopulationItems?monitorIds=${monitor.id}&alarmState=alarm`)).body;
    expect(history.map((i: { assetReference: { id: string } }) => i.assetReference.id)).toEqual([silent]);
    const entry = (await call(`/Monitors/${monitor.id}/PopulationItems/${history[0].id}/Alarms`)).body[0];
    expect(entry.conditions).toEqual([{ variableName: "v", operator: "GreaterThen", comparisonValue: 1, value: null, holds: false }]);
  });

  it("takes a controller in the spec's shape alone: it enters alarms, does nothing else, and reads back as sent", async () => {
    const spec = { name: "Hot", conditions: [{ variableName: "temperature", operator: "GreaterThanOrEqual", comparisonValue: 80 }] };
    const { monitor, assets } = await watchedEquipment([spec], 1);
    expect(monitor.controllers).toEqual([spec]);
    await run(monitor.id, { variables: [{ assetId: assets[0]!.id, name: "temperature", value: 81 }] });
    expect(await alarmsOf(monitor.id, assets[0]!.id)).toEqual(["Hot"]);
    expect(await count("SELECT id FROM deviations WHERE origin_monitor_ref = ?1", monitor.id)).toBe(0);
    const alarm = await env.DB.prepare("SELECT deviation_id, work_item_id FROM monitor_alarms WHERE monitor_ref = ?1")
      .bind(monitor.id)
      .first();
    expect(alarm).toEqual({ deviation_id: null, work_item_id: null });
  });

  it("leaves the alarms of a controller the monitor no longer has", async () => {
    const { monitor, assets } = await watchedEquipment([controller("old", "GreaterThen", 1), controller("kept", "GreaterThen", 1)], 1);
    const pump = assets[0]!.id;
    await run(monitor.id, values(pump, { v: 5 }));
    expect(await alarmsOf(monitor.id, pump)).toEqual(["kept", "old"]);
    const current = await call(`/Monitors/${monitor.id}`);
    const saved = await call("/Monitors", {
      method: "PUT",
      headers: { "if-match": current.headers.get("etag")! },
      body: { ...current.body, controllers: [controller("kept", "GreaterThen", 1)] },
    });
    expect(saved.status, saved.text).toBe(200);
    await run(monitor.id, values(pump, { v: 5 }));
    expect(await alarmsOf(monitor.id, pump)).toEqual(["kept"]);
    const left = await outbox("alarm", "action = 'left' AND json_extract(payload, '$.monitor.id') = ?2", monitor.id);
    expect(left.map((e) => [e.payload.controller, e.payload.conditions])).toEqual([["old", []]]);
  });
});

describe("variables as reported", () => {
  it("refuses malformed entries with a 400 naming body.variables, as criticality", async () => {
    const { monitor, assets } = await watchedEquipment([controller("c", "GreaterThen", 1)], 1);
    const started = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    for (const bad of [
      { assetId: assets[0]!.id, name: "v", value: "high" },
      { assetId: assets[0]!.id, value: 2 },
      { assetId: 7, name: "v", value: 2 },
    ]) {
      const refused = await call(`/MonitorJobs/${started.body.id}/Succeeded`, {
        method: "PUT",
        headers: bearer(started.body.statusToken),
        body: { variables: [bad] },
      });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.errors[0]).toMatchObject({ field: "body.variables", rule: "variables" });
    }
    expect((await call(`/MonitorJobs/${started.body.id}`)).body.status).toBe("Started");
  });

  it("ignores variables for assets outside the monitor's populations and names them in the job's error message", async () => {
    const { monitor, assets } = await watchedEquipment([controller("c", "GreaterThen", 1)], 1);
    const stranger = crypto.randomUUID();
    const { done } = await run(monitor.id, {
      variables: [
        { assetId: assets[0]!.id, name: "v", value: 2 },
        { assetId: stranger, name: "v", value: 9 },
      ],
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.errorMessage).toContain("Variables ignored for 1 asset outside the monitor's populations");
    expect(done.body.errorMessage).toContain(stranger);
    expect(await alarmsOf(monitor.id, assets[0]!.id)).toEqual(["c"]);
  });

  it("reads variables from an ACR model's job outputs", async () => {
    const { monitor, assets } = await watchedEquipment([controller("c", "GreaterThen", 7)], 1, {}, "ACR");
    const started = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    expect(started.status, started.text).toBe(201);
    const jobId = started.body.jobId as string;
    const chainId = (await call(`/Jobs/${jobId}`)).body.chainId as string;
    await step(chainId);
    const token = (await groupRecord(`containergroup-${jobId}`))!.spec!.environment.INTEGRITY_EDGE_JOB_TOKEN!;
    const posted = await call("/JobOutputs", {
      method: "POST",
      headers: bearer(token),
      body: { jobId, output: values(assets[0]!.id, { v: 7.5 }) },
    });
    expect(posted.status, posted.text).toBe(201);
    await scriptGroup(`containergroup-${jobId}`, { phase: "succeeded", exitCode: 0, output: "done\n" });
    await step(chainId);
    expect((await call(`/MonitorJobs/${started.body.id}`)).body.status).toBe("Succeeded");
    expect(await alarmsOf(monitor.id, assets[0]!.id)).toEqual(["c"]);
  });
});

describe("controllers as saved", () => {
  it("refuses duplicate names and actions that do not fit the catalogue, naming each field", async () => {
    const def = await definition("External");
    const model = await call("/Models", {
      method: "POST",
      body: { name: "m", modelDefinitionName: def.name, modelDefinitionVersion: def.version, cpuCores: 1, memory: 1 },
    });
    const refused = await call("/Monitors", {
      method: "POST",
      body: {
        name: "bad",
        modelId: model.body.id,
        controllers: [
          controller("a", "GreaterThen", 1),
          controller("a", "LessThan", 1, {
            actions: {
              raiseDeviation: { typeId: crypto.randomUUID(), status: "nonsense" },
              createWorkItem: { workTemplateId: crypto.randomUUID() },
            },
            onLeave: { deviationStatus: "unheard-of" },
          }),
        ],
      },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.errors.map((e: { field: string; rule: string }) => `${e.field} ${e.rule}`).sort()).toEqual([
      "body.controllers.1.actions.createWorkItem.workTemplateId exists",
      "body.controllers.1.actions.raiseDeviation.status exists",
      "body.controllers.1.actions.raiseDeviation.typeId exists",
      "body.controllers.1.name unique",
      "body.controllers.1.onLeave.deviationStatus exists",
    ]);
    const unknownProperty = await call("/Monitors", {
      method: "POST",
      body: {
        name: "bad",
        modelId: model.body.id,
        controllers: [
          controller("a", "GreaterThen", 1, { actions: { raiseDeviation: { properties: [{ name: "NoSuchProperty", value: 1 }] } } }),
        ],
      },
    });
    expect(unknownProperty.status, unknownProperty.text).toBe(400);
    expect(unknownProperty.body.errors[0].field).toMatch(/^body\.controllers\.0\.actions\.raiseDeviation\.properties/);
    const unknownKey = await call("/Monitors", {
      method: "POST",
      body: { name: "bad", modelId: model.body.id, controllers: [controller("a", "GreaterThen", 1, { actions: { sendEmail: {} } })] },
    });
    expect(unknownKey.status).toBe(400);
  });

  it("enters the alarm when an action no longer fits at evaluation, and names the skipped action in the job's error message", async () => {
    const { monitor, assets } = await watchedEquipment([controller("c", "GreaterThen", 1, { actions: { raiseDeviation: {} } })], 1);
    // The type went away after the save (written past the API, as a later catalogue change would).
    const controllers = JSON.stringify([
      controller("c", "GreaterThen", 1, { actions: { raiseDeviation: { typeId: crypto.randomUUID() } } }),
    ]);
    await env.DB.prepare("UPDATE monitors SET controllers = ?1 WHERE id = ?2").bind(controllers, monitor.id).run();
    const { done } = await run(monitor.id, values(assets[0]!.id, { v: 3 }));
    expect(done.status, done.text).toBe(200);
    expect(done.body.errorMessage).toContain("controller 'c'.actions.raiseDeviation.typeId");
    expect(done.body.errorMessage).toContain("action skipped");
    expect(await alarmsOf(monitor.id, assets[0]!.id)).toEqual(["c"]);
    expect(await count("SELECT id FROM deviations WHERE origin_monitor_ref = ?1", monitor.id)).toBe(0);
  });
});

describe("actions", () => {
  it("sets the item's criticality over the model's for that job, the highest of several alarms", async () => {
    const { monitor, assets, itemOf } = await watchedEquipment(
      [
        controller("warn", "GreaterThen", 1, { actions: { setCriticality: { value: 70 } } }),
        controller("alarm", "GreaterThen", 2, { actions: { setCriticality: { value: 95 } } }),
      ],
      1,
    );
    const pump = assets[0]!.id;
    const { job } = await run(monitor.id, { ...values(pump, { v: 3 }), criticality: [{ assetId: pump, criticality: 20 }] });
    const item = (await call(`/Monitors/${monitor.id}`)).body.populations[0].items[0];
    expect(item).toMatchObject({ criticality: 95, band: "red", lastMonitorJobId: job.id });
    const history = (await call(`/Monitors/${monitor.id}/PopulationItems/${itemOf(pump)}/Criticality`)).body;
    expect(history).toEqual([{ monitorJobId: job.id, criticality: 95, band: "red", recordedAt: expect.any(String) }]);
  });

  it(
    "raises a Plant item's deviation on the plant (kept by a PUT that names no other asset) and an Organization " +
      "item's without an asset",
    async () => {
      const def = await definition("External");
      const model = await call("/Models", {
        method: "POST",
        body: { name: "m", modelDefinitionName: def.name, modelDefinitionVersion: def.version, cpuCores: 1, memory: 1 },
      });
      const plants = await call(`/Models/${model.body.id}/Populations`, { method: "POST", body: { name: "plants", assetType: "Plant" } });
      const orgs = await call(`/Models/${model.body.id}/Populations`, {
        method: "POST",
        body: { name: "owners", assetType: "Organization" },
      });
      const plant = await asset("plant");
      const org = await asset("organization");
      await call(`/Models/${model.body.id}/Populations/${plants.body.id}/Items`, {
        method: "POST",
        body: { assetReference: { id: plant.id } },
      });
      await call(`/Models/${model.body.id}/Populations/${orgs.body.id}/Items`, {
        method: "POST",
        body: { assetReference: { id: org.id } },
      });
      const monitor = await call("/Monitors", {
        method: "POST",
        body: {
          name: "sites",
          modelId: model.body.id,
          status: "Active",
          controllers: [controller("c", "GreaterThen", 1, { actions: { raiseDeviation: {} } })],
        },
      });
      expect(monitor.status, monitor.text).toBe(201);
      await run(monitor.body.id, { variables: [plant, org].map((a) => ({ assetId: a.id, name: "v", value: 2 })) });
      const { results } = await env.DB.prepare("SELECT id, description FROM deviations WHERE origin_monitor_ref = ?1")
        .bind(monitor.body.id)
        .all<{ id: string; description: string }>();
      expect(results).toHaveLength(2);
      const onPlant = await call(`/Deviations/${results.find((r) => r.description.includes(plant.id))!.id}`);
      expect(onPlant.body.assetReference).toEqual({
        mainSystem: null,
        designObject: null,
        equipment: null,
        plant: { id: plant.id, name: plant.name },
      });
      const listed = (await call(`/Deviations?plantNames=${encodeURIComponent(plant.name)}`)).body.map((d: { id: string }) => d.id);
      expect(listed).toContain(onPlant.body.id);
      const put = await call("/Deviations", {
        method: "PUT",
        headers: { "if-match": onPlant.headers.get("etag")! },
        body: { ...onPlant.body, description: "checked on site" },
      });
      expect(put.status, put.text).toBe(200);
      expect(put.body.assetReference.plant).toEqual({ id: plant.id, name: plant.name });
      expect(put.body.origin.kind).toBe("monitoring");
      const onOrg = (await call(`/Deviations/${results.find((r) => r.description.includes(org.id))!.id}`)).body;
      expect(onOrg.assetReference).toEqual({ mainSystem: null, designObject: null, equipment: null, plant: null });
      expect(onOrg.description).toContain(org.name);
    },
  );

  it("a deviation's type, status and properties come from the controller, checked like any deviation's", async () => {
    const template = await workTemplate();
    const severity = await createPropertyDefinition({ applicationRule: "Deviation", format: "integer" });
    const type = await createDeviationType({ propertyDefinitions: [{ id: severity.id }] });
    const wrong = await watchedEquipment([], 1).then(({ monitor }) => call(`/Monitors/${monitor.id}`));
    const refused = await call("/Monitors", {
      method: "PUT",
      body: {
        ...wrong.body,
        controllers: [
          controller("c", "GreaterThen", 1, {
            actions: { raiseDeviation: { typeId: type.id, properties: [{ name: severity.name, value: "very" }] } },
          }),
        ],
      },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.errors[0].field).toBe("body.controllers.0.actions.raiseDeviation.properties.0.value");
    const { monitor, assets } = await watchedEquipment(
      [
        controller("c", "GreaterThen", 1, {
          actions: {
            raiseDeviation: { typeId: type.id, status: "inProgress", properties: [{ name: severity.name, value: 4 }] },
            createWorkItem: { workTemplateId: template.id },
          },
        }),
      ],
      1,
    );
    await run(monitor.id, values(assets[0]!.id, { v: 2 }));
    const created = await outbox("deviation", "action = 'created' AND json_extract(payload, '$.origin.monitor.id') = ?2", monitor.id);
    expect(created).toHaveLength(1);
    expect(created[0]!.payload).toMatchObject({
      status: "inProgress",
      type: { id: type.id },
      properties: [{ name: severity.name, value: 4 }],
      workItemIds: [expect.any(String)],
      origin: { kind: "monitoring", controller: "c" },
    });
    const read = (await call(`/Deviations/${created[0]!.entity_id}`)).body;
    expect(read.properties).toEqual([{ name: severity.name, value: 4 }]);
    const filtered = await call(`/Deviations?properties=${encodeURIComponent(`${severity.name} eq 4`)}`);
    expect(filtered.body.map((d: { id: string }) => d.id)).toContain(read.id);
    const workItems = await outbox("workItem", "action = 'created' AND entity_id = ?2", (created[0]!.payload.workItemIds as string[])[0]);
    expect(workItems[0]!.payload).toMatchObject({ deviationIds: [created[0]!.entity_id], basedOn: [{ id: template.id, revision: 1 }] });
  });
});

describe("lists", () => {
  it("filters population items by alarm state and controller, and pages an item's history", async () => {
    const { monitor, assets, itemOf } = await watchedEquipment([controller("a", "GreaterThen", 1), controller("b", "GreaterThen", 5)], 3);
    const [one, two, three] = assets.map((a) => a.id) as [string, string, string];
    await run(monitor.id, {
      variables: [
        { assetId: one, name: "v", value: 6 },
        { assetId: two, name: "v", value: 2 },
        { assetId: three, name: "v", value: 0 },
      ],
    });
    const ids = async (query: string) =>
      ((await call(`/Monitors/PopulationItems?monitorIds=${monitor.id}&${query}`)).body as { assetReference: { id: string } }[])
        .map((i) => i.assetReference.id)
        .sort();
    expect(await ids("alarmState=alarm")).toEqual([one, two].sort());
    expect(await ids("alarmState=normal")).toEqual([three]);
    expect(await ids("alarmControllers=b")).toEqual([one]);
    const page = await call(`/Monitors/PopulationItems?monitorIds=${monitor.id}&take=1&includeTotal=true`);
    expect(page.body).toHaveLength(1);
    expect(page.headers.get("x-total-count")).toBe("3");
    expect((await call(`/Monitors/PopulationItems?monitorIds=${monitor.id}&alarmState=maybe`)).status).toBe(400);

    await run(monitor.id, { variables: [{ assetId: one, name: "v", value: 0 }] });
    const all = await call(`/Monitors/${monitor.id}/PopulationItems/${itemOf(one)}/Alarms?includeTotal=true`);
    expect(all.headers.get("x-total-count")).toBe("4");
    expect(all.body.slice(0, 2).map((e: { action: string }) => e.action)).toEqual(["left", "left"]);
    const entered = await call(`/Monitors/${monitor.id}/PopulationItems/${itemOf(one)}/Alarms?actions=entered&controllers=b&take=1`);
    expect(entered.body.map((e: { action: string; controller: string }) => [e.action, e.controller])).toEqual([["entered", "b"]]);
    expect((await call(`/Monitors/${monitor.id}/PopulationItems/${crypto.randomUUID()}/Alarms`)).status).toBe(404);
  });
});
