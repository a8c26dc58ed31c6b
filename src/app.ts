/**
 * The app factory: sets the request context, CORS, authentication, the validation hook, the error
 * renderer, 404/405 handling and the OpenAPI document once, then mounts each domain's sub-app.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { newApp } from "./app-factory";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./env";
import { requireAuthentication } from "./pkg/auth";
import { requireWellFormedBookmark } from "./pkg/bookmark";
import { corsHeaders, setResponseHeaders } from "./pkg/cors";
import { rateLimit } from "./pkg/rate-limit";
import { admission } from "./pkg/admission";
import { refusalLine } from "./pkg/refusal-log";
import { ApiError, BodyReadError, problemParts, problemResponse } from "./pkg/errors";
import { createLogger, errorFields } from "./pkg/logger";
import { platform, type Clock, type IdGenerator } from "./platform/services";
import { registerDocs } from "./docs/routes";
import { registerConnectToken } from "./auth/connect-token";
import { propertiesApp } from "./properties/routes";
import { uploadApp } from "./upload/routes";
import { mediaApp } from "./media/routes";
import { workManagementApp } from "./work/routes";
import { dataProcessingApp } from "./dataprocessing/routes";
import { monitoringApp } from "./monitors/routes";
import { changesApp } from "./changes/routes";
import { auditApp } from "./audit/routes";
import { searchApp } from "./search/routes";
import { usersApp } from "./users/routes";
import { subscriptionsApp } from "./subscriptions/routes";
import { measurementsApp } from "./measurements/routes";
import { batchApp } from "./batch/routes";
import { importsApp } from "./imports/routes";
import { plansApp } from "./plans/routes";
import { recordCaller } from "./users/recorder";
import { jobTokens } from "./dataprocessing/tokens";
import { monitorJobTokens, monitorWideTokens } from "./monitors/monitor-jobs/tokens";
import { configOf } from "./config";

const REQUEST_ID = /^[A-Za-z0-9._\-]{8,128}$/;
/** A read that takes this long (ms) is logged at info like a write or a failure. */
export const SLOW_REQUEST_MS = 1000;

export interface AppOptions {
  clock?: Clock;
  ids?: IdGenerator;
}

