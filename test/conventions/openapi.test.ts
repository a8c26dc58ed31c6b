import { describe, expect, it } from "vitest";
import { call } from "../support/http";

interface Operation {
  security?: unknown[];
  responses: Record<string, { content?: Record<string, unknown> }>;
  parameters?: { name: string; in: string }[];
  requestBody?: unknown;
  summary?: string;
  "x-permission"?: string;
}

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1 and documents every route with its errors, permission and security", async () => {
    const res = await call("/openapi.json", { anonymous: true });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const operations = Object.entries(res.body.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThan(4);
    for (const { path, method, op } of operations) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.summary, where).toBeTruthy();
      expect(op.security, where).toEqual([{ bearer: [] }]);
      expect(op["x-permission"], where).toMatch(/^[a-z_]+$/);
      for (const status of ["400", "401", "403", "500"]) {
        expect(op.responses[status]?.content?.["application/problem+json"], `${where} ${status}`).toBeDefined();
      }
      for (const param of path.match(/\{[^}]+\}/g) ?? []) {
        expect(op.parameters?.some((p) => p.in === "path" && `{${p.name}}` === param), `${where} documents ${param}`).toBe(true);
      }
      if (method === "post" || method === "put") expect(op.requestBody ?? op.parameters, where).toBeDefined();
      if (path.endsWith("/{id}") && (method === "get" || method === "delete")) {
        expect(op.responses["404"], `${where} documents 404`).toBeDefined();
      }
    }
  });

  it("serves an interactive reference page whose scripts come from this Worker", async () => {
    const res = await call("/docs", { anonymous: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const scripts = [...res.text.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) expect(src.startsWith("/"), `${src} is served locally, not from a CDN`).toBe(true);
    expect(res.text).not.toMatch(/https?:\/\//);
  });
});

it("serves the reference page's script from the Worker's static assets", async () => {
  const res = await call("/docs/assets/swagger-ui-bundle.js", { anonymous: true });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/javascript/);
  expect(res.text.length).toBeGreaterThan(100_000);
});
