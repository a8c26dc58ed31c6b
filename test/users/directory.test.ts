/** Issue 21 §4: the read-only directory of users, filled from the calls themselves. */
import { env } from "cloudflare:workers";
import { importJWK, SignJWT, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { clientToken, newPerson, settledCall } from "./support";

describe("GET /Users", () => {
  it("lists a principal who called, as a person, with when it was first and last seen", async () => {
    const before = new Date().toISOString();
    const ada = newPerson("Ada Inspector");
    expect((await settledCall("/Categories", { user: ada })).status).toBe(200);
    const res = await call(`/Users?ids=${ada.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toEqual({
      id: ada.id,
      name: "Ada Inspector",
      kind: "person",
      clientId: null,
      firstSeenAt: expect.any(String),
      lastSeenAt: expect.any(String),
    });
    expect(res.body[0].firstSeenAt >= before).toBe(true);
    expect(res.body[0].lastSeenAt).toBe(res.body[0].firstSeenAt);
  });

  it("finds users by a part of the name and by the id, case-insensitively, with the original's keyword and with searchText", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const grace = { id: `grace-${tag}-id`, name: `Grace Hopper ${tag}` };
    const alan = { id: `alan-${tag}-id`, name: `Alan Turing ${tag}` };
    for (const user of [grace, alan]) await settledCall("/Categories", { user });
    const ids = (path: string) => call(path).then((res) => res.body.map((u: { id: string }) => u.id));
    expect(await ids(`/Users?keyword=HOPPER ${tag}`)).toEqual([grace.id]);
    expect(await ids(`/Users?keyword=${alan.id}`)).toEqual([alan.id]);
    expect(await ids(`/Users?keyword=${tag}`)).toEqual([alan.id, grace.id]);
    expect(await ids(`/Users?searchText=turing ${tag}`)).toEqual([alan.id]);
    expect(await ids(`/Users?keyword=${tag}&searchText=grace`)).toEqual([grace.id]);
    expect(await ids(`/Users?keyword=nobody-${tag}`)).toEqual([]);
  });

  it("pages with skip and take, ordered by name, and counts with includeTotal", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const names = ["Delta", "alpha", "Charlie", "bravo", "Echo"].map((n) => `${n} ${tag}`);
    for (const name of names) await settledCall("/Categories", { user: { id: `pager-${crypto.randomUUID()}`, name } });
    const page = async (query: string) => {
      const res = await call(`/Users?keyword=${tag}&${query}`);
      expect(res.status, res.text).toBe(200);
      return { names: res.body.map((u: { name: string }) => u.name.split(" ")[0]), total: res.headers.get("x-total-count") };
    };
    expect(await page("take=2")).toEqual({ names: ["alpha", "bravo"], total: null });
    expect(await page("skip=2&take=2&includeTotal=true")).toEqual({ names: ["Charlie", "Delta"], total: "5" });
    expect(await page("skip=4")).toEqual({ names: ["Echo"], total: null });
    expect(await page("order=name desc&take=1")).toEqual({ names: ["Echo"], total: null });
    const bad = await call(`/Users?take=abc`);
    expect(bad.status).toBe(400);
    expect((await call(`/Users?kinds=robot`)).body.code).toBe("InvalidQuery");
  });

  it("finds the caller on its very first call, before anything was written after a response", async () => {
    const newcomer = newPerson("First Timer");
    const res = await call(`/Users?keyword=${newcomer.id}`, { user: newcomer });
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((u: { id: string }) => u.id)).toEqual([newcomer.id]);
  });

  it("needs users_read (403 without it), and answers the identity service's api-version 1.0", async () => {
    const res = await call("/Users", { user: newPerson("No Reader", ["files_read"]) });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain("users_read");
    expect((await call("/Users?take=1", { headers: { "api-version": "1.0" } })).status).toBe(200);
    expect((await call("/Users?take=1", { headers: { "api-version": "9.9" } })).text).toContain("UnsupportedApiVersion");
  });

  it("records a new name of the same principal at once", async () => {
    const id = `renamed-${crypto.randomUUID()}`;
    await settledCall("/Categories", { user: { id, name: "Old Name" } });
    await settledCall("/Categories", { user: { id, name: "New Name" } });
    expect((await call(`/Users/${id}`)).body.name).toBe("New Name");
  });
});

describe("GET /Users/me and /Users/{id}", () => {
  it("/Users/me answers the caller, recorded or not", async () => {
    const first = newPerson("Me Myself");
    const unrecorded = await call("/Users/me", { user: first });
    expect(unrecorded.status, unrecorded.text).toBe(200);
    expect(unrecorded.body).toMatchObject({ id: first.id, name: "Me Myself", kind: "person", clientId: null });
    await settledCall("/Categories", { user: first });
    const recorded = await call("/Users/me", { user: first });
    expect(recorded.body).toMatchObject({ id: first.id, name: "Me Myself", kind: "person" });
    expect(recorded.headers.get("etag")).toMatch(/^"[0-9a-f]+"$/);
  });

  it("/Users/{id} reads a recorded user with an ETag (If-None-Match: 304), and is a 404 problem for an unknown id", async () => {
    const bob = newPerson("Bob Analyst");
    await settledCall("/Categories", { user: bob });
    const found = await call(`/Users/${bob.id}`);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ id: bob.id, name: "Bob Analyst" });
    const etag = found.headers.get("etag")!;
    expect((await call(`/Users/${bob.id}`, { headers: { "if-none-match": etag } })).status).toBe(304);
    const unknown = await call(`/Users/nobody-${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/problem+json");
    expect(unknown.body.code).toBe("NotFound");
  });
});

describe("machine clients", () => {
  it("a client of /connect/token is recorded as a machine client with its client id", async () => {
    const token = await clientToken("integration", "s3cret-for-tests");
    expect((await settledCall("/Categories", { token })).status).toBe(200);
    const res = await call("/Users/client:integration");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: "client:integration", name: "Integration", kind: "client", clientId: "integration" });
    const clients = await call("/Users?kinds=client&keyword=integration");
    expect(clients.body.map((u: { id: string }) => u.id)).toContain("client:integration");
    expect((await call("/Users?kinds=person&keyword=client:integration")).body).toEqual([]);
  });
});

/** A token with the claims another identity provider writes, signed with the key the Worker trusts. */
async function providerToken(sub: string, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ permissions: ["properties_read"], ...claims })
    .setProtectedHeader({ alg: "ES256", kid: "test-key" })
    .setSubject(sub)
    .setIssuer(env.AUTH_ISSUER)
    .setAudience(env.AUTH_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(await importJWK(JSON.parse(env.TEST_SIGNING_JWK) as JWK, "ES256"));
}

