import { describe, expect, it } from "vitest";
import { call, tokenFor } from "./support/http";

describe("public routes", () => {
  it("serves the health check without a token", async () => {
    const res = await call("/health", { anonymous: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("authentication", () => {
  it("rejects a request without a token with 401 and WWW-Authenticate", async () => {
    const res = await call("/Categories", { anonymous: true });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm=/);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body).toMatchObject({ code: "Unauthorized", status: 401 });
  });

  it("accepts a valid token", async () => {
    const res = await call("/nope", { headers: { authorization: `Bearer ${await tokenFor()}` } });
    expect(res.status).toBe(404);
  });
});
