/**
 * The headers every answer carries, whichever way it was made (issue 22, reads: CORS and the session
 * bookmark are set once on the final response instead of through copies): a read, a route's error,
 * a path without a route, an answer passed through from the assets binding, and a preflight. CORS's
 * Allow-Origin and Expose-Headers go only to an allowed Origin: a browser reads them on nothing else.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { createPropertyDefinition } from "../support/factories/properties";
import { call, tokenFor } from "../support/http";

const ORIGIN = "https://app.example";

function expectCors(headers: Headers, origin: string | null) {
  expect(headers.get("access-control-allow-origin")).toBe(origin);
  expect(headers.get("access-control-expose-headers")?.toLowerCase()).toContain("x-session-bookmark");
  expect(headers.get("vary")).toBe("Origin");
  expect(headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
}

describe("response headers", () => {
  it("a read: its ETag, the API version, the session bookmark, CORS and the request id", async () => {
    const definition = await createPropertyDefinition();
    const res = await call(`/PropertyDefinitions/${definition.id}`, { headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toMatch(/^"/);
    expect(res.headers.get("api-supported-versions")).toBe("1.0");
    expect(res.headers.get("x-session-bookmark")).toBeTruthy();
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expectCors(res.headers, ORIGIN);
  });

  it("without an Origin (a phone's app, a server) no CORS headers but Vary: the answer is about 250 bytes smaller", async () => {
    const res = await call("/Categories");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
    expect(res.headers.get("vary")).toBe("Origin");
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("an Origin that CORS_ORIGINS does not allow gets no CORS headers but Vary; an allowed one gets them", async () => {
    const app = createApp();
    const headersFor = async (origin: string) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request("https://api.test/Categories", { headers: { origin, authorization: `Bearer ${await tokenFor()}` } }),
        { ...env, CORS_ORIGINS: "https://allowed.example, https://other.example" },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(200);
      return res.headers;
    };
    const refused = await headersFor("https://evil.example");
    expect(refused.get("access-control-allow-origin")).toBeNull();
    expect(refused.get("access-control-expose-headers")).toBeNull();
    expect(refused.get("vary")).toBe("Origin");
    expectCors(await headersFor("https://other.example"), "https://other.example");
  });

  it("a route's error keeps what the route had set before it failed (api-supported-versions)", async () => {
    const res = await call(`/PropertyDefinitions/${crypto.randomUUID()}`, { headers: { origin: ORIGIN } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("api-supported-versions")).toBe("1.0");
    expect(res.headers.get("x-request-id")).toBe((res.body as { requestId: string }).requestId);
    expectCors(res.headers, ORIGIN);
  });

  it("a path without a route", async () => {
    const res = await call("/NoSuchThing", { headers: { origin: ORIGIN } });
    expect(res.status).toBe(404);
    expectCors(res.headers, ORIGIN);
  });

  it("an answer passed through from the assets binding", async () => {
    const res = await call("/docs/assets/init.js", { anonymous: true, headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    expectCors(res.headers, ORIGIN);
  });

  it("a preflight is answered as before: 204, the allowed methods and headers, Vary on both", async () => {
    const res = await call("/Deviations", {
      method: "OPTIONS",
      anonymous: true,
      headers: { origin: ORIGIN, "access-control-request-method": "PUT" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(res.headers.get("access-control-allow-methods")).toBe("GET,POST,PUT,PATCH,DELETE,OPTIONS");
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("if-match");
    expect(res.headers.get("access-control-max-age")).toBe("86400");
    expect(res.headers.get("vary")).toBe("Origin, Access-Control-Request-Headers");
  });
});
