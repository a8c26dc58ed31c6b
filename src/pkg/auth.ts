/**
 * Bearer-token authentication. Tokens are JWTs verified with jose against the identity provider's
 * JWKS (AUTH_JWKS_URL) and/or an inline JWKS (AUTH_JWKS_JSON: the local dev key written by
 * `npm start`, or the keys of an offline deployment), with the configured issuer and audience.
 */
import { nowMs } from "../platform/services";
import type { MiddlewareHandler } from "hono";
import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { configOf } from "../config";
import type { AppEnv, Bindings, RouteStep } from "../env";
import { ApiError, type FieldProblem } from "./errors";
import type { Permission } from "./permissions";
import { looksScoped, verifyScopedToken } from "./keys";

export interface Principal {
  id: string;
  name: string;
  permissions: ReadonlySet<string>;
  /** Set for a job's own output token: it speaks for that job alone. */
  jobId?: string;
  /** Set for a monitor job's status token (External models): the monitor of the one run it speaks for. */
  monitorRef?: string;
  /** Set for a monitor job's status token: the run (monitor job) it may set the status of, alone. */
  monitorJobId?: string;
  /** Who the token speaks for: a person, or a machine client (OAuth client credentials). Absent: a person. */
  kind?: "person" | "client";
  /** A machine client's OAuth client id (`client_id`, `azp` or `appid`). */
  clientId?: string;
}

/**
 * Whether a token speaks for a machine client rather than a person: Entra ID's `idtyp: app`, Auth0's
 * `gty: client-credentials`, or a subject that is the client itself (RFC 9068 2.2: with client
 * credentials `sub` names the client; the local /connect/token writes `client:{id}`, Auth0 `{id}@clients`).
 */
function machineClientOf(payload: JWTPayload): string | undefined {
  const claim = (name: string) => (typeof payload[name] === "string" && payload[name] !== "" ? (payload[name] as string) : undefined);
  const clientId = claim("client_id") ?? claim("azp") ?? claim("appid");
  const sub = payload.sub!;
  const isClient =
    payload["idtyp"] === "app" ||
    payload["gty"] === "client-credentials" ||
    (clientId !== undefined && (sub === clientId || sub === `client:${clientId}` || sub === `${clientId}@clients`));
  return isClient ? (clientId ?? sub) : undefined;
}

const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];
const REALM = 'Bearer realm="integrity-edge"';

/**
 * Which check a refused token failed. The 401 names it in words and the request's log line carries
 * it (`tokenRefused`), so a client and an operator both see why without guessing; neither ever
 * shows key material (only what the token itself says: its claims, its key id, its algorithm).
 */
export type TokenCheck =
  | "missing"
  | "scheme"
  | "format"
  | "algorithm"
  | "signature"
  | "issuer"
  | "audience"
  | "expired"
  | "notYetValid"
  | "lifetime"
  | "claims"
  | "keys";

/** A 401 that knows which check failed. */
export class TokenRefused extends ApiError {
  constructor(
    readonly check: TokenCheck,
    description: string | undefined,
    errors?: FieldProblem[],
  ) {
    const header = description ? `${REALM}, error="invalid_token", error_description="${description.replace(/"/g, "'")}"` : REALM;
    super("Unauthorized", description ?? "A bearer token is required.", { headers: { "www-authenticate": header }, errors });
  }
}

const JWT_CHARACTER = /[A-Za-z0-9\-_.]/;

/**
 * Why an Authorization header is not `Bearer <token>`, in words, with the field and the rule: another
 * scheme, no token, or a token holding what no JWT holds (a pasted banner, quotes, a second word).
 */
