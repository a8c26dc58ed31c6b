import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { eventually, received, receiver, subscribe } from "./support";

describe("a deviation created reaches its subscriber, signed", () => {
  it("POST /Deviations → one signed webhook the package's own verifier accepts, and a succeeded delivery", async () => {
    const target = receiver();
    const subscription = await subscribe({ url: target.url, filters: [{ entityKind: "deviation", action: "created" }] });
    expect(subscription.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const deviation = await call("/Deviations", { method: "POST", body: { description: "Corrosion under insulation near the pump" } });
    expect(deviation.status, deviation.text).toBe(201);

    const [hook] = await eventually(async () => {
      const got = await received(target.path);
      expect(got).toHaveLength(1);
      return got;
    });
    const verified = new Webhook(subscription.secret).verify(hook!.body, hook!.headers) as {
      type: string;
      data: { entityId: string; eventId: string; entity: { description: string } };
    };
    expect(verified.type).toBe("deviation.created");
    expect(verified.data.entityId).toBe(deviation.body.id);
    expect(verified.data.entity.description).toBe("Corrosion under insulation near the pump");
    const event = await env.DB.prepare("SELECT id FROM outbox WHERE entity_id = ?1 AND action = 'created'")
      .bind(deviation.body.id)
      .first<{ id: string }>();
    expect(hook!.headers["webhook-id"]).toBe(event!.id);
    expect(verified.data.eventId).toBe(event!.id);
    expect(hook!.headers["content-type"]).toBe("application/json");

    const deliveries = await eventually(async () => {
      const res = await call(`/Subscriptions/${subscription.id}/Deliveries`);
      expect(res.body[0]?.status).toBe("succeeded");
      return res;
    });
    expect(deliveries.body).toHaveLength(1);
    expect(deliveries.body[0]).toMatchObject({
      eventType: "deviation.created",
      entityId: deviation.body.id,
      attempts: 1,
      lastResponse: { statusCode: 200, excerpt: "ok", error: null },
    });
  });
});
