/**
 * Test client: calls the Worker through HTTP the way a client does, with tokens signed by the test
 * key the Worker trusts.
 */
import { env, exports } from "cloudflare:workers";
import { importJWK, SignJWT, type JWK } from "jose";
import { ALL_PERMISSIONS } from "../../src/pkg/permissions";

export interface TestUser {
  id: string;
  name: string;
  permissions: readonly string[];
}

let signingKey: Promise<CryptoKey | Uint8Array> | undefined;

export async function tokenFor(
  user: Partial<TestUser> = {},
  overrides: { issuer?: string; audience?: string; expiresIn?: string | number; key?: CryptoKey } = {},
): Promise<string> {
  signingKey ??= importJWK(JSON.parse(env.TEST_SIGNING_JWK) as JWK, "ES256");
  const jwt = new SignJWT({ name: user.name ?? "Test User", permissions: [...(user.permissions ?? ALL_PERMISSIONS)] })
    .setProtectedHeader({ alg: "ES256", kid: "test-key" })
    .setSubject(user.id ?? "00000000-0000-4000-8000-00000000aaaa")
    .setIssuer(overrides.issuer ?? env.AUTH_ISSUER)
    .setAudience(overrides.audience ?? env.AUTH_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(overrides.expiresIn ?? "10m");
  return jwt.sign(overrides.key ?? (await signingKey));
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  user?: Partial<TestUser>;
  /** Send no Authorization header. */
  anonymous?: boolean;
}

export interface CallResult<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One request to the Worker; JSON bodies are encoded and decoded. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
export async function call<T = any>(path: string, options: CallOptions = {}): Promise<CallResult<T>> {
  const headers = new Headers(options.headers);
  if (!options.anonymous && !headers.has("authorization")) headers.set("authorization", `Bearer ${await tokenFor(options.user)}`);
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const response = await exports.default.fetch(
    new Request(`https://api.test${path}`, { method: options.method ?? (body ? "POST" : "GET"), headers, body }),
  );
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get("content-type") ?? "").includes("json") && text) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}