export function createApp(options: AppOptions = {}): OpenAPIHono<AppEnv> {
  const app = newApp();

  app.use("*", async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : platform().ids.uuid();
    c.set("requestId", requestId);
    const log = createLogger(configOf(c.env).LOG_LEVEL, { requestId });
    c.set("log", log);
    const clock = options.clock ?? platform().clock;
    c.set("clock", clock);
    c.set("ids", options.ids ?? platform().ids);
    const started = clock.now().getTime();
    await next();
    setResponseHeaders(c, (headers) => headers.set("x-request-id", requestId));
    const method = c.req.method;
    const status = c.res.status;
    const ms = clock.now().getTime() - started;
    // Writes, failures and slow answers at info; a quick successful read at debug: it is the hot path,
    // and the platform's own invocation log already records it (docs/decisions.md, "Request ids").
    const quietRead = (method === "GET" || method === "HEAD") && status < 400 && ms < SLOW_REQUEST_MS;
    const line: Record<string, unknown> = { method, path: c.req.path, status, ms };
    let info = !quietRead;
    // A flood's 429s: one line a second per user at info, with the count of those at debug since.
    if (status === 429) {
      const sample = refusalLine(c.get("principal")?.id ?? "", started + ms);
      info = sample.info;
      if (sample.notLogged > 0) line.refusalsNotLogged = sample.notLogged;
    }
    if (info) c.get("log").info("request", line);
    else c.get("log").debug("request", line);
  });

  // CORS headers are set on the final response, after the route (src/pkg/cors.ts).
  app.use("*", corsHeaders());

  app.use("*", requireWellFormedBookmark);
  // Scoped tokens the areas make for the code they run (src/pkg/keys.ts); every other token is a JWT.
  app.use("*", requireAuthentication([jobTokens, monitorJobTokens, monitorWideTokens]));
  // Before anything is read or written: a flood from one user is refused, never queued in front of others.
  app.use("*", admission);
  // The directory of users (GET /Users): written after the response, at most once per principal and isolate every 5 minutes.
  app.use("*", recordCaller);
  app.use("*", rateLimit);

  app.onError((error, c) => {
    const requestId = c.get("requestId") ?? "unknown";
    // Through the context, so the problem carries the headers the request set before it failed
    // (api-supported-versions...), as the answer it replaces would have.
    const answer = (problem: ApiError) => {
      const { body, status, headers } = problemParts(problem, requestId, c.req.path);
      return c.body(body, { status: status as ContentfulStatusCode, headers });
    };
    if (error instanceof ApiError && error.code !== "Internal") return answer(error);
    // A gzip or deflate body (src/pkg/encoding.ts) that does not decompress.
    const cause = error instanceof BodyReadError ? error.reason : error;
    if (cause instanceof TypeError && /decompression failed/i.test(cause.message)) {
      return answer(new ApiError("BadRequest", "The body could not be decompressed: it is not valid data of its Content-Encoding."));
    }
    // The body broke off (the client went away mid-upload): the client's doing, not a failure here.
    // Nothing was kept (the handlers remove what they stored); whoever still listens gets a 400.
    if (error instanceof BodyReadError || c.req.raw.signal?.aborted) {
      c.get("log")?.warn("client disconnected mid-request", { method: c.req.method, path: c.req.path, reason: String(cause) });
      return answer(new ApiError("BadRequest", "The request body ended before it was complete: the client disconnected."));
    }
    // Hono's own validators and helpers throw HTTPException (e.g. malformed JSON is a 400).
    if (error instanceof HTTPException && error.status < 500) {
      const code = error.status === 413 ? "PayloadTooLarge" : error.status === 415 ? "UnsupportedMediaType" : "BadRequest";
      return answer(new ApiError(code, error.message || "The request could not be read."));
    }
    (c.get("log") ?? createLogger("error", { requestId })).error("unhandled error", {
      method: c.req.method,
      path: c.req.path,
      ...errorFields(error),
    });
    return answer(new ApiError("Internal", "internal"));
  });

  app.notFound((c) => {
    // Paths match without regard to case, as the original server's did (`GET /files/{id}/Data`):
    // a miss is tried once more with the canonical spelling of the route it matches.
    const canonical = canonicalPath(app, c.req.path);
    if (canonical !== null && canonical !== c.req.path) {
      const url = new URL(c.req.url);
      url.pathname = canonical;
      return app.fetch(new Request(url, c.req.raw), c.env, c.executionCtx);
    }
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length > 0) {
      const error = new ApiError("MethodNotAllowed", `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(", ")}.`, {
        headers: { allow: allowed.join(", ") },
      });
      return problemResponse(error, c.get("requestId"), c.req.path);
    }
    return problemResponse(new ApiError("NotFound", `No route ${c.req.path}.`), c.get("requestId"), c.req.path);
  });

  app.get("/health", (c) => {
    // Under `npm start` (and the smoke run), the id of this start: the script waits for its own server.
    if (c.env.LOCAL_START_ID) c.header("x-local-start-id", c.env.LOCAL_START_ID);
    return c.json({ status: "ok" });
  });
  registerConnectToken(app);
  app.route("/", propertiesApp());
  app.route("/", uploadApp());
  app.route("/", mediaApp());
  app.route("/", workManagementApp());
  app.route("/", dataProcessingApp());
  app.route("/", monitoringApp());
  app.route("/", changesApp());
  app.route("/", auditApp());
  app.route("/", searchApp());
  app.route("/", usersApp());
  app.route("/", subscriptionsApp());
  app.route("/", measurementsApp());
  // Each operation of a batch is a request to this app itself (src/batch/run.ts).
  app.route(
    "/",
    batchApp((request, env, ctx) => Promise.resolve(app.fetch(request, env, ctx))),
  );
  app.route("/", importsApp());
  app.route("/", plansApp());
  registerDocs(app);
  return app;
}

const canonicalCache = new WeakMap<object, { literals: number; pattern: RegExp; segments: (string | null)[] }[]>();

/**
 * The canonical spelling of a path that matches a route when case is ignored: the route's literal
 * segments, the path's own parameter values. Routes with more literal segments are preferred.
 */
function canonicalPath(app: OpenAPIHono<AppEnv>, path: string): string | null {
  let routes = canonicalCache.get(app);
  if (!routes) {
    const seen = new Set<string>();
    routes = app.routes
      .filter((r) => r.method !== "ALL" && !seen.has(r.path) && seen.add(r.path))
      .map((r) => {
        const segments = r.path.split("/").map((segment) => (segment.startsWith(":") ? null : segment));
        const source = segments.map((segment) => (segment === null ? "[^/]+" : segment.replace(/[.+?^${}()|[\]\\*]/g, "\\$&"))).join("/");
        return { literals: segments.filter((x) => x !== null).length, pattern: new RegExp(`^${source}/?$`, "i"), segments };
      })
      .sort((a, b) => b.literals - a.literals);
    canonicalCache.set(app, routes);
  }
  const parts = path.split("/");
  const route = routes.find((r) => r.pattern.test(path) && r.segments.length === parts.length);
  if (!route) return null;
  return route.segments.map((segment, i) => segment ?? parts[i]).join("/");
}

const patternCache = new WeakMap<object, { method: string; pattern: RegExp }[]>();

function allowedMethods(app: OpenAPIHono<AppEnv>, path: string): string[] {
  let patterns = patternCache.get(app);
  if (!patterns) {
    patterns = app.routes
      .filter((r) => r.method !== "ALL")
      .map((r) => ({
        method: r.method,
        pattern: new RegExp("^" + r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+") + "/?$"),
      }));
    patternCache.set(app, patterns);
  }
  const methods = new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method));
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}
