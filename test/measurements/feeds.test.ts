/**
 * Issue 35: what feeds the measurement service and what it feeds: inspection values entered in
 * activities become readings (through the events queue; here the feed is also run at once, as the
 * search tests run the indexer), and the standard index `platform-channels` is built from channels.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { feedActivity, feedInspection } from "../../src/measurements/feed/reconcile";
import { createLogger } from "../../src/pkg/logger";
import { call } from "../support/http";
import { createAsset, createPlantTree, unique } from "../support/factories/work";
import { indexPendingEvents, search } from "../search/support";
import { at, BUILT_IN, createChannel } from "./support";

const log = createLogger("error", { test: "feed" });

/** Runs the feed for an activity now (the queue runs it too, in its own time: both are idempotent). */
const feed = (activityId: string) => feedActivity(env, activityId, log);

async function activityTemplate(reading: Record<string, unknown>, format = "decimal") {
  const res = await call("/ActivityTemplates", {
    method: "POST",
    body: { displayName: unique("UT thickness"), inputTemplates: [{ name: "wall", format, order: 1, reading }] },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as string, inputId: res.body.inputTemplates[0].id as string, body: res.body };
}

async function workItem(assetId: string) {
  const res = await call("/WorkItems", { method: "POST", body: { displayName: unique("CML round"), designations: [{ id: assetId }] } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function activity(templateId: string, workItemId: string, inputId: string, value: number | null, date: string | null) {
  const res = await call("/Activities", {
    method: "POST",
    body: { basedOn: { id: templateId }, workItemId, dateOfActivity: date, inputs: [{ id: inputId, value }] },
  });
  expect(res.status, res.text).toBe(201);
  await feed(res.body.id);
  return res.body.id as string;
}

async function setValue(activityId: string, inputId: string, value: number | null) {
  const current = await call(`/Activities/${activityId}`);
  const res = await call("/Activities", {
    method: "PUT",
    body: { ...current.body, typeId: undefined, inputs: [{ id: inputId, value }] },
    headers: { "if-match": current.headers.get("etag") as string },
  });
  expect(res.status, res.text).toBe(200);
  await feed(activityId);
}

async function readings(channelId: string, includeVoided = false) {
  const res = await call(`/Channels/${channelId}/Readings?from=1900-01-01T00:00:00Z${includeVoided ? "&includeVoided=true" : ""}`);
  expect(res.status, res.text).toBe(200);
  return res.body.readings as { timestamp: number; value: number; source: string | null; voided?: { reason: string } }[];
}

async function fedInputs(activityId: string) {
  const res = await call(`/Activities/${activityId}/Readings`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe("inspection feeds the series", () => {
  it("a value entered in an activity becomes a reading of the named channel; a change replaces it, clearing voids it", async () => {
    const ch = await createChannel({ nominalThickness: 12.7, minimumThickness: 8.0 });
    const tpl = await activityTemplate({ channelId: ch.id });
    expect(tpl.body.inputTemplates[0].reading).toEqual({ channelId: ch.id, channelTypeId: null, unit: "mm" });
    const wi = await workItem(ch.assetId as string);
    const first = await activity(tpl.id, wi, tpl.inputId, 12.5, "2016-01-01T00:00:00Z");
    const source = `activity:${first}:${tpl.inputId}`;
    expect(await readings(ch.id)).toEqual([{ timestamp: at("2016-01-01T00:00:00Z"), value: 12.5, source }]);
    expect(await fedInputs(first)).toEqual([
      expect.objectContaining({ inputTemplateId: tpl.inputId, name: "wall", status: "recorded", channelId: ch.id, value: 12.5 }),
    ]);
    expect((await fedInputs(first))[0]).toMatchObject({ channelNumber: ch.channelNumber, timestamp: at("2016-01-01T00:00:00Z") });
    // Its event is the API's `readings` `recorded`, naming the activity and input as its source.
    const events = await env.DB.prepare(
      "SELECT action, actor_id, payload FROM outbox WHERE entity_kind = 'readings' AND json_extract(payload, '$.source') = ?1",
    )
      .bind(source)
      .all<{ action: string; actor_id: string | null; payload: string }>();
    expect(events.results.map((e) => e.action)).toEqual(["recorded"]);
    expect(JSON.parse(events.results[0]!.payload).channels).toEqual([
      expect.objectContaining({ channelId: ch.id, count: 1, lastValue: 12.5 }),
    ]);

    // A second inspection eight years later: the thickness analysis runs on inspection values.
    const second = await activity(tpl.id, wi, tpl.inputId, 10.6, "2024-01-01T00:00:00Z");
    let analysis = (await call(`/Channels/${ch.id}`)).body.analysis;
    expect(analysis).toMatchObject({ readingCount: 2, status: "corroding" });
    // 2016-01-01 → 2024-01-01 is 2922 days = 8.0 years of 365.25 days: (12.5 − 10.6) / 8 = 0.2375 mm/year.
    expect(analysis.longTermRate).toBeCloseTo(0.2375, 6);
    expect(analysis.remainingLifeYears).toBeCloseTo(2.6 / 0.2375, 4);

    // The inspector corrects the second value: the old reading is voided with a reason, the new one recorded.
    await setValue(second, tpl.inputId, 10.4);
    const all = await readings(ch.id, true);
    expect(all.filter((r) => !r.voided).map((r) => r.value)).toEqual([12.5, 10.4]);
    const voided = all.find((r) => r.voided);
    expect(voided).toMatchObject({ value: 10.6, source: `activity:${second}:${tpl.inputId}`, timestamp: at("2024-01-01T00:00:00Z") });
    expect(voided!.voided!.reason).toMatch(/changed from 10.6 to 10.4/);
    analysis = (await call(`/Channels/${ch.id}`)).body.analysis;
    expect(analysis.longTermRate).toBeCloseTo(2.1 / 8, 6);
    // Feeding again changes nothing (a replayed event).
    await feed(second);
    expect((await readings(ch.id, true)).length).toBe(3);

    // Clearing the value voids its reading; the activity keeps the (empty) input.
    await setValue(second, tpl.inputId, null);
    expect((await readings(ch.id)).map((r) => r.value)).toEqual([12.5]);
    expect((await fedInputs(second))[0]).toMatchObject({ status: "cleared", channelId: null, value: null });
    expect((await call(`/Channels/${ch.id}`)).body.analysis).toMatchObject({ readingCount: 1, status: "oneReading" });

    // Deleting an activity voids its readings too.
    const etag = (await call(`/Activities/${first}`)).headers.get("etag") as string;
    expect((await call(`/Activities/${first}`, { method: "DELETE", headers: { "if-match": etag } })).status).toBe(204);
    await feed(first);
    expect(await readings(ch.id)).toEqual([]);
    expect((await call(`/Activities/${first}/Readings`)).status).toBe(404);
  });

  it("the readings queue path: an activity's event feeds the channel without anyone calling the feed", async () => {
    const ch = await createChannel();
    const tpl = await activityTemplate({ channelId: ch.id });
    const wi = await workItem(ch.assetId as string);
    const res = await call("/Activities", {
      method: "POST",
      body: { basedOn: { id: tpl.id }, workItemId: wi, dateOfActivity: "2025-06-01T00:00:00Z", inputs: [{ id: tpl.inputId, value: 9.9 }] },
    });
    expect(res.status, res.text).toBe(201);
    const deadline = Date.now() + 15_000;
    while ((await readings(ch.id)).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await readings(ch.id)).toEqual([
      { timestamp: at("2025-06-01T00:00:00Z"), value: 9.9, source: `activity:${res.body.id}:${tpl.inputId}` },
    ]);
  });

  it("a channel type resolves on the asset the work item designates; a miss keeps the value and reports why", async () => {
    const tree = await createPlantTree();
    const create = (assetId: string, channelTypeId: string, name: string) =>
      call("/Channels", { method: "POST", body: { name: unique(name), assetId, channelTypeId } });
    const thickness = (await create(tree.equipment.id, BUILT_IN.thickness, "CML")).body;
    const pressure = (await create(tree.equipment.id, BUILT_IN.pressure, "PT")).body;
    expect(pressure.channelNumber).toBeGreaterThan(0);
    const tpl = await activityTemplate({ channelTypeId: BUILT_IN.thickness });
    expect(tpl.body.inputTemplates[0].reading).toEqual({ channelId: null, channelTypeId: BUILT_IN.thickness, unit: "mm" });

    const onEquipment = await activity(tpl.id, await workItem(tree.equipment.id), tpl.inputId, 7.25, "2025-01-01T00:00:00Z");
    expect(await readings(thickness.id)).toEqual([
      { timestamp: at("2025-01-01T00:00:00Z"), value: 7.25, source: `activity:${onEquipment}:${tpl.inputId}` },
    ]);

    // The design object has no thickness channel: the value stays on the activity, no series holds it, and the feed says why.
    const onDesignObject = await activity(tpl.id, await workItem(tree.designObject.id), tpl.inputId, 7.5, "2025-01-02T00:00:00Z");
    expect((await call(`/Activities/${onDesignObject}`)).body.inputs[0].value).toBe(7.5);
    const [miss] = await fedInputs(onDesignObject);
    expect(miss).toMatchObject({ status: "unresolved", channelId: null, value: 7.5 });
    expect(miss.problem).toMatch(/No channel of the input's channel type is on/);
    // The planner corrects the work item's asset: its event feeds the kept value.
    const wi = (await call(`/Activities/${onDesignObject}`)).body.workItemId as string;
    const item = await call(`/WorkItems/${wi}`);
    const moved = await call("/WorkItems", {
      method: "PUT",
      body: { ...item.body, designations: [{ id: tree.equipment.id }] },
      headers: { "if-match": item.headers.get("etag") as string },
    });
    expect(moved.status, moved.text).toBe(200);
    await feedInspection(
      {
        id: crypto.randomUUID(),
        entityKind: "workItem",
        entityId: wi,
        action: "updated",
        occurredAt: "",
        actorId: null,
        requestId: null,
        payload: null,
      },
      env,
      log,
    );
    expect((await fedInputs(onDesignObject))[0]).toMatchObject({ status: "recorded", channelId: thickness.id, problem: null });
    expect((await readings(thickness.id)).map((r) => r.value)).toEqual([7.25, 7.5]);

    // Two thickness channels on the asset: ambiguous, reported.
    await create(tree.equipment.id, BUILT_IN.thickness, "CML2");
    const twice = await activity(tpl.id, await workItem(tree.equipment.id), tpl.inputId, 7.0, "2025-01-03T00:00:00Z");
    expect((await fedInputs(twice))[0].problem).toMatch(/2 channels of the input's channel type/);
    // A value fed before stays in its channel: the second channel does not move or void it.
    await feed(onDesignObject);
    expect((await fedInputs(onDesignObject))[0]).toMatchObject({ status: "recorded", channelId: thickness.id });

    // A channel named directly that is not on the work item's asset.
    const other = await createAsset("equipment", tree.mainSystem.id);
    const named = await activityTemplate({ channelId: thickness.id });
    const elsewhere = await activity(named.id, await workItem(other.id), named.inputId, 7.1, "2025-01-04T00:00:00Z");
    expect((await fedInputs(elsewhere))[0]).toMatchObject({ status: "unresolved" });
    expect((await fedInputs(elsewhere))[0].problem).toMatch(/not on an asset the work item designates/);
    expect((await readings(thickness.id)).length).toBe(2);
  });

  it("an input template's reading is checked when the template is saved", async () => {
    const ch = await createChannel();
    const refused = async (reading: Record<string, unknown>, field: string, rule: string, format = "decimal") => {
      const res = await call("/ActivityTemplates", {
        method: "POST",
        body: { displayName: unique("bad"), inputTemplates: [{ name: "wall", format, order: 1, reading }] },
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    };
    await refused({ channelId: ch.id }, "body.inputTemplates.0.reading", "format", "text");
    await refused({ channelId: ch.id, unit: "in" }, "body.inputTemplates.0.reading.unit", "unit");
    await refused({ channelTypeId: BUILT_IN.thickness, unit: "bar" }, "body.inputTemplates.0.reading.unit", "unit");
    await refused({ channelId: ch.id, channelTypeId: BUILT_IN.thickness }, "body.inputTemplates.0.reading.channelId", "oneOf");
    await refused({}, "body.inputTemplates.0.reading.channelId", "oneOf");
    await refused({ channelId: crypto.randomUUID() }, "body.inputTemplates.0.reading.channelId", "exists");
    await refused({ channelTypeId: BUILT_IN.sensor }, "body.inputTemplates.0.reading.channelTypeId", "exists");
    // The same check on the input template routes.
    const tpl = await activityTemplate({ channelId: ch.id });
    const added = await call(`/ActivityTemplates/${tpl.id}/InputTemplates`, {
      method: "POST",
      body: { name: "other", format: "boolean", reading: { channelId: ch.id } },
    });
    expect(added.status, added.text).toBe(400);
    expect(added.body.errors).toContainEqual(expect.objectContaining({ field: "body.reading", rule: "format" }));
  });
});

const CHANNELS_INDEX = "00000000-0000-4000-8000-000000000005";

describe("the platform-channels index", () => {
  it("is fed from the service's channels: created, renamed and deleted", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const ch = await createChannel({ name: `CML ${tag} elbow`, dataOriginId: BUILT_IN.sensor });
    await indexPendingEvents();
    const found = await search(CHANNELS_INDEX, { text: `elbow ${tag}`, fields: ["*"] });
    expect(found.status, found.text).toBe(200);
    expect(found.body.results.map((r: { id: string }) => r.id)).toEqual([ch.id]);
    const channel = (await call(`/Channels/${ch.id}`)).body;
    expect(found.body.results[0].fields).toMatchObject({
      name: `CML ${tag} elbow`,
      channelType: "Thickness",
      dataOrigin: "Sensor",
      availability: "Available",
      asset: channel.asset.name,
      structureNodeReferences: expect.arrayContaining([channel.assetId, channel.plantId]),
    });
    expect(found.body.results[0].fields.mainSystems).toHaveLength(1);
    // The index lists itself as the platform's, and refuses a library file like every index with a source.
    const index = (await call(`/Indices/${CHANNELS_INDEX}`)).body;
    expect(index).toMatchObject({ source: "platform" });

    const renamed = await call("/Channels", {
      method: "PUT",
      body: { ...channel, name: `CML ${tag} tee` },
      headers: { "if-match": (await call(`/Channels/${ch.id}`)).headers.get("etag") as string },
    });
    expect(renamed.status, renamed.text).toBe(200);
    await indexPendingEvents();
    expect((await search(CHANNELS_INDEX, { text: `elbow ${tag}` })).body.total).toBe(0);
    expect((await search(CHANNELS_INDEX, { text: `tee ${tag}` })).body.total).toBe(1);

    const deleted = await call(`/Channels/${ch.id}`, { method: "DELETE" });
    expect(deleted.status, deleted.text).toBe(204);
    await indexPendingEvents();
    expect((await search(CHANNELS_INDEX, { text: `tee ${tag}` })).body.total).toBe(0);
  });
});
