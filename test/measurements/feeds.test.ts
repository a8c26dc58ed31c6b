/**
 * Issue 35: what feeds the measurement service and what it feeds: the standard index
 * `platform-channels` built from the service's own channels.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { indexPendingEvents, search } from "../search/support";
import { BUILT_IN, createChannel } from "./support";

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
