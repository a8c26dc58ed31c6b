/** Issue 12: data is stored exactly as answered, tokens expire, preconditions compare strongly. */
import { env } from "cloudflare:workers";
import { importJWK, SignJWT, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../src/pkg/permissions";
import { call } from "../support/http";

describe("strings that are not well-formed Unicode", () => {
  it("are refused with a 400 naming the field, and nothing is stored", async () => {
    const name = `lone ${crypto.randomUUID()} \ud800`;
    const res = await call("/Categories", {
      method: "POST",
      rawBody: JSON.stringify({ name }).replace("\\ud800", "\\ud800"),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.name", rule: "wellFormedUnicode" })]);
    const all = await call("/Categories");
    expect(all.body.some((c: { name: string }) => c.name.startsWith(name.slice(0, 40)))).toBe(false);
  });

  it("are refused in nested fields of a deviation, while paired surrogates (emoji) pass", async () => {
    const bad = await call("/Deviations", {
      method: "POST",
      body: { referenceId: `DEV-${crypto.randomUUID().slice(0, 8)}`, description: "crack \udc00 here" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe("body.description");
    const ok = await call("/Deviations", { method: "POST", body: { description: "corrosion 🔧 on flange" } });
    expect(ok.status).toBe(201);
    const read = await call(`/Deviations/${ok.body.id}`);
    expect(read.body.description).toBe("corrosion 🔧 on flange");
    expect(read.headers.get("etag")).toBe(ok.headers.get("etag"));
  });
});

describe("tokens", () => {
  const sign = async (build: (jwt: SignJWT) => SignJWT) => {
    const key = await importJWK(JSON.parse(env.TEST_SIGNING_JWK) as JWK, "ES256");
    const jwt = new SignJWT({ name: "T", permissions: ALL_PERMISSIONS })
      .setProtectedHeader({ alg: "ES256", kid: "test-key" })
      .setSubject("tok-user")
      .setIssuer(env.AUTH_ISSUER)
      .setAudience(env.AUTH_AUDIENCE);
    return build(jwt).sign(key);
  };
  const get = (token: string) => call("/Categories", { headers: { authorization: `Bearer ${token}` } });

  it("refuses a token without exp", async () => {
    const res = await get(await sign((j) => j.setIssuedAt()));
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain("no exp claim");
  });

  it("refuses a token issued in the future", async () => {
    const now = Math.floor(Date.now() / 1000);
    const res = await get(await sign((j) => j.setIssuedAt(now + 86400).setExpirationTime(now + 86400 + 600)));
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain("iat");
  });

  it("refuses a lifetime longer than the configured maximum and accepts one within it", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await get(await sign((j) => j.setIssuedAt(now).setExpirationTime(now + 3 * 86400)))).status).toBe(401);
    expect((await get(await sign((j) => j.setExpirationTime(now + 3 * 86400)))).status).toBe(401);
    expect((await get(await sign((j) => j.setIssuedAt(now).setExpirationTime(now + 3600)))).status).toBe(200);
  });
});

describe("permission claims", () => {
  it("reads Entra ID's roles and scp claims as permissions", async () => {
    const key = await importJWK(JSON.parse(env.TEST_SIGNING_JWK) as JWK, "ES256");
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", kid: "test-key" })
        .setSubject("entra-app")
        .setIssuer(env.AUTH_ISSUER)
        .setAudience(env.AUTH_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(key);
    expect((await call("/Categories", { headers: { authorization: `Bearer ${await sign({ roles: ["properties_read"] })}` } })).status).toBe(
      200,
    );
    expect(
      (await call("/Categories", { headers: { authorization: `Bearer ${await sign({ scp: "properties_read files_read" })}` } })).status,
    ).toBe(200);
    expect((await call("/Categories", { headers: { authorization: `Bearer ${await sign({ roles: ["files_read"] })}` } })).status).toBe(403);
  });
});

describe("the verified-token cache", () => {
  it("answers a repeated token from the cache but never a token that differs in any byte", async () => {
    const token = await (await import("../support/http")).tokenFor({ id: "cache-user" });
    expect((await call("/Categories", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await call("/Categories", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const last = token.at(-2) === "A" ? "B" : "A";
    const tampered = token.slice(0, -2) + last + token.slice(-1);
    expect((await call("/Categories", { headers: { authorization: `Bearer ${tampered}` } })).status).toBe(401);
  });
});

describe("If-Match", () => {
  it("compares strongly: a weak validator never matches", async () => {
    const created = await call("/Categories", { method: "POST", body: { name: `weak ${crypto.randomUUID()}` } });
    const etag = created.headers.get("etag")!;
    const weak = await call("/Categories", {
      method: "PUT",
      headers: { "if-match": `W/${etag}` },
      body: { id: created.body.id, name: `${created.body.name} 2` },
    });
    expect(weak.status).toBe(412);
    const strong = await call("/Categories", {
      method: "PUT",
      headers: { "if-match": etag },
      body: { id: created.body.id, name: `${created.body.name} 2` },
    });
    expect(strong.status).toBe(200);
  });
});

describe("order", () => {
  it("treats an order of nothing but commas as the default order, not as 'by id'", async () => {
    const names = ["zz-order", "aa-order", "mm-order", "bb-order", "yy-order", "cc-order"].map(
      (n) => `${n} ${crypto.randomUUID().slice(0, 6)}`,
    );
    const ids: string[] = [];
    for (const name of names) ids.push((await call("/Assets", { method: "POST", body: { name, kind: "plant" } })).body.id);
    const byDefault = await call(`/Assets?ids=${ids.join(",")}`);
    const commas = await call(`/Assets?ids=${ids.join(",")}&order=,`);
    expect(commas.status).toBe(200);
    expect(commas.body.map((a: { name: string }) => a.name)).toEqual(byDefault.body.map((a: { name: string }) => a.name));
    expect(byDefault.body.map((a: { name: string }) => a.name)).toEqual([...names].sort());
  });
});
