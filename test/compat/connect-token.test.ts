/** Issue 13: the local OAuth 2.0 client-credentials endpoint, as the original client uses it. */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const tokenRequest = (body: Record<string, string>, headers: Record<string, string> = {}) =>
  exports.default.fetch(
    new Request("https://api.test/connect/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(body),
    }),
  );

describe("POST /connect/token (local)", () => {
  it("issues a token a machine client then uses, with the client's permissions only", async () => {
    const res = await tokenRequest({ grant_type: "client_credentials", client_id: "integration", client_secret: "s3cret-for-tests" });
    expect(res.status).toBe(200);
    const token = (await res.json()) as { access_token: string; token_type: string; expires_in: number; scope: string };
    expect(token).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "properties_read files_read" });
    const auth = { authorization: `Bearer ${token.access_token}` };
    expect((await exports.default.fetch(new Request("https://api.test/Categories", { headers: auth }))).status).toBe(200);
    expect((await exports.default.fetch(new Request("https://api.test/Deviations", { headers: auth }))).status).toBe(403);
  });

  it("takes client credentials in a Basic header and narrows permissions to a requested scope", async () => {
    const res = await tokenRequest(
      { grant_type: "client_credentials", scope: "files_read" },
      { authorization: `Basic ${btoa("integration:s3cret-for-tests")}` },
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { scope: string }).scope).toBe("files_read");
  });

  it("answers invalid_scope (RFC 6749) for a scope the client may not have, not a token without it (issue 24)", async () => {
    const res = await tokenRequest(
      { grant_type: "client_credentials", scope: "files_read deviations_write" },
      { authorization: `Basic ${btoa("integration:s3cret-for-tests")}` },
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe("invalid_scope");
    expect(body.error_description).toContain("may not have the scope deviations_write");
    expect(body.error_description).toContain("properties_read files_read");
    const unknown = await tokenRequest({
      grant_type: "client_credentials",
      client_id: "integration",
      client_secret: "s3cret-for-tests",
      scope: "everything",
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toBe("invalid_scope");
  });

  it("refuses a wrong secret, an unknown client and another grant type, in OAuth's error shape", async () => {
    const wrong = await tokenRequest({ grant_type: "client_credentials", client_id: "integration", client_secret: "nope" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: "invalid_client" });
    expect((await tokenRequest({ grant_type: "client_credentials", client_id: "someone", client_secret: "x" })).status).toBe(401);
    const grant = await tokenRequest({ grant_type: "password", username: "a", password: "b" });
    expect(grant.status).toBe(400);
    expect(await grant.json()).toMatchObject({ error: "unsupported_grant_type" });
  });
});
