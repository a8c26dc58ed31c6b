/**
 * Route definitions: every route is declared once with zod schemas, and the same declaration
 * validates the request, documents it in /openapi.json and attaches the cross-cutting middleware
 * (API version, permission, body size, media type, Idempotency-Key).
 */
import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, RouteStep } from "../env";
import { requirePermission } from "./auth";
import { withLargeBodySlot } from "./admission";
import { ApiError } from "./errors";
import { emptyJsonStringIsNoBody } from "./empty-body";
import type { JsonAnswer } from "./etag";
import { idempotency } from "./idempotency";
import { jsonDepthExceeded, MAX_JSON_DEPTH } from "./json-depth";
import { REQUEST_EXAMPLES } from "./openapi-examples";
import type { Permission } from "./permissions";
import { rememberRequestSchemas } from "./validation-messages";
import { originalVersionsOf } from "./original-services";
import { API_AREAS, apiVersion, type ApiArea } from "./versioning";
import { configOf } from "../config";
import { AUDIT_REASON_HEADER, auditReasonStep, MAX_AUDIT_REASON } from "./audit-reason";

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "urn:integrity-edge:problem:ValidationFailed" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().openapi({ description: "Stable machine-readable error code." }),
    requestId: z.string(),
    instance: z.string().optional(),
    errors: z
      .array(
        z.object({
          field: z.string().openapi({ description: "Where: body.x.y, query.name, path.id, header.name", example: "body.name" }),
          rule: z.string().openapi({ example: "required" }),
          message: z.string(),
        }),
      )
      .optional(),
  })
  .openapi("Problem");

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ProblemSchema } },
});

const COMMON_ERRORS = {
  400: problem(
    `Validation failed, a malformed query, an unsupported api-version, or a JSON body nested deeper than ${MAX_JSON_DEPTH} levels.`,
  ),
  401: problem("Missing or invalid bearer token (see WWW-Authenticate)."),
  403: problem("The token lacks the permission this route requires."),
  429: problem(
    "Too many requests from this user: over the per-minute limit, or too many in progress at once (code TooManyRequests). " +
      "Nothing was done; retry after Retry-After seconds.",
  ),
  500: problem("Unexpected failure; the body carries only the request id."),
  503: problem(
    "The instance is serving all the requests (or uploads) it takes at once (code Overloaded): nothing was done; " +
      "retry after Retry-After seconds.",
  ),
} as const;

export const ERROR_RESPONSES = {
  404: problem("The resource does not exist."),
  409: problem("Conflict with the current state (e.g. a unique name, or the resource is in use)."),
  412: problem("If-Match does not name the current ETag."),
  413: problem("The body is larger than the limit."),
  415: problem("The body's media type is not accepted."),
  422: problem("The Idempotency-Key was used before for a different request."),
  501: problem("Not configured on this deployment (code NotConfigured): the problem names the setting, e.g. no container host."),
  503: problem(
    "A remote dependency (the container host) is not answering (code HostUnavailable), or the instance is busy (code " +
      "Overloaded); retry after Retry-After seconds.",
  ),
} as const;

export type ErrorStatus = keyof typeof ERROR_RESPONSES;

function bodyLimit(maxBytes: number | undefined, json: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const config = configOf(c.env);
    const jsonLimit = config.MAX_BODY_BYTES;
    const limit = maxBytes ?? jsonLimit;
    const length = c.req.header("content-length");
    if (length !== undefined && Number(length) > limit) {
      throw new ApiError("PayloadTooLarge", `The body is ${length} bytes; this route accepts at most ${limit}.`);
    }
    // An upload (or a body that may be one) takes one of the isolate's few large-body slots (./admission.ts).
    if (limit > jsonLimit && c.req.raw.body && (length === undefined || Number(length) > jsonLimit)) {
      return withLargeBodySlot(config.MAX_LARGE_BODIES_IN_FLIGHT, () => limited(c, next, limit, jsonLimit, length, json));
    }
    return limited(c, next, limit, jsonLimit, length, json);
  };
}

