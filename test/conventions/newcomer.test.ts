/**
 * What a newcomer meets first (issue 38): answers that end with a newline, a malformed Authorization
 * header answered with a problem that says what is wrong, the favicon browsers ask for, the list
 * grammar on every list, and the reference page's document, whose "Try it out" fills in no example.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ORDER_GRAMMAR, PROPERTIES_GRAMMAR } from "../../src/pkg/query";
import { createDataType, uploadFile } from "../support/factories/upload";
import { call } from "../support/http";

interface Parameter {
  name?: string;
  in?: string;
  description?: string;
  example?: unknown;
  examples?: unknown;
  schema?: { example?: unknown; examples?: unknown };
  $ref?: string;
}
type Document = {
  paths: Record<string, Record<string, { operationId?: string; parameters?: Parameter[]; requestBody?: unknown }>>;
  components: { parameters: Record<string, Parameter> };
};

function queryParameters(document: Document): { operation: string; parameter: Parameter }[] {
  return Object.values(document.paths).flatMap((item) =>
    Object.values(item).flatMap((operation) =>
      (operation.parameters ?? [])
        .filter((p) => p.in === "query")
        .map((parameter) => ({ operation: operation.operationId ?? "?", parameter })),
    ),
  );
}

describe("answers end with a newline", () => {
  it.each([
    ["a read", "/Categories", {}],
    ["a problem", "/Categories/not-an-id", {}],
    ["an anonymous 401", "/Categories", { anonymous: true }],
    ["the health check", "/health", { anonymous: true }],
    ["the OpenAPI document", "/openapi.json", { anonymous: true }],
  ] as const)("%s", async (_name, path, options) => {
    const res = await call(path, options);
    expect(res.headers.get("content-type")).toMatch(/json/);
    expect(res.text.endsWith("}\n") || res.text.endsWith("]\n")).toBe(true);
    expect(res.text.endsWith("\n\n")).toBe(false);
  });

  it("a file's bytes are served as they were uploaded, with nothing added", async () => {
    const bytes = JSON.stringify({ reading: 4.2 });
    const dataType = await createDataType({ allowedExtensions: ["json"] });
    const file = await uploadFile(dataType.id, { name: "reading.json", content: bytes, type: "application/json" });
    const res = await call(`/Files/${file.body.id}/Data`);
    expect(res.status).toBe(200);
    expect(res.text).toBe(bytes);
  });
});

describe("a malformed Authorization header is a problem that says what is wrong", () => {
  it.each([
    ["another scheme", "Basic YTpi", "bearerScheme", /uses the scheme 'Basic'/],
    ["no token", "Bearer", "bearerToken", /holds 'Bearer' and no token/],
    ["npm's banner before the token", "Bearer > integrity-edge@0.1.0 token", "bearerToken", /holds '>' at character 1.*npm run -s token/],
    ["a quoted token", 'Bearer "abc.def.ghi"', "bearerToken", /holds '"' at character 1/],
  ])("%s", async (_name, authorization, rule, detail) => {
    const res = await call("/Categories", { anonymous: true, headers: { authorization } });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.detail).toMatch(detail);
    expect(res.body.errors).toEqual([{ field: "header.Authorization", rule, message: res.body.detail }]);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });
});

it("serves /favicon.ico without a token", async () => {
  const res = await exports.default.fetch(new Request("https://api.test/favicon.ico"));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/icon/);
  // An ICO file: reserved 0, type 1 (icon).
  expect([...new Uint8Array(await res.arrayBuffer()).subarray(0, 4)]).toEqual([0, 0, 1, 0]);
});

describe("the reference", () => {
  it("documents the properties and order grammar on every list that takes them", async () => {
    const document = (await call<Document>("/openapi.json", { anonymous: true })).body;
    const lists = queryParameters(document).filter(({ parameter }) => parameter.name === "properties" || parameter.name === "order");
    expect(lists.length).toBeGreaterThan(30);
    for (const { operation, parameter } of lists) {
      const grammar = parameter.name === "properties" ? PROPERTIES_GRAMMAR : ORDER_GRAMMAR;
      expect(parameter.description, `${operation} ${parameter.name}`).toContain(grammar);
    }
    const deviations = document.paths["/Deviations"]!["get"]!.parameters!.find((p) => p.name === "properties")!;
    expect(deviations.description).toMatch(/^Property filter: .* Names are Deviation-rule property definitions\.$/s);
  });

  it("gives the page a document whose parameters show their examples and fill none in", async () => {
    const page = await call<Document>("/docs/reference.json", { anonymous: true });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ openapi: "3.0.3" });
    const original = (await call<Document>("/openapi.json", { anonymous: true })).body;
    expect(Object.keys(page.body.paths)).toEqual(Object.keys(original.paths));
    const parameters = [
      ...Object.values(page.body.components.parameters),
      ...Object.values(page.body.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.parameters ?? [])),
    ];
    for (const parameter of parameters.filter((p) => !p.$ref)) {
      expect([parameter.example, parameter.examples, parameter.schema?.example, parameter.schema?.examples], parameter.name).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
    }
    expect(page.body.components.parameters["IdempotencyKey"]!.description).toContain("Example: `create-deviation-7f3a9c`");
    const statuses = page.body.paths["/Deviations"]!["get"]!.parameters!.find((p) => p.name === "statuses")!;
    expect(statuses.description).toContain("Example: `new,active`");
  });

  it("POST /Deviations' example body creates a deviation each time it is sent", async () => {
    const document = (await call<Document>("/openapi.json", { anonymous: true })).body;
    const body = (document.paths["/Deviations"]!["post"]!.requestBody as { content: Record<string, { example: unknown }> }).content[
      "application/json"
    ]!.example;
    const first = await call("/Deviations", { method: "POST", body });
    const second = await call("/Deviations", { method: "POST", body });
    expect([first.status, second.status], second.text).toEqual([201, 201]);
    expect(first.body.id).not.toBe(second.body.id);
  });
});