function malformedAuthorization(authorization: string): TokenRefused {
  const scheme = /^\s*(\S+)/.exec(authorization)?.[1] ?? "";
  const token = authorization.replace(/^\s*\S+\s*/, "").trim();
  let message: string;
  let rule: string;
  if (scheme.toLowerCase() !== "bearer") {
    rule = "bearerScheme";
    message = `The Authorization header must be 'Bearer <token>'; it uses the scheme '${scheme.slice(0, 20)}'.`;
  } else if (token === "") {
    rule = "bearerToken";
    message = "The Authorization header must be 'Bearer <token>'; it holds 'Bearer' and no token.";
  } else {
    const at = [...token].findIndex((character) => !JWT_CHARACTER.test(character));
    const character = [...token][at] ?? "";
    const shownCharacter = /^\s$/.test(character) ? "a space" : `'${character}'`;
    rule = "bearerToken";
    message =
      `The Authorization header's token holds ${shownCharacter} at character ${at + 1}, which no token holds (a JWT is three ` +
      "base64url parts joined by dots): send only the token, e.g. TOKEN=$(npm run -s token) locally, where npm run " +
      "without -s adds its banner.";
  }
  return new TokenRefused("scheme", message, [{ field: "header.Authorization", rule, message }]);
}

function unauthorized(description?: string, check: TokenCheck = description ? "claims" : "missing"): ApiError {
  return new TokenRefused(check, description);
}

const when = (seconds: unknown) =>
  typeof seconds === "number" && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : "an unreadable time";
const shown = (value: unknown) =>
  Array.isArray(value) ? value.map((v) => `'${String(v)}'`).join(", ") : value === undefined ? "none" : `'${String(value)}'`;

/** A jose failure as the check it failed, in words; null for what is not a token problem. */
function refusalOf(error: unknown, env: Bindings, audience: string): ApiError | null {
  if (error instanceof joseErrors.JWTExpired) {
    return unauthorized(`The token has expired: its exp (${when(error.payload.exp)}) is past.`, "expired");
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const payload = error.payload;
    if (error.reason === "missing") return unauthorized(`The token has no ${error.claim} claim.`, "claims");
    switch (error.claim) {
      case "iss":
        return unauthorized(
          `The token's issuer ${shown(payload.iss)} is not the one this service trusts ('${env.AUTH_ISSUER}', AUTH_ISSUER).`,
          "issuer",
        );
      case "aud":
        return unauthorized(
          `The token is for the audience ${shown(payload.aud)}, not this API's ('${audience}', AUTH_AUDIENCE).`,
          "audience",
        );
      case "nbf":
        return unauthorized(`The token is not valid yet: its nbf is ${when(payload.nbf)}.`, "notYetValid");
      case "iat":
        return unauthorized(`The token's iat (${when(payload.iat)}) is in the future.`, "notYetValid");
      default:
        return unauthorized(`The token's ${error.claim} claim is not accepted.`, "claims");
    }
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return unauthorized("The token's algorithm is not accepted (RS, PS, ES or EdDSA signatures only).", "algorithm");
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return unauthorized(
      "The token's signature does not verify: it was signed by a key this service does not trust, or changed after it was signed.",
      "signature",
    );
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return unauthorized(
      "The token's signature cannot be checked: no key this service trusts has its key id (kid) and algorithm.",
      "signature",
    );
  }
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) {
    return unauthorized(
      "The token's signature cannot be checked now: the identity provider's keys (AUTH_JWKS_URL) could not be read.",
      "keys",
    );
  }
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid || error instanceof joseErrors.JOSENotSupported) {
    return unauthorized("The token is not a well-formed JWT (three base64url parts: header, claims, signature).", "format");
  }
  if (error instanceof joseErrors.JOSEError) return unauthorized(`The token is not valid (${error.code}).`, "format");
  return null;
}

// Key sets are cached per isolate: the remote one keeps jose's JWKS cache (and its cooldown) warm.
const remoteKeySets = new Map<string, JWTVerifyGetKey>();
const localKeySets = new Map<string, JWTVerifyGetKey>();