/** The rest of {@link bodyLimit}: a body of unknown length is held to the limit as it is read. */
async function limited(
  c: Context<AppEnv>,
  next: () => Promise<void>,
  limit: number,
  jsonLimit: number,
  length: string | undefined,
  json: boolean,
): Promise<void> {
  if (length === undefined && c.req.raw.body) {
    if (json || limit <= jsonLimit) {
      // A chunked body has no length up front: a JSON one (parsed whole anyway) is read under the limit.
      const buffer = await c.req.arrayBuffer();
      if (buffer.byteLength > limit) {
        throw new ApiError("PayloadTooLarge", `The body is larger than ${limit} bytes, the limit of this route.`);
      }
    } else {
      // A large one (an upload) is never held whole: it is counted as the handler reads it, and
      // fails with the 413 the moment it passes the limit.
      c.req.raw = new Request(c.req.raw, { body: c.req.raw.body.pipeThrough(countedUnder(limit)) });
    }
  }
  await next();
}

/** Passes a body through, failing it with a 413 once more than `limit` bytes have passed. */
function countedUnder(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > limit) throw new ApiError("PayloadTooLarge", `The body is larger than ${limit} bytes, the limit of this route.`);
      controller.enqueue(chunk);
    },
  });
}

function jsonMediaType(optional: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // An optional body may be left out altogether (no body, or an empty one, with no media type).
    if (optional && (!c.req.raw.body || c.req.header("content-length") === "0") && !c.req.header("content-type")) return next();
    const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json" && !(type?.startsWith("application/") && type.endsWith("+json"))) {
      throw new ApiError("UnsupportedMediaType", `This route accepts application/json bodies, not '${type ?? "none"}'.`);
    }
    await next();
  };
}

/**
 * The nesting limit of JSON bodies (src/pkg/json-depth.ts), checked on the text before it is parsed,
 * so nothing (the Unicode check, zod, a JSON Schema validator, a store) ever walks a deeper one. The
 * text is read once and stays in Hono's body cache, where the validator's JSON.parse finds it.
 */
function jsonDepthLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const type = c.req.header("content-type");
    if (!c.req.raw.body || type === undefined) return next(); // an optional body left out (jsonMediaType let it through)
    const text = await c.req.text();
    const at = jsonDepthExceeded(text);
    if (at >= 0) {
      const message =
        `The JSON body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels (level ${MAX_JSON_DEPTH + 1} opens ` +
        `at character ${at}); at most ${MAX_JSON_DEPTH} are accepted.`;
      throw new ApiError("ValidationFailed", message, { errors: [{ field: "body", rule: "maxDepth", message }] });
    }
    await next();
  };
}

/**
 * The "permission" of a route any authenticated caller may call because the permission depends on what
 * the request names: `POST /$batch`, whose operations each need their own route's permission
 * (docs/decisions.md, "Batch"); `/Imports`, whose kind of record says it. The route's `permissionNote`
 * says which, and its handler checks.
 */
export const ANY_AUTHENTICATED = "authenticated";

export interface RouteOptions {
  /**
   * The permission a caller needs. Every route names one ({@link ANY_AUTHENTICATED}, with a
   * `permissionNote`, where the request says which).
   */
  permission: Permission | typeof ANY_AUTHENTICATED;
  /** With {@link ANY_AUTHENTICATED}: which permission the handler requires, for the route's description. */
  permissionNote?: string;
  area: ApiArea;
  /** Narrows the area's API versions for this route. */
  versions?: readonly string[];
  /** Largest accepted body in bytes; default MAX_BODY_BYTES. */
  bodyLimit?: number;
  /** Error statuses this route can answer besides 400, 401, 403 and 500. */
  errors?: ErrorStatus[];
  /**
   * Honour Idempotency-Key on a route that is not a POST (every POST does): an upload part, whose
   * retry then replays the first answer instead of sending the part to R2 again.
   */
  idempotent?: boolean;
  /**
   * Appended to the route's operationId, for a second spelling of the same operation (`GET
   * /MainSystem` beside `GET /MainSystems`: listMainSystemAlias beside listMainSystems).
   */
  operationIdSuffix?: string;
}

type Defined<R extends RouteConfig> = R & { middleware: MiddlewareHandler<AppEnv>[] };

