/** Calls that wait for what the Worker does after the response (the caller's record in the directory). */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createApp, type AppOptions } from "../../src/app";
import { tokenFor, type TestUser } from "../support/http";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
export interface Settled<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * One request through the app with its own execution context, returned once everything it left for
 * after the response (waitUntil) has finished.
 */
export async function settledCall(
  path: string,
  options: {
    user?: Partial<TestUser>;
    token?: string;
    headers?: Record<string, string>;
    env?: Env;
    app?: ReturnType<typeof createApp>;
  } = {},
): Promise<Settled> {
  const app = options.app ?? (defaultApp ??= createApp());
  const ctx = createExecutionContext();
  const authorization = `Bearer ${options.token ?? (await tokenFor(options.user))}`;
  const res = await app.fetch(
    new Request(`https://api.test${path}`, { headers: { authorization, ...options.headers } }),
    options.env ?? env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text && (res.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : text,
  };
}

let defaultApp: ReturnType<typeof createApp> | undefined;

export function appWith(options: AppOptions) {
  return createApp(options);
}

/** A person nobody has seen yet. */
export function newPerson(name = "Test Person", permissions?: string[]): Partial<TestUser> {
  return { id: `person-${crypto.randomUUID()}`, name, ...(permissions ? { permissions } : {}) };
}

/** A token from the local /connect/token (client credentials), as a machine client gets one. */
export async function clientToken(clientId: string, clientSecret: string): Promise<string> {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request("https://api.test/connect/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
    }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return ((await res.json()) as { access_token: string }).access_token;
}