function keyResolver(env: Bindings): JWTVerifyGetKey | undefined {
  const getters: JWTVerifyGetKey[] = [];
  if (env.AUTH_JWKS_JSON) {
    let getter = localKeySets.get(env.AUTH_JWKS_JSON);
    if (!getter) {
      getter = createLocalJWKSet(JSON.parse(env.AUTH_JWKS_JSON));
      localKeySets.set(env.AUTH_JWKS_JSON, getter);
    }
    getters.push(getter);
  }
  if (env.AUTH_JWKS_URL) {
    let getter = remoteKeySets.get(env.AUTH_JWKS_URL);
    if (!getter) {
      getter = createRemoteJWKSet(new URL(env.AUTH_JWKS_URL));
      remoteKeySets.set(env.AUTH_JWKS_URL, getter);
    }
    getters.push(getter);
  }
  if (getters.length === 0) return undefined;
  // Try each key set in turn: a key missing from the first is looked up in the next.
  return async (header, token) => {
    let last: unknown;
    for (const getter of getters) {
      try {
        return await getter(header, token);
      } catch (error) {
        if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
        last = error;
      }
    }
    throw last;
  };
}

function principalFrom(payload: JWTPayload): Principal {
  if (typeof payload.sub !== "string" || payload.sub === "") throw unauthorized("The token has no subject.");
  const permissions = new Set<string>();
  const claim = payload["permissions"];
  if (Array.isArray(claim)) for (const p of claim) if (typeof p === "string") permissions.add(p);
  // Entra ID puts application permissions (app roles) in `roles` and delegated ones in `scp`.
  const roles = payload["roles"];
  if (Array.isArray(roles)) for (const p of roles) if (typeof p === "string") permissions.add(p);
  for (const claim of ["scope", "scp"]) {
    const scope = payload[claim];
    if (typeof scope === "string") for (const p of scope.split(" ")) if (p) permissions.add(p);
  }
  const name =
    typeof payload["name"] === "string"
      ? (payload["name"] as string)
      : typeof payload["preferred_username"] === "string"
        ? (payload["preferred_username"] as string)
        : payload.sub;
  const clientId = machineClientOf(payload);
  return clientId === undefined
    ? { id: payload.sub, name, permissions, kind: "person" }
    : { id: payload.sub, name, permissions, kind: "client", clientId };
}

const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * Verified tokens, per isolate: a phone's repeated requests with one token pay the signature check
 * once. Keyed by the token's SHA-256 (the token itself is not kept), valid until the token's `exp`,
 * at most {@link MAX_CACHED_TOKENS} entries (the oldest goes first).
 */
const verifiedTokens = new Map<string, { principal: Principal; expiresAt: number }>();
export const MAX_CACHED_TOKENS = 2000;

const encoder = new TextEncoder();

/** The token's SHA-256 as a 16-character string (its 16-bit words): a Map key, never shown. */
async function tokenCacheKey(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(token));
  return String.fromCharCode(...new Uint16Array(digest));
}

function rememberToken(key: string, principal: Principal, expiresAt: number): void {
  if (verifiedTokens.size >= MAX_CACHED_TOKENS) {
    const oldest = verifiedTokens.keys().next().value;
    if (oldest !== undefined) verifiedTokens.delete(oldest);
  }
  verifiedTokens.set(key, { principal, expiresAt });
}

/**
 * A token must expire (jose checks `exp` is present and not past), must not claim to be issued in
 * the future (beyond the clock tolerance), and may not live longer than the configured maximum,
 * counted from `iat` (or from now when it has none), so a leaked long-lived token is refused.
 */
function checkLifetime(env: Bindings, payload: JWTPayload): void {
  const now = Math.floor(nowMs() / 1000);
  const max = configOf(env).AUTH_MAX_TOKEN_LIFETIME_SECONDS;
  if (payload.iat !== undefined && payload.iat > now + CLOCK_TOLERANCE_SECONDS)
    throw unauthorized(`The token is not valid yet: its iat (${when(payload.iat)}) is in the future.`, "notYetValid");
  const from = payload.iat ?? now;
  if (payload.exp! - from > max + CLOCK_TOLERANCE_SECONDS)
    throw unauthorized(`The token lives longer than the ${max} seconds this service accepts.`, "lifetime");
}

/**
 * Verifies a bearer token and returns who it speaks for; throws a 401 ApiError otherwise. `scoped`:
 * the kinds of scoped token the areas make (src/app.ts lists them).
 */
