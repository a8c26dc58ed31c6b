/**
 * Issue 13: no query parameter is silently ignored. Generated from the OpenAPI document (the route
 * table), so a route added later is covered without a new test.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

interface Operation {
  parameters?: { name: string; in: string }[];
  security?: unknown[];
}

const doc = (await call("/openapi.json", { anonymous: true })).body as { paths: Record<string, Record<string, Operation>> };
// Not the public routes (`security: []`: /health), which are outside defineRoute and take no query.
const getRoutes = Object.entries(doc.paths)
  .filter(([, methods]) => methods.get && methods.get.security?.length !== 0)
  .map(([path, methods]) => ({ path, declared: (methods.get!.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name) }));

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, "0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10");

describe("unknown query parameters", () => {
  it("covers every GET route of the API", () => {
    expect(getRoutes.length).toBeGreaterThan(40);
  });

  it.each(getRoutes)("GET $path answers 400 naming the parameter and listing the accepted ones", async ({ path, declared }) => {
    const res = await call(`${concrete(path)}?surelyNotAParameter=1`);
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe("InvalidQuery");
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "query.surelyNotAParameter", rule: "unknownParameter" })]);
    for (const name of declared) expect(res.body.detail).toContain(name);
  });

  it("keeps answering declared parameters, including the original client's names", async () => {
    expect((await call("/Deviations?take=1")).status).toBe(200);
    expect((await call("/Jobs?configurationId=0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10")).status).toBe(200);
  });
});
