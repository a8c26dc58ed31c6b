import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { API_AREAS } from "../../src/pkg/versioning";
import { call } from "../support/http";

interface Parameter {
  name: string;
  in: string;
  schema?: { enum?: string[] };
}

interface Operation {
  operationId?: string;
  security?: unknown[];
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { content?: Record<string, { schema?: unknown; example?: unknown }> };
  summary?: string;
  "x-permission"?: string;
  "x-api-versions"?: string[];
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, Parameter>; schemas: Record<string, unknown> };
}

/** The routes that need no token (and take no api-version): documented, but outside defineRoute. */
const PUBLIC_OPERATIONS = ["GET /health", "POST /connect/token"];
/** Routes other than POST that honour Idempotency-Key (src/pkg/openapi.ts, `idempotent`). */
const IDEMPOTENT_PUTS = ["PUT /Files/Uploads/{uploadId}/Parts/{partNumber}"];

async function openapi(): Promise<Document> {
  const res = await call("/openapi.json", { anonymous: true });
  expect(res.status).toBe(200);
  return res.body as Document;
}

function operationsOf(doc: Document) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op, where: `${method.toUpperCase()} ${path}` })),
  );
}

/** An operation's parameters with references to components.parameters resolved. */
function parametersOf(doc: Document, op: Operation): Parameter[] {
  return (op.parameters ?? []).map((p) => ("$ref" in p ? doc.components.parameters[p.$ref.split("/").pop()!]! : p));
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
      if (PUBLIC_OPERATIONS.includes(where)) {
        expect(op.security, where).toEqual([]);
        continue;
      }
      expect(op.security, where).toEqual([{ bearer: [] }]);
      expect(op["x-permission"], where).toMatch(/^[a-z_]+$/);
      for (const status of ["400", "401", "403", "500"]) {
        expect(op.responses[status]?.content?.["application/problem+json"], `${where} ${status}`).toBeDefined();
      }
      for (const param of path.match(/\{[^}]+\}/g) ?? []) {
        expect(
          op.parameters?.some((p) => "in" in p && p.in === "path" && `{${p.name}}` === param),
          `${where} documents ${param}`,
        ).toBe(true);
      }
      if (method === "post" || method === "put") expect(op.requestBody ?? op.parameters, where).toBeDefined();
      if (path.endsWith("/{id}") && (method === "get" || method === "delete")) {
        expect(op.responses["404"], `${where} documents 404`).toBeDefined();
      }
    }
  });

  it("documents X-Total-Count on the answer of every list that takes includeTotal", async () => {
    const doc = await openapi();
    const lists = operationsOf(doc).filter(({ op }) => parametersOf(doc, op).some((p) => p.name === "includeTotal"));
    expect(lists.length).toBeGreaterThan(30);
    for (const { op, where } of lists) expect(op.responses["200"]?.headers?.["x-total-count"], where).toBeDefined();
  });

  it("gives every operation a unique, readable operationId, derived from its method and path", async () => {
    const doc = await openapi();
    const seen = new Map<string, string>();
    for (const { op, where } of operationsOf(doc)) {
      expect(op.operationId, `${where} has an operationId`).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(seen.get(op.operationId!), `${where} and ${seen.get(op.operationId!)} share ${op.operationId}`).toBeUndefined();
      seen.set(op.operationId!, where);
    }
    // The names a generated client's users will type (stable: derived, so they change only with the path).
    const expected: Record<string, string> = {
      "GET /Deviations": "listDeviations",
      "POST /Deviations": "createDeviation",
      "PUT /Deviations": "updateDeviation",
      "GET /Deviations/{id}": "getDeviation",
      "DELETE /Deviations/{id}": "deleteDeviation",
      "GET /Deviations/UniqueValues": "getDeviationUniqueValues",
      "GET /Deviations/{id}/WorkItems": "listDeviationWorkItems",
      "POST /Deviations/{id}/WorkItems/{workItemId}": "linkDeviationWorkItem",
      "DELETE /Deviations/{id}/WorkItems/{workItemId}": "unlinkDeviationWorkItem",
      "GET /Indices": "listIndices",
      "POST /Indices/{id}/Search": "searchIndex",
      "POST /Jobs/{id}/Cancellation": "cancelJob",
      "POST /Jobs/ChainExecution": "executeJobChain",
      "GET /Users/me": "getCurrentUser",
      "GET /MainSystem": "listMainSystemAlias",
      "GET /health": "getHealth",
      "POST /connect/token": "requestToken",
    };
    for (const [where, id] of Object.entries(expected)) expect(seen.get(id), id).toBe(where);
  });

  it(
    "declares the headers each operation honours: api-version with its versions, X-Session-Bookmark, " +
      "Idempotency-Key, If-Match, If-None-Match",
    async () => {
      const doc = await openapi();
      for (const { method, op, where } of operationsOf(doc)) {
        if (PUBLIC_OPERATIONS.includes(where)) continue;
        const headers = new Map(
          parametersOf(doc, op)
            .filter((p) => p.in === "header")
            .map((p) => [p.name.toLowerCase(), p]),
        );
        // The route's own versions when it narrows its area's, else one area's.
        const served = op["x-api-versions"] ? [op["x-api-versions"]] : Object.values(API_AREAS).map((versions) => [...versions]);
        expect(served, `${where} api-version`).toContainEqual(headers.get("api-version")?.schema?.enum);
        expect(headers.has("x-session-bookmark"), `${where} X-Session-Bookmark`).toBe(true);
        expect(headers.has("idempotency-key"), `${where} Idempotency-Key`).toBe(method === "post" || IDEMPOTENT_PUTS.includes(where));
        expect(headers.has("if-match"), `${where} If-Match`).toBe(op.responses["412"] !== undefined);
        if (op.responses["304"]) expect(headers.has("if-none-match"), `${where} If-None-Match`).toBe(true);
      }
      const narrowed = parametersOf(doc, doc.paths["/Indices/{id}/Search"]!.post!).find((p) => p.name === "api-version");
      expect(narrowed?.schema?.enum).toEqual([...API_AREAS.search]);
    },
  );

  it("shows domain examples on the main resources' request bodies, each valid against its schema", async () => {
    const doc = await openapi();
    const withExamples = operationsOf(doc).filter(({ op }) => op.requestBody?.content?.["application/json"]?.example !== undefined);
    for (const where of [
      "POST /Deviations",
      "PUT /Deviations",
      "POST /WorkItems",
      "PUT /WorkItems",
      "POST /WorkTemplates",
      "POST /ActivityTemplates",
      "POST /JobConfigurations",
      "PUT /JobConfigurations",
      "POST /Models",
      "POST /Monitors",
      "PUT /Monitors",
      "POST /Indices/{id}/Search",
      "POST /Queries",
    ]) {
      expect(
        withExamples.map((o) => o.where),
        where,
      ).toContain(where);
    }
    for (const { op, where } of withExamples) {
      const media = op.requestBody!.content!["application/json"]!;
      // The body's schema with the document's components beside it, so its $refs resolve.
      const result = new Validator({ ...(media.schema as object), components: doc.components } as never, "2020-12", false).validate(
        media.example,
      );
      expect(result.valid, `${where}: ${JSON.stringify(result.errors.at(-1))}`).toBe(true);
    }
  });

  it("documents /health and /connect/token, which need no token", async () => {
    const doc = await openapi();
    expect(doc.paths["/health"]?.get?.responses["200"]).toBeDefined();
    const token = doc.paths["/connect/token"]?.post;
    expect(Object.keys(token?.requestBody?.content ?? {})).toEqual(["application/x-www-form-urlencoded"]);
    expect(Object.keys(token?.responses ?? {}).sort()).toEqual(["200", "400", "401", "404"]);
  });

  it("serves the document at swagger/{version}/swagger.json in both spellings, and a problem for an unknown version", async () => {
    const reference = await call("/openapi.json", { anonymous: true });
    for (const spelling of ["1.0", "v1", "V1", "1.1", "1.4"]) {
      const res = await call(`/swagger/${spelling}/swagger.json`, { anonymous: true });
      expect(res.status, spelling).toBe(200);
      expect(res.text, spelling).toBe(reference.text);
    }
    for (const unknown of ["v9", "9.0", "latest"]) {
      const res = await call(`/swagger/${unknown}/swagger.json`, { anonymous: true });
      expect(res.status, unknown).toBe(404);
      expect(res.headers.get("content-type"), unknown).toBe("application/problem+json");
      expect(res.body).toMatchObject({ code: "NotFound", status: 404 });
      expect(res.body.detail).toContain("v1");
    }
  });

  it("serves an interactive reference page whose scripts come from this Worker", async () => {
    const res = await call("/docs", { anonymous: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const scripts = [...res.text.matchAll(/<script [^>]*src="([^"]+)"/g)].map((m) => m[1]!);
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