describe("machine clients of identity providers", () => {
  it("tells machine clients from people by the claims Entra ID, Auth0 and RFC 9068 write", async () => {
    const t = crypto.randomUUID().slice(0, 8);
    const cases: [string, Record<string, unknown>, { kind: string; clientId: string | null }][] = [
      // Entra ID app-only token: sub is the service principal, azp the application, idtyp app.
      [`entra-sp-${t}`, { azp: `entra-app-${t}`, idtyp: "app" }, { kind: "client", clientId: `entra-app-${t}` }],
      // Auth0 machine-to-machine: sub {client}@clients, gty client-credentials.
      [`auth0-${t}@clients`, { azp: `auth0-${t}`, gty: "client-credentials" }, { kind: "client", clientId: `auth0-${t}` }],
      // RFC 9068 client credentials: sub is the client id.
      [`rfc-${t}`, { client_id: `rfc-${t}` }, { kind: "client", clientId: `rfc-${t}` }],
      // A person signed in through an application: azp names the app, sub the person.
      [`person-${t}`, { azp: `spa-${t}`, name: "Pat Person" }, { kind: "person", clientId: null }],
    ];
    for (const [sub, claims, expected] of cases) {
      expect((await settledCall("/Categories", { token: await providerToken(sub, claims) })).status).toBe(200);
      const res = await call(`/Users/${encodeURIComponent(sub)}`);
      expect(res.status, sub).toBe(200);
      expect(res.body, sub).toMatchObject({ id: sub, ...expected });
    }
  });
});
