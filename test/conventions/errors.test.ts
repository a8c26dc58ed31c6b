import { describe, expect, it } from "vitest";
import { call } from "../support/http";

describe("problem details", () => {
  it("renders validation failures with every field problem and the request id", async () => {
    const res = await call("/Categories", {
      method: "POST",
      body: { name: "", extra: 1 },
      headers: { "x-request-id": "req-validation-1" },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("x-request-id")).toBe("req-validation-1");
    expect(res.body).toMatchObject({ code: "ValidationFailed", status: 400, requestId: "req-validation-1", instance: "/Categories" });
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toContain("body.name");
    expect(res.body.errors.every((e: { rule: string; message: string }) => e.rule && e.message)).toBe(true);
  });

  it("answers an unknown route with 404", async () => {
    const res = await call("/NoSuchThing");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: "NotFound" });
  });

  it("answers a known route with the wrong method with 405 and Allow", async () => {
    const res = await call("/Categories", { method: "PATCH", body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
    expect(res.headers.get("allow")).toContain("POST");
    expect(res.body).toMatchObject({ code: "MethodNotAllowed" });
  });

  it("answers a body over the limit with 413", async () => {
    const res = await call("/Categories", {
      method: "POST",
      rawBody: JSON.stringify({ name: "x".repeat(2_000_000) }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: "PayloadTooLarge" });
  });

  it("answers a body of another media type with 415", async () => {
    const res = await call("/Categories", {
      method: "POST",
      rawBody: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: "UnsupportedMediaType" });
  });

  it("answers malformed JSON with 400", async () => {
    const res = await call("/Categories", { method: "POST", rawBody: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
  });
});

describe("API versions", () => {
  it("announces the supported versions and accepts an absent header as the latest", async () => {
    const res = await call("/Categories");
    expect(res.status).toBe(200);
    expect(res.headers.get("api-supported-versions")).toBe("1.0");
  });

  it("accepts a supported version", async () => {
    const res = await call("/Categories", { headers: { "api-version": "1.0" } });
    expect(res.status).toBe(200);
  });

  it("rejects an unsupported version with 400 UnsupportedApiVersion", async () => {
    const res = await call("/Categories", { headers: { "api-version": "1.2" } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "UnsupportedApiVersion" });
    expect(res.headers.get("api-supported-versions")).toBe("1.0");
  });
});

describe("CORS", () => {
  it("answers a preflight without a token", async () => {
    const res = await call("/Categories", {
      method: "OPTIONS",
      anonymous: true,
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,idempotency-key",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("idempotency-key");
  });

  it("exposes the ETag and request id to browsers", async () => {
    const res = await call("/Categories", { headers: { origin: "https://app.example" } });
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("etag");
  });
});

describe("request ids", () => {
  it("generates one when the client sends none and echoes a well-formed one", async () => {
    const generated = await call("/health", { anonymous: true });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await call("/health", { anonymous: true, headers: { "x-request-id": "bad id with spaces" } });
    expect(bad.headers.get("x-request-id")).not.toBe("bad id with spaces");
  });
});
