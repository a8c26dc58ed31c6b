import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { ListQuerySchema, UniqueValuesQuerySchema, UniqueValuesResponseSchema, type UniqueValuesResult } from "../../src/pkg/query";

function appWith() {
  const app = new OpenAPIHono();
  app.openapi(
    createRoute({ method: "get", path: "/things", request: { query: ListQuerySchema }, responses: { 200: { description: "ok" } } }),
    (c) => c.json(c.req.valid("query"), 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/things/unique",
      request: { query: UniqueValuesQuerySchema },
      responses: { 200: { description: "ok", content: { "application/json": { schema: UniqueValuesResponseSchema } } } },
    }),
    (c) => {
      const answer: UniqueValuesResult[] = [{ fieldName: c.req.valid("query").fieldNames ?? "", values: [] }];
      return c.json(answer, 200);
    },
  );
  return app;
}

describe("query parameter schemas", () => {
  it("documents every common list parameter", () => {
    const doc = appWith().getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
    const list = doc.paths?.["/things"]?.get?.parameters as { name: string; required: boolean; description?: string }[];
    expect(list.map((p) => p.name)).toEqual(["ids", "excludeIds", "searchText", "properties", "order", "skip", "take", "includeTotal"]);
    expect(list.every((p) => p.description && !p.required)).toBe(true);
    const uniqueParams = doc.paths?.["/things/unique"]?.get?.parameters as { name: string; required: boolean }[];
    expect(uniqueParams.map((p) => [p.name, p.required])).toEqual([
      ["fieldNames", true],
      ["ids", false],
      ["excludeIds", false],
    ]);
  });

  it("coerces skip and take and leaves the rest to the engine", async () => {
    const res = await appWith().request("/things?skip=3&take=50&properties=Depth%20gt%202");
    expect(await res.json()).toEqual({ skip: 3, take: 50, properties: "Depth gt 2" });
    expect((await appWith().request("/things?take=1001")).status).toBe(400);
    expect(await (await appWith().request("/things?includeTotal=true")).json()).toEqual({ includeTotal: "true" });
    expect((await appWith().request("/things?includeTotal=1")).status).toBe(400);
    // A missing fieldNames passes zod, so the engine answers it as InvalidQuery like every query mistake.
    expect((await appWith().request("/things/unique")).status).toBe(200);
  });
});