// `errors` belongs to the options: in the route config it would be silently ignored, so the type forbids it there.
/**
 * No query parameter is silently ignored: a parameter the route does not declare in its query schema
 * is a 400 naming it and listing the ones the route accepts. A client that misspells a filter, or
 * sends another product's name for it, learns so instead of getting an unfiltered list.
 */
function knownQueryOnly(accepted: readonly string[]): RouteStep {
  const known = new Set(accepted);
  const listed = accepted.length > 0 ? `it accepts ${accepted.join(", ")}` : "it takes no query parameters";
  return (c) => {
    // Most reads carry no query at all: no URL to parse then.
    if (!c.req.url.includes("?")) return;
    const unknown = [...new Set(new URL(c.req.url).searchParams.keys())].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new ApiError(
        "InvalidQuery",
        `${c.req.method} ${c.req.routePath} does not know the query parameter${unknown.length > 1 ? "s" : ""} ` +
          `${unknown.join(", ")}; ${listed}.`,
        {
          errors: unknown.map((name) => ({
            field: `query.${name}`,
            rule: "unknownParameter",
            message: `'${name}' is not a query parameter of this route; ${listed}.`,
          })),
        },
      );
    }
  };
}

/**
 * A route's steps in one middleware, in order: one layer of the request path instead of one per
 * step (each layer is an async frame and a promise on every request; docs/benchmarks.md, "Reads").
 */
function routeSteps(steps: readonly RouteStep[]): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    for (const step of steps) step(c);
    return next();
  };
}

/** The query parameter names a route declares. */
export function declaredQueryParameters(route: Pick<RouteConfig, "request">): string[] {
  const query = route.request?.query as { shape?: Record<string, unknown> } | undefined;
  return query?.shape ? Object.keys(query.shape) : [];
}

export function defineRoute<R extends Omit<RouteConfig, "middleware"> & { errors?: never }>(options: RouteOptions, route: R): Defined<R> {
  // The schemas go first with the checks: a validation message describes a field from its schema.
  const steps = [
    apiVersion(options.area, options.versions),
    knownQueryOnly(declaredQueryParameters(route)),
    ...(options.permission === ANY_AUTHENTICATED ? [] : [requirePermission(options.permission)]),
    rememberRequestSchemas(route.request),
    ...(route.method === "get" || route.method === "head" ? [] : [auditReasonStep]),
  ];
  const middleware: MiddlewareHandler<AppEnv>[] = [routeSteps(steps)];
  const hasJsonBody = Boolean(route.request?.body?.content?.["application/json"]);
  if (route.method !== "get" && route.method !== "head") middleware.push(bodyLimit(options.bodyLimit, hasJsonBody));
  // An optional body sent as the original client's "empty" one, the JSON string "", is no body (./empty-body.ts).
  if (hasJsonBody && route.request?.body?.required !== true) middleware.push(emptyJsonStringIsNoBody());
  if (hasJsonBody) middleware.push(jsonMediaType(route.request?.body?.required !== true), jsonDepthLimit());
  const idempotent = route.method === "post" || options.idempotent === true;
  if (idempotent) middleware.push(idempotency);

  const errorResponses: Record<number, ReturnType<typeof problem>> = { ...COMMON_ERRORS };
  for (const status of options.errors ?? []) errorResponses[status] = ERROR_RESPONSES[status];
  if (idempotent) errorResponses[409] = ERROR_RESPONSES[409];
  if (idempotent) errorResponses[422] = ERROR_RESPONSES[422];
  if (hasJsonBody) {
    errorResponses[413] = ERROR_RESPONSES[413];
    errorResponses[415] = ERROR_RESPONSES[415];
  }
  const headers = route.request?.headers;
  const key = `${route.method.toUpperCase()} ${route.path}`;
  const config = createRoute({
    ...route,
    operationId:
      (route.operationId ?? OPERATION_IDS[key] ?? deriveOperationId(route.method, route.path)) + (options.operationIdSuffix ?? ""),
    security: [{ bearer: [] }],
    description: [
      route.description,
      options.permission === ANY_AUTHENTICATED
        ? `Any authenticated caller; ${options.permissionNote ?? "the handler checks the permission the request needs"}.`
        : `Requires the permission \`${options.permission}\`.`,
    ]
      .filter(Boolean)
      .join("\n\n"),
    "x-permission": options.permission,
    "x-api-versions": options.versions ?? undefined,
    parameters: [...((route.parameters as object[] | undefined) ?? []), ...honouredHeaders(route, options, errorResponses)],
    request: { ...withExample(route.request, REQUEST_EXAMPLES[key]), ...(headers ? { headers } : {}) },
    responses: { ...errorResponses, ...route.responses },
    middleware,
  } as R & { middleware: MiddlewareHandler<AppEnv>[] });
  return config as Defined<R>;
}

