import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sweepMediaOrphans } from "../../src/media/sweep";
import worker from "../../src/index";
import { createLogger } from "../../src/pkg/logger";
import { createPropertyDefinition } from "../support/factories/properties";
import { call } from "../support/http";
import { sample, uploadMedia } from "./support/media";

const log = createLogger("error");
const later = () => new Date(Date.now() + 2 * 60 * 60 * 1000);
const exists = async (key: string) => (await env.MEDIA.head(key)) !== null;

describe("the orphan sweep", () => {
  it("deletes objects older than an hour that no row names, and keeps the rest", async () => {
    const kept = await uploadMedia(sample("grey.jpg"), { name: "g.jpg", mimeType: "image/jpeg" });
    const orphan = `media/${crypto.randomUUID()}/original`;
    await env.MEDIA.put(orphan, "left by a crash");
    const definition = await createPropertyDefinition();
    await call(`/PropertyDefinitions/${definition.id}/InstructionImage`, {
      method: "PUT",
      body: { image: btoa(String.fromCharCode(...sample("restart.jpg"))) },
    });
    const orphanImage = `instruction-images/${definition.id}/${crypto.randomUUID()}`;
    await env.MEDIA.put(orphanImage, "replaced, but its delete failed");

    // Now: everything is younger than an hour, so nothing goes.
    await sweepMediaOrphans(env, new Date(), log);
    expect(await exists(orphan)).toBe(true);
    expect(await exists(orphanImage)).toBe(true);

    const [media, images] = await sweepMediaOrphans(env, later(), log);
    expect(media!.deleted).toEqual([orphan]);
    expect(images!.deleted).toEqual([orphanImage]);
    expect(await exists(orphan)).toBe(false);
    expect(await exists(orphanImage)).toBe(false);
    for (const size of kept.sizes.filter((s) => !s.isOriginal || s.name === "Original")) {
      expect(await exists(`media/${kept.id}/${size.name.toLowerCase()}`)).toBe(true);
    }
    expect((await call(`/PropertyDefinitions/${definition.id}/InstructionImage`)).status).toBe(200);
  });

  it("runs from the minute cron", async () => {
    const orphan = `media/${crypto.randomUUID()}/small`;
    await env.MEDIA.put(orphan, "left by a crash");
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: later().getTime() }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await exists(orphan)).toBe(false);
  });
});
