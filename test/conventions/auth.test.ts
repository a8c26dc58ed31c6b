import { generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { call, tokenFor } from "../support/http";

const b64url = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
const now = () => Math.floor(Date.now() / 1000);

async function foreignKeyToken(): Promise<string> {
  const { privateKey } = await generateKeyPair("ES256");
  return new SignJWT({ permissions: ["properties_read"] })
    .setProtectedHeader({ alg: "ES256", kid: "test-key" })
    .setSubject("intruder")
    .setIssuer("integrity-edge-test")
    .setAudience("integrity-edge")
    .setExpirationTime("5m")
    .sign(privateKey);
}

describe("authentication rejects bad tokens with 401 and WWW-Authenticate", () => {
  const cases: [string, () => Promise<string>][] = [
    ["missing header", async () => ""],
    ["not a bearer scheme", async () => `Basic ${btoa("a:b")}`],
    ["malformed token", async () => "Bearer not-a-jwt"],
    ["expired", async () => `Bearer ${await tokenFor({}, { expiresIn: now() - 3600 })}`],
    ["wrong issuer", async () => `Bearer ${await tokenFor({}, { issuer: "someone-else" })}`],
    ["wrong audience", async () => `Bearer ${await tokenFor({}, { audience: "another-api" })}`],
    [
      "alg none",
      async () =>
        `Bearer ${b64url({ alg: "none", typ: "JWT" })}.${b64url({ sub: "x", iss: "integrity-edge-test", aud: "integrity-edge", exp: now() + 600, permissions: ["properties_read"] })}.`,
    ],
    ["signature by another key", async () => `Bearer ${await foreignKeyToken()}`],
    [
      "tampered payload",
      async () => {
        const [h, , s] = (await tokenFor({ permissions: [] })).split(".");
        const payload = b64url({ sub: "x", iss: "integrity-edge-test", aud: "integrity-edge", exp: now() + 600, permissions: ["properties_write"] });
        return `Bearer ${h}.${payload}.${s}`;
      },
    ],
  ];

  it.each(cases)("%s", async (_name, header) => {
    const authorization = await header();
    const res = await call("/Categories", { anonymous: true, headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="integrity-edge"/);
    expect(res.body).toMatchObject({ code: "Unauthorized", status: 401, type: "urn:integrity-edge:problem:Unauthorized" });
  });
});

describe("permissions", () => {
  it("answers 403 naming the permission a route requires", async () => {
    const res = await call("/Categories", { method: "POST", body: { name: "No rights" }, user: { permissions: ["properties_read"] } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: "Forbidden" });
    expect(res.body.detail).toContain("properties_write");
  });

  it("reads permissions from an OAuth scope claim too", async () => {
    const token = await new SignJWT({ scope: "properties_read other" })
      .setProtectedHeader({ alg: "ES256", kid: "test-key" })
      .setSubject("scope-user")
      .setIssuer("integrity-edge-test")
      .setAudience("integrity-edge")
      .setExpirationTime("5m")
      .sign(await (await import("jose")).importJWK(JSON.parse((await import("cloudflare:workers")).env.TEST_SIGNING_JWK), "ES256"));
    const res = await call("/Categories", { anonymous: true, headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });

  it("keeps the health check and the API reference public", async () => {
    for (const path of ["/health", "/openapi.json", "/docs"]) {
      const res = await call(path, { anonymous: true });
      expect(res.status, path).toBe(200);
    }
  });
});
