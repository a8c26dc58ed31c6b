/**
 * The public API reference: /openapi.json (OpenAPI 3.1 generated from the route schemas) and /docs,
 * an interactive page whose scripts are served by this Worker's static assets, so it renders with
 * no internet access.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { forReferencePage, withListGrammar } from "./document";
import type { AppEnv } from "../env";
import { ApiError, problemResponse } from "../pkg/errors";
import { SHARED_HEADERS } from "../pkg/openapi";
import { API_AREAS, knownVersions } from "../pkg/versioning";

/**
 * The version segment of `swagger/{version}/swagger.json`, in either spelling the original clients
 * use: `1.0` (a version this service or an original service answers) or `v1` / `1` (a major
 * version of which it answers one). The same document serves every version.
 */
export function swaggerVersionKnown(segment: string): boolean {
  const known = knownVersions();
  if (known.includes(segment)) return true;
  const major = /^v?(\d+)$/i.exec(segment)?.[1];
  return major !== undefined && known.some((version) => version.split(".")[0] === major);
}

const OAuthError = z
  .object({
    error: z.string().openapi({ example: "invalid_client" }),
    error_description: z.string().openapi({ example: "Unknown client or wrong secret." }),
  })
  .openapi("OAuthError");

/** The routes outside defineRoute (no token, no api-version): documented here so clients see them too. */
function registerPublicRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/health",
    operationId: "getHealth",
    tags: ["Platform"],
    summary: "Whether the service answers",
    description: 'Needs no token. `{ "status": "ok" }` while the Worker runs.',
    security: [],
    responses: {
      200: {
        description: "The service answers.",
        content: { "application/json": { schema: z.object({ status: z.literal("ok") }).openapi("Health") } },
      },
    },
  });
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/connect/token",
    operationId: "requestToken",
    tags: ["Platform"],
    summary: "Get a token for a machine client (OAuth 2.0 client credentials)",
    description:
      "RFC 6749 4.4, as the original product's identity server answered it. Locally only: `npm start` configures one " +
      "client, `local-integration`, " +
      "whose secret is in `.dev/local-oauth-client-secret`; a deployment gets its tokens from its identity provider " +
      '(README, "Machine clients") and answers 404. ' +
      "The client id and secret go in the form or as HTTP Basic; `scope` (space-separated permissions) narrows the client's permissions.",
    security: [],
    request: {
      body: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: z
              .object({
                grant_type: z.literal("client_credentials"),
                client_id: z.string().optional().openapi({ example: "local-integration" }),
                client_secret: z.string().optional(),
                scope: z
                  .string()
                  .optional()
                  .openapi({ description: "Space-separated permissions, a subset of the client's.", example: "files_read files_write" }),
              })
              .openapi("TokenRequest"),
          },
        },
      },
    },
    responses: {
      200: {
        description: "A bearer token for the API.",
        content: {
          "application/json": {
            schema: z
              .object({
                access_token: z.string(),
                token_type: z.literal("Bearer"),
                expires_in: z.number().int().openapi({ example: 3600 }),
                scope: z.string().openapi({ example: "files_read files_write" }),
              })
              .openapi("TokenResponse"),
          },
        },
      },
      400: {
        description: "invalid_request, unsupported_grant_type or invalid_scope.",
        content: { "application/json": { schema: OAuthError } },
      },
      401: { description: "invalid_client: unknown client or wrong secret.", content: { "application/json": { schema: OAuthError } } },
      404: { description: "not_configured: this deployment issues no tokens.", content: { "application/json": { schema: OAuthError } } },
    },
  });
}

/**
 * The reference page. It draws at once (title, how to authorise, where the document is) and loads
 * Swagger UI after the HTML (`defer`), while the document it shows is already being fetched (`preload`).
 */
const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>integrity-edge API reference</title>
  <link rel="icon" href="/favicon.ico" sizes="32x32">
  <link rel="preload" href="/docs/reference.json" as="fetch" crossorigin="anonymous">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="stylesheet" href="/docs/assets/page.css">
  <script defer src="/docs/assets/swagger-ui-bundle.js"></script>
  <script defer src="/docs/assets/init.js"></script>
