/** Issue 12: per-user request limits with the Workers rate-limiting binding. */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { tokenFor } from "../support/http";

async function get(app: ReturnType<typeof createApp>, limits: "on" | "off", user: string) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request("https://api.test/Categories", { headers: { authorization: `Bearer ${await tokenFor({ id: user })}` } }),
    { ...env, RATE_LIMITS: limits, READ_LIMITER: env.TEST_LIMITER },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

describe("rate limits", () => {
  it("answers 429 with Retry-After once a user has spent the minute's reads, and counts users apart", async () => {
    const app = createApp();
    const user = `limited-${crypto.randomUUID()}`;
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await get(app, "on", user)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await get(app, "on", user);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(((await refused.json()) as { code: string }).code).toBe("TooManyRequests");
    expect((await get(app, "on", `other-${crypto.randomUUID()}`)).status).toBe(200);
  });

  it("never throttles when RATE_LIMITS is off (the local default)", async () => {
    const app = createApp();
    const user = `free-${crypto.randomUUID()}`;
    for (let i = 0; i < 6; i++) expect((await get(app, "off", user)).status).toBe(200);
  });
});
