/**
 * No secret sits in the Idempotency store (issue 20, section 3): the stored answer of a config create
 * showed its run option values in plain text for 24 hours, and an External monitor execution's the
 * status token. Such answers are sealed at rest and replayed exactly as first sent.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IdempotencyStore, StoredResponse } from "../../durable-objects/idempotency-store";
import { call } from "../support/http";
import { bearer, monitoredPlants } from "../monitors/support";
import { configBody, owner } from "./support";

const SECRET = "hunter2-do-not-leak";

function storeOf(userId: string): DurableObjectStub<IdempotencyStore> {
  return env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(userId)) as unknown as DurableObjectStub<IdempotencyStore>;
}

/** Every entry of a user's Idempotency store, as stored. */
async function storedEntries(userId: string): Promise<Map<string, { state: string; response?: StoredResponse }>> {
  return runInDurableObject(storeOf(userId), async (_instance, state) =>
    state.storage.list<{ state: string; response?: StoredResponse }>(),
  );
}

describe("answers with secrets in the Idempotency store", () => {
  it("seals a config create's answer (run option values) and replays it byte for byte", async () => {
    const key = `create-${crypto.randomUUID()}`;
    const body = configBody({ runOptions: { SECRET_TOKEN: SECRET, THRESHOLD: "0.8" } });
    const first = await call("/JobConfigurations", { method: "POST", body, user: owner, headers: { "idempotency-key": key } });
    expect(first.status, first.text).toBe(201);
    expect(first.body.runOptions.SECRET_TOKEN).toBe(SECRET);

    const entry = (await storedEntries(owner.id!)).get(key);
    expect(entry?.state).toBe("done");
    expect(entry?.response?.sealed).toBe(true);
    expect(JSON.stringify(entry)).not.toContain(SECRET);
    expect(JSON.stringify(entry)).not.toContain("SECRET_TOKEN");

    const replay = await call("/JobConfigurations", { method: "POST", body, user: owner, headers: { "idempotency-key": key } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get("location")).toBe(first.headers.get("location"));
  });

  it("seals an External monitor execution's status token", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const user = { id: `monitor-runner-${crypto.randomUUID().slice(0, 8)}`, name: "Runner" };
    const key = `run-${crypto.randomUUID()}`;
    const first = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST", user, headers: { "idempotency-key": key } });
    expect(first.status, first.text).toBe(201);
    const token = first.body.statusToken as string;
    expect(token).toMatch(/^monitorjob\./);

    const entry = (await storedEntries(user.id)).get(key);
    expect(entry?.response?.sealed).toBe(true);
    expect(JSON.stringify(entry)).not.toContain(token);
    expect(JSON.stringify(entry)).not.toContain(token.split(".").at(-1));

    const replay = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST", user, headers: { "idempotency-key": key } });
    expect(replay.text).toBe(first.text);
    expect(
      (await call(`/MonitorJobs/${first.body.id}/InProgress`, { method: "PUT", headers: bearer(replay.body.statusToken) })).status,
    ).toBe(200);
  });

  it("keeps answers without secrets as they were, and says so when a sealed answer can no longer be opened", async () => {
    const user = { id: `category-user-${crypto.randomUUID().slice(0, 8)}`, name: "Plain" };
    const plainKey = `category-${crypto.randomUUID()}`;
    const categoryBody = { name: `cat ${crypto.randomUUID().slice(0, 8)}` };
    const category = await call("/Categories", {
      method: "POST",
      body: categoryBody,
      user,
      headers: { "idempotency-key": plainKey },
    });
    expect(category.status, category.text).toBe(201);
    // Stored as the app answered it; the Worker's entry adds the trailing newline to every answer, a replay's too.
    expect((await storedEntries(user.id)).get(plainKey)?.response).toMatchObject({ body: category.text.replace(/\n$/, "") });
    const replayed = await call("/Categories", {
      method: "POST",
      body: categoryBody,
      user,
      headers: { "idempotency-key": plainKey },
    });
    expect(replayed.text).toBe(category.text);

    const key = `lost-key-${crypto.randomUUID()}`;
    const body = configBody();
    const first = await call("/JobConfigurations", { method: "POST", body, user: owner, headers: { "idempotency-key": key } });
    expect(first.status).toBe(201);
    // As after the ring dropped the key version the answer was sealed under.
    await runInDurableObject(storeOf(owner.id!), async (_instance, state) => {
      const entry = (await state.storage.get<{ response: StoredResponse }>(key))!;
      await state.storage.put(key, {
        ...entry,
        response: { ...entry.response, body: entry.response.body.replace(/^v[A-Za-z0-9]+\./, "vgone.") },
      });
    });
    const replay = await call("/JobConfigurations", { method: "POST", body, user: owner, headers: { "idempotency-key": key } });
    expect(replay.status).toBe(409);
    expect(replay.body.detail).toContain(first.headers.get("location"));
    expect(replay.text).not.toContain(SECRET);
  });
});