/**
 * Verbs for the action segments of the interface (`POST /Jobs/{id}/Cancellation` is `cancelJob`),
 * with a word that follows the resource when the action is a variant (`executeJobChain`).
 */
const ACTIONS: Record<string, [verb: string, suffix?: string]> = {
  Cancellation: ["cancel"],
  ChainExecution: ["execute", "Chain"],
  Completion: ["complete"],
  DirectCompletion: ["complete", "Directly"],
  DryRun: ["dryRun"],
  Duplication: ["duplicate"],
  Execution: ["execute"],
  PresignedUrl: ["presign"],
  Resynchronization: ["resynchronize"],
  Search: ["search"],
};

/** Plurals the trailing-s rule gets wrong, and words that stay as they are. */
const IRREGULAR: Record<string, string> = {
  Indices: "Index",
  Medias: "Media",
  Statuses: "Status",
  UniqueValues: "UniqueValues",
  Data: "Data",
};

const pascal = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

function singular(word: string): string {
  const w = pascal(word);
  for (const [plural, one] of Object.entries(IRREGULAR)) if (w.endsWith(plural)) return w.slice(0, -plural.length) + one;
  if (w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  if (w.endsWith("ses")) return w.slice(0, -2);
  if (w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  return w;
}

/**
 * The operationId of a route, from its method and path, so generated clients get the same readable
 * method names release after release: `GET /Deviations` listDeviations, `POST /Deviations`
 * createDeviation, `PUT /Deviations` updateDeviation, `GET|DELETE /Deviations/{id}` getDeviation /
 * deleteDeviation, `GET /Deviations/{id}/WorkItems` listDeviationWorkItems, `POST
 * /Deviations/{id}/WorkItems/{workItemId}` linkDeviationWorkItem, `GET /Deviations/UniqueValues`
 * getDeviationUniqueValues, actions by their verb (`POST /Queries/{id}/Execution` executeQuery).
 * Where this reads badly or two routes would share a name, {@link OPERATION_IDS} or the route's own
 * `operationId` says it; test/conventions/openapi.test.ts holds every operation to a unique one.
 */
export function deriveOperationId(method: string, path: string): string {
  const segments = path.split("/").filter(Boolean);
  const literals = segments.filter((segment) => !segment.startsWith("{"));
  const endsWithParameter = segments.at(-1)?.startsWith("{") ?? false;
  const verbOf = method.toLowerCase();
  const action = verbOf === "get" ? undefined : literals.find((word) => ACTIONS[word]);
  if (action) {
    const [verb, suffix = ""] = ACTIONS[action]!;
    return (
      verb +
      literals
        .filter((word) => word !== action)
        .map(singular)
        .join("") +
      suffix
    );
  }
  const last = literals.at(-1) ?? "Root";
  const head = literals.slice(0, -1).map(singular).join("");
  if (endsWithParameter) {
    const verb =
      ({ get: "get", put: "update", patch: "update", delete: "delete", post: "link" } as Record<string, string>)[verbOf] ?? verbOf;
    return verb + head + singular(last);
  }
  switch (verbOf) {
    case "get":
      return (literals.length === 1 || (singular(last) !== pascal(last) && last !== "UniqueValues") ? "list" : "get") + head + pascal(last);
    case "post":
      return `create${head}${singular(last)}`;
    case "put":
    case "patch":
      // `PUT /Deviations` replaces one deviation; `PUT /ActivityTemplates/{id}/InputTemplates` all of them.
      return `update${head}${literals.length === 1 ? singular(last) : pascal(last)}`;
    case "delete":
      return `delete${head}${singular(last)}`;
    default:
      return verbOf + head + pascal(last);
  }
}

/** Where the derived operationId reads badly or collides (keyed `METHOD /path`). */
export const OPERATION_IDS: Record<string, string> = {
  "GET /EntityTypes/Default": "getDefaultEntityType",
  "GET /Users/me": "getCurrentUser",
  // Issue 36: one plan's forecast, and the forecast across plans.
  "GET /InspectionPlans/{id}/Forecast": "getInspectionPlanForecast",
  "GET /InspectionPlans/Forecast": "getInspectionPlansForecast",
  "PUT /Files/Uploads/{uploadId}/Parts/{partNumber}": "uploadFilePart",
  "PUT /MonitorJobs/{id}/{status}": "setMonitorJobStatus",
  // Links are made with POST and undone with DELETE on the same path.
  "DELETE /Deviations/{id}/WorkItems/{workItemId}": "unlinkDeviationWorkItem",
  "DELETE /WorkItems/{id}/Deviations/{deviationId}": "unlinkWorkItemDeviation",
  "DELETE /Activities/{id}/MediaReferences/{mediaReferenceId}": "unlinkActivityMediaReference",
  "DELETE /WorkItems/{id}/FileReferences/{fileReferenceId}": "unlinkWorkItemFileReference",
  "DELETE /WorkItems/{id}/FileReferences": "unlinkWorkItemFileReferenceByQuery",
  "DELETE /WorkTemplates/{id}/FileReferences/{fileReferenceId}": "unlinkWorkTemplateFileReference",
  "DELETE /WorkTemplates/{id}/FileReferences": "unlinkWorkTemplateFileReferenceByQuery",
  // The spec's form names the population in a header; the path form names it in the path.
  "POST /Models/{id}/Populations/{populationId}/Items": "createModelPopulationItemByPath",
  "POST /Monitors/{id}/Populations/{populationId}/Items": "createMonitorPopulationItemByPath",
  "POST /$batch": "executeBatch",
};

interface HeaderParameter {
  name: string;
  in: "header";
  required: false;
  description: string;
  schema: Record<string, unknown>;
}

/**
 * The headers every operation of a kind honours, described once in components.parameters (the
 * document names them by reference; src/docs/routes.ts registers them).
 */
export const SHARED_HEADERS: Record<string, HeaderParameter> = {
  SessionBookmark: {
    name: "X-Session-Bookmark",
    in: "header",
    required: false,
    description:
      "The `X-Session-Bookmark` of the last answer you got: this request then sees at least everything that answer " +
      "had written, on whichever database replica it is served (read your own writes).",
    schema: { type: "string" },
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes a retried POST safe: a repeat with the same key and request replays the first answer (with " +
      "`idempotent-replayed: true`); the same key with another request is a 422, while the first is still running a " +
      "409. 1 to 255 visible ASCII characters, kept per user.",
    schema: { type: "string", minLength: 1, maxLength: 255, example: "create-deviation-7f3a9c" },
  },
  IfNoneMatch: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "The ETag of the copy you hold: 304 with no body when it is still current.",
    schema: { type: "string" },
  },
  AuditReason: {
    name: AUDIT_REASON_HEADER,
    in: "header",
    required: false,
    description:
      "Why this change is made, recorded with it in the audit trail (GET /AuditTrail, GET /{Resource}/{id}/History). One line of " +
      `text, at most ${MAX_AUDIT_REASON} characters, no control characters; text beyond Latin-1 is sent percent-encoded (UTF-8). ` +
      "A reason that breaks these rules is a 400 naming the header, and nothing is written.",
    schema: { type: "string", maxLength: MAX_AUDIT_REASON, example: "Corrected the wall thickness after re-measurement (WO-4711)" },
  },
  IfMatch: {
    name: "If-Match",
    in: "header",
    required: false,
    description: "The ETag from a read: the write fails with 412 when the resource has changed since. Without it, the last writer wins.",
    schema: { type: "string" },
  },
};

/**
 * The request headers the service honours on this route, declared so generated clients and the
 * reference page can send them: api-version (the versions the route serves), X-Session-Bookmark
 * (every route: src/handlers.ts opens the D1 session with it), Idempotency-Key (POST, and routes marked idempotent), If-None-Match
 * (reads that answer 304) and If-Match (writes that answer 412), unless the route declares one itself.
 */
function honouredHeaders(
  route: Omit<RouteConfig, "middleware">,
  options: RouteOptions,
  errors: Record<number, unknown>,
): (HeaderParameter | { $ref: string })[] {
  const declared = new Set<string>();
  const shape = (route.request?.headers as { shape?: Record<string, unknown> } | undefined)?.shape;
  for (const name of Object.keys(shape ?? {})) declared.add(name.toLowerCase());
  for (const p of (route.parameters as { name?: string; in?: string }[] | undefined) ?? [])
    if (p.in === "header" && p.name) declared.add(p.name.toLowerCase());

  const versions = options.versions ?? API_AREAS[options.area];
  const latest = versions[versions.length - 1]!;
  // The original product's services' versions this route accepts (src/pkg/original-services.ts), answered as its latest.
  const originals = originalVersionsOf(route.path).filter((o) => !versions.includes(o.version));
  const apiVersionHeader: HeaderParameter = {
    name: "api-version",
    in: "header",
    required: false,
    description:
      `The API version of this request; absent means the latest, ${latest}.` +
      (originals.length > 0
        ? ` Also accepted, answered as ${latest}, as the original product's services sent them: ` +
          `${originals.map((o) => `${o.version} (${o.service})`).join(", ")}.`
        : ""),
    schema: { type: "string", enum: [...versions], default: latest },
  };
  const shared: (keyof typeof SHARED_HEADERS)[] = ["SessionBookmark"];
  if (route.method === "post" || options.idempotent === true) shared.push("IdempotencyKey");
  if ((route.responses as Record<number, unknown> | undefined)?.[304]) shared.push("IfNoneMatch");
  if (errors[412] && route.method !== "get") shared.push("IfMatch");
  if (route.method !== "get" && route.method !== "head") shared.push("AuditReason");
  return [
    ...(declared.has("api-version") ? [] : [apiVersionHeader]),
    ...shared
      .filter((name) => !declared.has(SHARED_HEADERS[name]!.name.toLowerCase()))
      .map((name) => ({ $ref: `#/components/parameters/${name}` })),
  ];
}

/** The request with a domain example on its JSON body, when one is written in src/pkg/openapi-examples.ts. */
function withExample(request: RouteConfig["request"], example: unknown): RouteConfig["request"] {
  const content = request?.body?.content;
  const media = content?.["application/json"];
  if (!request?.body || !content || !media || example === undefined) return request;
  return { ...request, body: { ...request.body, content: { ...content, "application/json": { ...media, example } } } };
}

/** The shared id path parameter. */
export const IdParam = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, example: "0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10" }),
});

