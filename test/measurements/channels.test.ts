/**
 * Issue 35: channels on the one resource contract (ETag, If-Match, whole-object PUT, events), their
 * catalogues as the original Signals client names them, and the rules of a channel's type and unit.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createAsset, createPlantTree, unique } from "../support/factories/work";
import { outboxActions } from "../support/factories/types";
import { BUILT_IN, createChannel } from "./support";

describe("channel catalogues", () => {
  it("lists the built-in channel types, data origins and availabilities; a type shows its units", async () => {
    const types = await call("/ChannelTypes");
    expect(types.status, types.text).toBe(200);
    const thickness = types.body.find((t: { id: string }) => t.id === BUILT_IN.thickness);
    expect(thickness).toMatchObject({ name: "Thickness", quantity: "thickness", units: ["mm", "in"], builtIn: true });
    const origins = (await call("/DataOrigins")).body.map((o: { name: string }) => o.name);
    expect(origins).toEqual(expect.arrayContaining(["Manual inspection", "Sensor", "Model"]));
    const availabilities = await call("/ChannelAvailabilities");
    expect(availabilities.body.find((a: { id: string }) => a.id === BUILT_IN.outOfService)).toMatchObject({ acceptsReadings: false });
  });

  it("creates, renames and deletes its own entries; a built-in one is never deleted, a used one is InUse", async () => {
    const created = await call("/DataOrigins", { method: "POST", body: { name: unique("Historian") } });
    expect(created.status, created.text).toBe(201);
    const etag = created.headers.get("etag")!;
    const renamed = await call("/DataOrigins", {
      method: "PUT",
      headers: { "if-match": etag },
      body: { ...created.body, name: unique("PI") },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const stale = await call("/DataOrigins", { method: "PUT", headers: { "if-match": etag }, body: { ...created.body, name: "x" } });
    expect(stale.status).toBe(412);
    const used = await createChannel({ dataOriginId: created.body.id });
    expect((await call(`/DataOrigins/${created.body.id}`, { method: "DELETE" })).status).toBe(409);
    expect((await call(`/Channels/${used.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/DataOrigins/${created.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/DataOrigins/${BUILT_IN.sensor}`, { method: "DELETE" })).status).toBe(409);
    const duplicate = await call("/ChannelTypes", { method: "POST", body: { name: "thickness", quantity: "thickness" } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.errors[0]).toMatchObject({ field: "body.name", rule: "unique" });
  });
});

describe("channels", () => {
  it("numbers a channel, answers it with its asset, plant and catalogue names, and writes its events", async () => {
    const a = await createChannel({ nominalThickness: 12.7, minimumThickness: 8 });
    const b = await createChannel();
    expect(b.channelNumber).toBeGreaterThan(a.channelNumber);
    expect(a).toMatchObject({
      unit: "mm",
      channelType: { id: BUILT_IN.thickness, name: "Thickness", quantity: "thickness" },
      dataOrigin: { id: BUILT_IN.manualInspection, name: "Manual inspection" },
      availability: { id: BUILT_IN.available, acceptsReadings: true },
      asset: { kind: "equipment" },
      analysis: null,
      readingCount: 0,
      alarmState: "normal",
    });
    const read = await call(`/Channels/${a.id}`);
    expect(read.body.plantId).toBe(a.plantId);
    expect(read.headers.get("etag")).toBe(a.etag);
    expect(await outboxActions("channel", a.id)).toEqual(["created"]);
  });

  it("replaces a channel with the whole object (If-Match), and refuses a stale one", async () => {
    const channel = await createChannel();
    const { etag, plantId: _p, ...body } = channel;
    const updated = await call("/Channels", {
      method: "PUT",
      headers: { "if-match": etag },
      body: { ...body, name: "CML 7 elbow", unit: "in" },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ name: "CML 7 elbow", unit: "in", channelNumber: channel.channelNumber });
    const stale = await call("/Channels", { method: "PUT", headers: { "if-match": etag }, body: { ...body, name: "again" } });
    expect(stale.status).toBe(412);
  });

  it("refuses a unit its type does not measure in, thickness fields on other types, a minimum above nominal, an organization", async () => {
    const tree = await createPlantTree();
    const base = { name: unique("ch"), assetId: tree.equipment.id };
    const wrongUnit = await call("/Channels", { method: "POST", body: { ...base, channelTypeId: BUILT_IN.pressure, unit: "mm" } });
    expect(wrongUnit.status).toBe(400);
    expect(wrongUnit.body.errors).toContainEqual(expect.objectContaining({ field: "body.unit", rule: "unit" }));
    const thicknessOnPressure = await call("/Channels", {
      method: "POST",
      body: { ...base, channelTypeId: BUILT_IN.pressure, nominalThickness: 10 },
    });
    expect(thicknessOnPressure.body.errors).toContainEqual(
      expect.objectContaining({ field: "body.nominalThickness", rule: "thicknessOnly" }),
    );
    const above = await call("/Channels", {
      method: "POST",
      body: { ...base, channelTypeId: BUILT_IN.thickness, nominalThickness: 10, minimumThickness: 12 },
    });
    expect(above.body.errors).toContainEqual(expect.objectContaining({ field: "body.minimumThickness", rule: "belowNominal" }));
    const organization = await createAsset("organization");
    const onOrganization = await call("/Channels", {
      method: "POST",
      body: { ...base, assetId: organization.id, channelTypeId: BUILT_IN.thickness },
    });
    expect(onOrganization.body.errors).toContainEqual(expect.objectContaining({ field: "body.assetId", rule: "assetKind" }));
    const pressure = await call("/Channels", { method: "POST", body: { ...base, channelTypeId: BUILT_IN.pressure } });
    expect(pressure.status, pressure.text).toBe(201);
    expect(pressure.body.unit).toBe("bar");
  });

  it("keeps an asset with channels (InUse)", async () => {
    const tree = await createPlantTree();
    await call("/Channels", {
      method: "POST",
      body: { name: unique("ch"), assetId: tree.designObject.id, channelTypeId: BUILT_IN.thickness },
    });
    const refused = await call(`/Assets/${tree.designObject.id}`, { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("channel");
  });

  it("lists channels by asset, plant and type on the shared engine", async () => {
    const a = await createChannel();
    const list = await call(`/Channels?plantIds=${a.plantId}&includeTotal=true`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([a.id]);
    expect(list.headers.get("x-total-count")).toBe("1");
    expect((await call(`/Channels?assetIds=${a.assetId}&channelTypeIds=${BUILT_IN.pressure}`)).body).toEqual([]);
    expect((await call("/Channels?alarmStates=loud")).status).toBe(400);
    expect((await call("/Channels?nextInspectionBefore=soon")).status).toBe(400);
  });

  it("records a channel as answered in its events and audit history: created, then only what a PUT changed", async () => {
    const channel = await createChannel();
    const read = await call(`/Channels/${channel.id}`);
    const renamed = await call("/Channels", { method: "PUT", body: { ...read.body, name: "CML renamed" } });
    expect(renamed.status, renamed.text).toBe(200);
    const history = await call(`/Channels/${channel.id}/History`);
    expect(history.status, history.text).toBe(200);
    const [updated, created] = history.body;
    expect(created).toMatchObject({
      action: "created",
      after: { id: channel.id, name: read.body.name, channelType: { name: "Thickness" } },
    });
    expect(updated.action).toBe("updated");
    expect(updated.changes.filter((c: { path: string }) => c.path !== "/updatedAt")).toEqual([
      { path: "/name", before: read.body.name, after: "CML renamed" },
    ]);
  });
});