</head>
<body>
  <header class="page-intro">
    <h1>integrity-edge API reference</h1>
    <p>Every operation with its parameters, bodies, answers and the permission it needs. To send requests from this
    page, press <strong>Authorize</strong> and paste a token (locally: <code>npm run -s token</code>), then
    <strong>Try it out</strong> on an operation: list filters start empty (their examples are shown beside them) and no
    Idempotency-Key is sent unless you type one.</p>
    <p>The document: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). This page draws the same operations from
    its OpenAPI 3.0 form, <a href="/docs/reference.json">/docs/reference.json</a>, which Swagger UI reads several times
    faster.</p>
    <p id="reference-loading" class="page-loading">Loading the operations&hellip;</p>
  </header>
  <div id="reference"></div>
</body>
</html>
`;

export function registerDocs(app: OpenAPIHono<AppEnv>): void {
  for (const [name, parameter] of Object.entries(SHARED_HEADERS))
    app.openAPIRegistry.registerComponent("parameters", name, parameter as never);
  registerPublicRoutes(app);
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "A JWT from the identity provider (locally: `npm run token`). Permissions are read from the `permissions` or `scope` claim.",
  });

  const info = {
    title: "integrity-edge",
    version: "1.0.0",
    description: [
      "Industrial asset-integrity API: deviations, revisioned templates, work items, media, data processing, " +
        "monitors, upload and search.",
      "",
      "Conventions: JSON in camelCase; ids are UUIDs; times ISO 8601 UTC. Errors are RFC 9457 problem details.",
      "Select an API version per request with the `api-version` header (absent = latest of the area): " +
        Object.entries(API_AREAS)
          .map(([area, versions]) => `${area} ${versions.join("/")}`)
          .join(", ") +
        ".",
      "Writes honour `If-Match` (412 on mismatch); reads send `ETag` and honour `If-None-Match`; POST honours `Idempotency-Key`.",
    ].join("\n"),
  };

  // The routes are all registered before the first request, so each form of the document is generated
  // once per isolate (about half a second of CPU) and only its server URL, the request's origin, varies.
  type Generated = ReturnType<typeof app.getOpenAPI31Document> | ReturnType<typeof app.getOpenAPIDocument>;
  const generated = new Map<string, Generated>();
  const documentAnswer = (form: "3.1" | "page", make: () => Generated) => (c: Context<AppEnv>) => {
    let document = generated.get(form);
    if (!document) generated.set(form, (document = make()));
    return c.json({ ...document, servers: [{ url: new URL(c.req.url).origin }] });
  };
  app.get(
    "/openapi.json",
    documentAnswer("3.1", () => withListGrammar(app.getOpenAPI31Document({ openapi: "3.1.0", info, security: [{ bearer: [] }] }))),
  );
  // The reference page's form (src/docs/document.ts): OpenAPI 3.0, whose resolver in Swagger UI is several times
  // faster than its 3.1 one on a document this size, with parameter examples shown rather than filled in.
  app.get(
    "/docs/reference.json",
    documentAnswer("page", () =>
      forReferencePage(withListGrammar(app.getOpenAPIDocument({ openapi: "3.0.3", info, security: [{ bearer: [] }] }))),
    ),
  );

  // The original client reads `components.schemas` from `swagger/{version}/swagger.json` of each area:
  // one service serves one document, so every version an area answers (or maps) gets it, spelt
  // `1.0` or `v1`.
  app.get("/swagger/:version/swagger.json", async (c) => {
    const version = c.req.param("version");
    if (!swaggerVersionKnown(version)) {
      const error = new ApiError(
        "NotFound",
        `No API version '${version}': swagger/{version}/swagger.json takes ${knownVersions().join(", ")} or a major version such as v1.`,
      );
      return problemResponse(error, c.get("requestId"), c.req.path);
    }
    const url = new URL(c.req.url);
    url.pathname = "/openapi.json";
    return app.fetch(new Request(url), c.env, c.executionCtx);
  });

  app.get("/docs", (c) => c.html(DOCS_HTML));
  // Normally the assets layer answers these before the Worker runs; this covers runtimes without it.
  app.get("/docs/assets/*", (c) => c.env.ASSETS.fetch(c.req.raw));
  // Browsers ask for it on every page of the origin; without it each load logged a 401.
  app.get("/favicon.ico", (c) => c.env.ASSETS.fetch(c.req.raw));
}
