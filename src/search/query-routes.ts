/** Saved queries: GET, POST, PUT and DELETE /Queries, and their execution. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, answerPage, withTotalCount } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { listQueryRows, QueryListQuery } from "./lists";
import { SearchResultSchema, type SearchRequest } from "./query";
import {
  createQuery,
  CreateQuerySchema,
  deleteQuery,
  SavedQuerySchema,
  toQuery,
  updateQuery,
  UpdateQuerySchema,
  visibleQuery,
} from "./queries";
import { maySeeIndex, readIndexRow } from "./store";
import { AREA, queryTags } from "./route-options";
import { runSearch } from "./run-search";

export function queriesApp() {
  const app = newApp();
  const queryRead = { permission: PERMISSIONS.queryReadOwned, area: AREA } as const;
  const queryWrite = { permission: PERMISSIONS.queryWrite, area: AREA } as const;

  app.openapi(
    defineRoute(queryRead, {
      method: "get",
      path: "/Queries",
      tags: queryTags,
      summary: "List your saved queries",
      description: "Your own; everyone's with query_read_all. The My Actions page: `isVisible=true&order=metadata.action.order`.",
      request: { query: QueryListQuery },
      responses: { 200: withTotalCount(json(z.array(SavedQuerySchema), "Saved queries.")) },
    }),
    async (c) => {
      const { items, total } = await listQueryRows(c.env.DB, c.get("principal"), c.req.valid("query"));
      return answerPage(c, { items: items.map(toQuery), total });
    },
  );

  app.openapi(
    defineRoute(
      { ...queryRead, errors: [404] },
      {
        method: "get",
        path: "/Queries/{id}",
        tags: queryTags,
        summary: "Get a saved query",
        request: { params: IdParam },
        responses: { 200: json(SavedQuerySchema, "The query.") },
      },
    ),
    async (c) => {
      const row = await visibleQuery(c.env.DB, c.get("principal"), c.req.valid("param").id);
      return jsonWithEtag(c, toQuery(row), row.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryWrite, errors: [409] },
      {
        method: "post",
        path: "/Queries",
        tags: queryTags,
        summary: "Save a query",
        description:
          "queryObject is checked against the index's mapping (an unknown field is a 400 naming it). objectOwner defaults to you.",
        request: jsonBody(CreateQuerySchema),
        responses: { 201: json(SavedQuerySchema, "The saved query.") },
      },
    ),
    async (c) => {
      const row = await createQuery(writeContext(c), c.get("principal"), c.get("apiVersion"), c.req.valid("json"));
      c.header("location", `/Queries/${row.id}`);
      return jsonWithEtag(c, toQuery(row), row.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryWrite, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Queries",
        tags: queryTags,
        summary: "Update a saved query (the whole object with its id)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateQuerySchema) },
        responses: { 200: json(SavedQuerySchema, "The saved query.") },
      },
    ),
    async (c) => {
      const row = await updateQuery(writeContext(c), c.get("principal"), c.get("apiVersion"), c.req.valid("json"));
      return jsonWithEtag(c, toQuery(row), row.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryWrite, errors: [404, 412] },
      {
        method: "delete",
        path: "/Queries/{id}",
        tags: queryTags,
        summary: "Delete a saved query",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteQuery(writeContext(c), c.get("principal"), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryRead, errors: [404, 409] },
      {
        method: "post",
        path: "/Queries/{id}/Execution",
        tags: queryTags,
        summary: "Execute a saved query (rule 11)",
        description:
          "Needs query_read_owned (see the query) and index_read_owned (read the index's data), spec 5 rule 1. An " +
          "optional body pages through the results ({ skip, take }).",
        request: {
          params: IdParam,
          body: {
            required: false,
            content: {
              "application/json": {
                schema: z
                  .object({ skip: z.number().int().min(0).max(100_000).optional(), take: z.number().int().min(1).max(200).optional() })
                  .strict(),
              },
            },
          },
        },
        responses: { 200: json(SearchResultSchema, "One page of results.") },
      },
    ),
    async (c) => {
      const principal = c.get("principal");
      if (!principal.permissions.has(PERMISSIONS.indexReadOwned))
        throw new ApiError(
          "Forbidden",
          "Executing a saved query also requires the permission 'index_read_owned' (access to the index data).",
        );
      const query = await visibleQuery(c.env.DB, principal, c.req.valid("param").id);
      const index = await readIndexRow(c.env.DB, query.index_id);
      if (!index) throw new ApiError("NotFound", "The query's index no longer exists.");
      if (!maySeeIndex(principal, index, c.get("apiVersion")))
        throw new ApiError("Forbidden", `You may not read index '${index.name}', which this query runs on.`);
      const paging = c.req.valid("json") ?? {};
      const request = {
        ...(JSON.parse(query.query_object) as SearchRequest),
        ...(paging.skip !== undefined ? { skip: paging.skip } : {}),
        ...(paging.take !== undefined ? { take: paging.take } : {}),
      };
      return c.json(await runSearch(c, index, request, "queryObject"), 200);
    },
  );
  return app;
}