export async function authenticate(
  env: Bindings,
  authorization: string | undefined,
  scoped: readonly ScopedTokenKind[],
): Promise<Principal> {
  if (!authorization) throw unauthorized();
  const match = /^Bearer\s+([A-Za-z0-9\-_.]+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw malformedAuthorization(authorization);
  const shape = looksScoped(match[1]);
  const kind = shape && scoped.find((k) => k.scope === shape.scope);
  if (kind) return authenticateScoped(env, match[1], kind);
  // keyResolver(env) has a key set exactly when one of these is set; it is only built on a cache miss.
  if ((!env.AUTH_JWKS_JSON && !env.AUTH_JWKS_URL) || !env.AUTH_ISSUER) {
    throw new ApiError("Internal", "Authentication is not configured (AUTH_ISSUER and a JWKS are required).");
  }
  const cacheKey = await tokenCacheKey(match[1]);
  const cached = verifiedTokens.get(cacheKey);
  if (cached && cached.expiresAt > nowMs()) return cached.principal;
  const resolver = keyResolver(env)!;
  const audience = env.AUTH_AUDIENCE || "integrity-edge";
  try {
    const { payload } = await jwtVerify(match[1], resolver, {
      issuer: env.AUTH_ISSUER,
      audience,
      algorithms: ALGORITHMS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ["exp"],
    });
    checkLifetime(env, payload);
    const principal = principalFrom(payload);
    rememberToken(cacheKey, principal, payload.exp! * 1000);
    return principal;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw refusalOf(error, env, audience) ?? error;
  }
}

/**
 * A kind of scoped token (src/pkg/keys.ts: `{scope}.{id}.{keyVersion}.{mac}`) an area makes for the
 * code it runs: a job's output token, a monitor job's status token. The kit verifies the MAC; the
 * area says whether the token is still good (its job still runs, say) and whom it speaks for.
 */
export interface ScopedTokenKind {
  scope: string;
  /** The principal of a token whose MAC verified; throws a 401 ({@link tokenRefused}) when it is no longer good. */
  principal(env: Bindings, id: string): Promise<Principal>;
}

/** The 401 of a scoped token that verified but no longer speaks for anyone (`check`: why, for the log). */
export function tokenRefused(message: string, check: TokenCheck): ApiError {
  return unauthorized(message, check);
}

async function authenticateScoped(env: Bindings, token: string, kind: ScopedTokenKind): Promise<Principal> {
  const scoped = await verifyScopedToken(env, token).catch(() => null);
  if (!scoped)
    throw unauthorized(
      "The job or monitor token's signature does not verify: it is malformed, or was not made by this service with its current keys.",
      "signature",
    );
  return kind.principal(env, scoped.id);
}

/** Paths anyone may read: the health check, the API reference and the icon browsers ask for. */
export function isPublicPath(path: string): boolean {
  return (
    path === "/health" ||
    path === "/favicon.ico" ||
    path === "/connect/token" ||
    path === "/openapi.json" ||
    path === "/docs" ||
    path.startsWith("/docs/") ||
    /^\/swagger\/[^/]+\/swagger\.json$/i.test(path)
  );
}

/** Every route but the public paths needs a principal: a JWT's, or a scoped token's of one of `scoped`. */
export function requireAuthentication(scoped: readonly ScopedTokenKind[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method === "OPTIONS" || isPublicPath(c.req.path)) return next();
    try {
      c.set("principal", await authenticate(c.env, c.req.header("authorization"), scoped));
    } catch (error) {
      // The request's log line says which check failed, as the 401 does.
      if (error instanceof TokenRefused) c.set("log", c.get("log").with({ tokenRefused: error.check, tokenRefusedBecause: error.message }));
      throw error;
    }
    c.set("log", c.get("log").with({ userId: c.get("principal").id }));
    await next();
  };
}

/** A route step (src/pkg/openapi.ts): the caller must hold `permission`, or the answer is 403. */
export function requirePermission(permission: Permission): RouteStep {
  return (c) => {
    if (!c.get("principal").permissions.has(permission)) {
      throw new ApiError("Forbidden", `This operation requires the permission '${permission}'.`);
    }
  };
}
