/**
 * Issue 35: the original client's Signals calls (ZEVIT-AIH-SDK 0.5.13, AIH_SDK/Signals) as it sends
 * them: api-version 1.2; `Channels` posted one by one and listed as a bare array, each with its
 * channelNumber; `ChannelTypes`, `DataOrigins`, `ChannelAvailabilities` read; `signals` posted one
 * object at a time, `signals/bulk` a list (the client ignores a body it cannot read); and
 * `Channel.get_signals(from_millis)`: GET signals with one `ChannelNumbers` per channel and `TimestampFrom`.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createPlantTree, unique } from "../support/factories/work";
import { at, BUILT_IN } from "./support";

const v12 = { "api-version": "1.2" };

describe("Signals, as the original client calls it", () => {
  it("reads the catalogues and posts channels, then signals one by one and in bulk, and reads them by ChannelNumbers", async () => {
    for (const path of ["/ChannelTypes", "/DataOrigins", "/ChannelAvailabilities", "/Channels"]) {
      const res = await call(path, { headers: v12 });
      expect(res.status, `${path} ${res.text}`).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
    }
    const tree = await createPlantTree();
    const posted = [];
    for (const name of [unique("PT"), unique("PT")]) {
      const res = await call("/Channels", {
        method: "POST",
        headers: v12,
        body: { name, assetId: tree.equipment.id, channelTypeId: BUILT_IN.pressure },
      });
      expect(res.status, res.text).toBe(201);
      expect(typeof res.body.id).toBe("string");
      expect(Number.isInteger(res.body.channelNumber)).toBe(true);
      posted.push(res.body);
    }
    const [a, b] = posted;
    const one = await call("/signals", {
      method: "POST",
      headers: v12,
      body: { channelNumber: a.channelNumber, timestamp: at("2026-05-01T00:00:00Z"), value: 3.2 },
    });
    expect(one.status, one.text).toBe(201);
    const bulk = await call("/signals/bulk", {
      method: "POST",
      headers: v12,
      body: [
        { channelNumber: a.channelNumber, timestamp: at("2026-05-01T00:01:00Z"), value: 3.3 },
        { channelNumber: b.channelNumber, timestamp: at("2026-05-01T00:00:00Z"), value: 7.1 },
      ],
    });
    expect(bulk.status, bulk.text).toBe(201);
    const from = at("2026-05-01T00:00:30Z");
    const read = await call(`/signals?ChannelNumbers=${a.channelNumber}&ChannelNumbers=${b.channelNumber}&TimestampFrom=${from}`, {
      headers: v12,
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual([{ channelNumber: a.channelNumber, channelId: a.id, timestamp: at("2026-05-01T00:01:00Z"), value: 3.3 }]);
    // The paths in lower case, as an ASP.NET server matched them.
    expect((await call(`/channels/${a.id}`, { headers: v12 })).status).toBe(200);
    // The older base class's 1.0 is accepted on Signals' own resources.
    expect((await call("/ChannelTypes", { headers: { "api-version": "1.0" } })).status).toBe(200);
  });

  it("describes Channel and Signal in swagger/1.2/swagger.json", async () => {
    const doc = await call("/swagger/1.2/swagger.json", { anonymous: true });
    expect(Object.keys(doc.body.components.schemas)).toEqual(
      expect.arrayContaining(["Channel", "ChannelType", "DataOrigin", "ChannelAvailability", "Signal"]),
    );
  });
});
