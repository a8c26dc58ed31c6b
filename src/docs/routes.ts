/**
 * The public API reference: /openapi.json (OpenAPI 3.1 generated from the route schemas) and /docs,
 * an interactive page whose scripts are served by this Worker's static assets, so it renders with
 * no internet access.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { API_AREAS, knownVersions } from "../pkg/versioning";

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>integrity-edge API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>`;

export function registerDocs(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A JWT from the identity provider (locally: `npm run token`). Permissions are read from the `permissions` or `scope` claim.",
  });

  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "integrity-edge",
      version: "1.0.0",
      description: [
        "Industrial asset-integrity API: deviations, revisioned templates, work items, media, data processing, monitors, upload and search.",
        "",
        "Conventions: JSON in camelCase; ids are UUIDs; times ISO 8601 UTC. Errors are RFC 9457 problem details.",
        "Select an API version per request with the `api-version` header (absent = latest of the area): " +
          Object.entries(API_AREAS)
            .map(([area, versions]) => `${area} ${versions.join("/")}`)
            .join(", ") +
          ".",
        "Writes honour `If-Match` (412 on mismatch); reads send `ETag` and honour `If-None-Match`; POST honours `Idempotency-Key`.",
      ].join("\n"),
    },
    servers: [{ url: new URL(c.req.url).origin }],
    security: [{ bearer: [] }],
  }));

  // The original client reads `components.schemas` from `swagger/{version}/swagger.json` of each area:
  // one service serves one document, so every version an area answers (or maps) gets it.
  app.get("/swagger/:version/swagger.json", async (c) => {
    const version = c.req.param("version");
    if (!knownVersions().includes(version)) {
      return c.json({ title: "Not found", detail: `No API version ${version}; versions: ${knownVersions().join(", ")}.` }, 404);
    }
    const url = new URL(c.req.url);
    url.pathname = "/openapi.json";
    return app.fetch(new Request(url), c.env, c.executionCtx);
  });

  app.get("/docs", (c) => c.html(DOCS_HTML));
  // Normally the assets layer answers these before the Worker runs; this covers runtimes without it.
  app.get("/docs/assets/*", (c) => c.env.ASSETS.fetch(c.req.raw));
}
