/**
 * A local OAuth 2.0 token endpoint (`POST /connect/token`, client credentials, RFC 6749 4.4), so an
 * integration written for the original product, which fetches its token from an identity server's
 * `/connect/token`, can be tried end to end on one machine. It is off unless configured: `npm start`
 * sets LOCAL_OAUTH_CLIENTS (clients with their secrets and permissions) and LOCAL_OAUTH_SIGNING_JWK
 * (the local dev key, which the Worker already trusts) in .dev.vars. A deployment uses its identity
 * provider instead (README, "Machine clients").
 */
import type { Hono } from "hono";
import { importJWK, SignJWT, type JWK } from "jose";
import type { AppEnv } from "../env";
import { configOf } from "../config";

interface LocalClient {
  clientId: string;
  clientSecret: string;
  name?: string;
  permissions: string[];
}

const TOKEN_SECONDS = 3600;

function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error, error_description: description }, { status, headers: { "cache-control": "no-store", ...headers } });
}

/** Constant-time comparison of two secrets (as UTF-8 bytes). */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all(
    [a, b].map(async (s) => new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)))),
  );
  let diff = 0;
  for (let i = 0; i < x!.length; i++) diff |= x![i]! ^ y![i]!;
  return diff === 0;
}

export function registerConnectToken(app: Hono<AppEnv>): void {
  app.post("/connect/token", async (c) => {
    const settings = configOf(c.env);
    if (!settings.LOCAL_OAUTH_CLIENTS || !settings.LOCAL_OAUTH_SIGNING_JWK) {
      return oauthError(404, "not_configured", "This deployment issues no tokens: get one from its identity provider.");
    }
    const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (type !== "application/x-www-form-urlencoded")
      return oauthError(400, "invalid_request", "The body must be application/x-www-form-urlencoded.");
    const form = new URLSearchParams(await c.req.text());
    if (form.get("grant_type") !== "client_credentials")
      return oauthError(400, "unsupported_grant_type", "Only grant_type=client_credentials is supported.");
    let clientId = form.get("client_id");
    let clientSecret = form.get("client_secret");
    const basic = /^Basic\s+(.+)$/i.exec(c.req.header("authorization") ?? "");
    if (basic) {
      const [id, secret] = atob(basic[1]!).split(":");
      clientId = decodeURIComponent(id ?? "");
      clientSecret = decodeURIComponent(secret ?? "");
    }
    const clients = JSON.parse(settings.LOCAL_OAUTH_CLIENTS) as LocalClient[];
    const client = clients.find((x) => x.clientId === clientId);
    if (!client || !clientSecret || !(await sameSecret(client.clientSecret, clientSecret))) {
      return oauthError(401, "invalid_client", "Unknown client or wrong secret.", { "www-authenticate": 'Basic realm="integrity-edge"' });
    }
    // A requested scope narrows the client's permissions. A scope the client may not have is
    // invalid_scope (RFC 6749 5.2, as IdentityServer answers), never a token silently without it.
    const requested = [...new Set((form.get("scope") ?? "").split(" ").filter(Boolean))];
    const refused = requested.filter((p) => !client.permissions.includes(p));
    if (refused.length > 0) {
      return oauthError(
        400,
        "invalid_scope",
        `The client ${client.clientId} may not have the scope${refused.length > 1 ? "s" : ""} ${refused.join(" ")}; it ` +
          `may ask for ${client.permissions.join(" ") || "none"} (or leave scope out for all of them).`,
      );
    }
    const permissions = requested.length > 0 ? client.permissions.filter((p) => requested.includes(p)) : client.permissions;
    const jwk = JSON.parse(settings.LOCAL_OAUTH_SIGNING_JWK) as JWK & { kid?: string };
    const token = await new SignJWT({ name: client.name ?? client.clientId, permissions, client_id: client.clientId })
      .setProtectedHeader({ alg: "ES256", kid: jwk.kid ?? "local-dev" })
      .setSubject(`client:${client.clientId}`)
      .setIssuer(c.env.AUTH_ISSUER)
      .setAudience(c.env.AUTH_AUDIENCE || "integrity-edge")
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_SECONDS}s`)
      .sign(await importJWK(jwk, "ES256"));
    return Response.json(
      { access_token: token, token_type: "Bearer", expires_in: TOKEN_SECONDS, scope: permissions.join(" ") },
      { headers: { "cache-control": "no-store" } },
    );
  });
}