/** Request headers documented on every update and delete. */
export const IfMatchHeader = z.object({
  "if-match": z
    .string()
    .optional()
    .openapi({ description: "The ETag from a read; the write fails with 412 when it is no longer current." }),
});

/** A JSON response of a route: `responses: { 200: json(Schema, "What it is.") }`. */
export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

/** A required JSON request body: `request: { ...jsonBody(Schema) }`. */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({ body: { required: true, content: { "application/json": { schema } } } });

/** A list's 200 response, `json(z.array(Item), "...")`, with its X-Total-Count header documented. */
export const withTotalCount = <R extends object>(
  response: R,
  description = "Matches before skip and take; only with includeTotal=true.",
) => ({
  ...response,
  headers: { "x-total-count": { description, schema: { type: "integer" as const } } },
});

/** One page of a list (src/pkg/query): its items, with X-Total-Count when the caller asked for the total. */
export function answerPage<T>(c: Context, page: { items: T; total?: number }): JsonAnswer<T, 200> {
  if (page.total !== undefined) c.header("x-total-count", String(page.total));
  return c.json(page.items as object, 200) as unknown as JsonAnswer<T, 200>;
}

/** The 304 of a read that honours If-None-Match. */
export const notModified = { 304: { description: "Not modified (If-None-Match)." } };
