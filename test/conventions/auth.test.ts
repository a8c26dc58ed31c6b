import { generateKeyPair, SignJWT } from "jose";
import { describe, expect, it, vi } from "vitest";
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
        `Bearer ${b64url({ alg: "none", typ: "JWT" })}.` +
        `${b64url({ sub: "x", iss: "integrity-edge-test", aud: "integrity-edge", exp: now() + 600, permissions: ["properties_read"] })}.`,
    ],
    ["signature by another key", async () => `Bearer ${await foreignKeyToken()}`],
    [
      "tampered payload",
      async () => {
        const [h, , s] = (await tokenFor({ permissions: [] })).split(".");
        const payload = b64url({
          sub: "x",
          iss: "integrity-edge-test",
          aud: "integrity-edge",
          exp: now() + 600,
          permissions: ["properties_write"],
        });
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

describe("a refused token says which check failed (issue 24)", () => {
  async function signed(claims: Record<string, unknown>, build: (jwt: SignJWT) => SignJWT = (jwt) => jwt): Promise<string> {
    const { importJWK } = await import("jose");
    const { env } = await import("cloudflare:workers");
    const jwt = new SignJWT({ permissions: ["properties_read"], ...claims })
      .setProtectedHeader({ alg: "ES256", kid: "test-key" })
      .setSubject("someone")
      .setIssuer(env.AUTH_ISSUER)
      .setAudience(env.AUTH_AUDIENCE)
      .setIssuedAt();
    return build(jwt).sign(await importJWK(JSON.parse(env.TEST_SIGNING_JWK), "ES256"));
  }

  const cases: [string, () => Promise<string>, RegExp][] = [
    ["signature", async () => foreignKeyToken(), /signature does not verify/],
    ["issuer", async () => tokenFor({}, { issuer: "someone-else" }), /issuer 'someone-else' is not the one this service trusts/],
    ["audience", async () => tokenFor({}, { audience: "another-api" }), /for the audience 'another-api', not this API's/],
    ["expired", async () => tokenFor({}, { expiresIn: now() - 3600 }), /has expired: its exp \(\d{4}-\d\d-\d\dT[^)]+\) is past/],
    [
      "not yet valid",
      async () => signed({}, (jwt) => jwt.setNotBefore(now() + 3600).setExpirationTime(now() + 7200)),
      /not valid yet: its nbf is \d{4}-/,
    ],
    ["format", async () => "not-a-jwt", /not a well-formed JWT/],
  ];

  it.each(cases)("%s", async (_name, token, detail) => {
    const res = await call("/Categories", { anonymous: true, headers: { authorization: `Bearer ${await token()}` } });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(detail);
    expect(res.body.detail).not.toBe("The token is not valid.");
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("says it in the request's log line too, and shows no key material", async () => {
    const { createExecutionContext, waitOnExecutionContext } = await import("cloudflare:test");
    const { env } = await import("cloudflare:workers");
    const { createApp } = await import("../../src/app");
    const lines: string[] = [];
    const spies = (["log", "info", "warn", "error"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" "))),
    );
    try {
      const ctx = createExecutionContext();
      const res = await createApp().fetch(
        new Request("https://api.test/Categories", { headers: { authorization: `Bearer ${await foreignKeyToken()}` } }),
        { ...env, LOG_LEVEL: "info" },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(401);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "request" && l.status === 401);
    expect(line).toMatchObject({ tokenRefused: "signature" });
    expect(String(line!.tokenRefusedBecause)).toMatch(/signature does not verify/);
    const { env: workerEnv } = await import("cloudflare:workers");
    const privateKey = (JSON.parse(workerEnv.TEST_SIGNING_JWK) as { d: string }).d;
    expect(lines.join("\n")).not.toContain(privateKey);
  });
});
