import type { Context } from "hono";
import type { Logger } from "./pkg/logger";
import type { Principal } from "./pkg/auth";
import type { Clock, IdGenerator } from "./platform/services";
import type { Database } from "./db/statements";

/**
 * Worker bindings: the generated `Env` (wrangler types) plus the secrets, which live outside
 * wrangler.toml (`wrangler secret put`, `.dev.vars` locally) and so are not generated. `DB` is a
 * {@link Database}: the Worker's D1 database in background work, the request's D1 session in a
 * request (src/handlers.ts); only the entry opens sessions, so nothing else sees `withSession`.
 */
export type Bindings = Omit<Env, "DB"> & {
  DB: Database;
  /** Inline JWKS (JSON) trusted in addition to AUTH_JWKS_URL: the local dev key, or an offline deployment's keys. */
  AUTH_JWKS_JSON?: string;
  /** Key ring sealing job run options (`{version}:{base64 32 bytes}`, comma-separated, current first). */
  DATAPROCESSING_ENCRYPTION_KEY?: string;
  /**
   * The Cloudflare Images binding, when an operator adds `[images]` to wrangler.toml (not bound by default; IMAGE_RESIZER =
   * "images" uses it).
   */
  IMAGES?: ImagesBinding;
  /**
   * Set by scripts/dev-env.mjs for each local start (`wrangler dev --var`); /health echoes it so the start script knows its own
   * server answered.
   */
  LOCAL_START_ID?: string;
  /** Tests only: a service binding that receives webhook deliveries instead of the internet (src/subscriptions/sender.ts). */
  WEBHOOK_TRANSPORT?: Fetcher;
};

/** The bindings as the runtime gives them to the entry (src/index.ts, then src/handlers.ts): `DB` the D1 database itself. */
export type WorkerBindings = Omit<Bindings, "DB"> & { DB: D1Database };

export interface AppVariables {
  requestId: string;
  log: Logger;
  principal: Principal;
  apiVersion: string;
  clock: Clock;
  ids: IdGenerator;
  /** The request schemas of the route a request matched, by validation target (src/pkg/validation-messages.ts). */
  requestSchemas?: Readonly<Record<string, unknown>>;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: AppVariables;
}

/**
 * A route's synchronous check or setting before its validators (API version, known query
 * parameters, permission, the schemas for validation messages): it throws an ApiError to refuse.
 * `defineRoute` runs a route's steps in one middleware (src/pkg/openapi.ts).
 */
export type RouteStep = (c: Context<AppEnv>) => void;
