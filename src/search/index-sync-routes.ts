/** A search index's synchronisation and use: resynchronisation, its log, and searching it. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { defineRoute, IdParam, json, jsonBody, withTotalCount, answerPage } from "../pkg/openapi";
import { IndexLogLineSchema, IndexLogQuery, listIndexLogs } from "./lists";
import { SearchRequestSchema, SearchResultSchema } from "./query";
import { startSync, visibleIndex } from "./store";
import { read, write, v11, indexTags } from "./route-options";
import { assertMayChange, resyncTarget } from "./index-requests";
import { runSearch } from "./run-search";

export function indexSyncApp() {
  const app = newApp();
  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "put",
        path: "/Indices/{index}/Resynchronization",
        tags: indexTags,
        summary: "Resynchronise an index (1.1: by id; 1.0: by name)",
        description:
          "Starts a full synchronisation now (one runs at a time; a second request while one runs reports it). Version " +
          "1.1 names the index by id, version 1.0 by name; the other form answers UnsupportedApiVersion.",
        request: {
          params: z.object({
            index: z
              .string()
              .min(1)
              .max(100)
              .openapi({ param: { name: "index", in: "path" }, description: "1.1: the index id; 1.0: the index name." }),
          }),
        },
        responses: {
          202: json(
            z.object({
              syncId: z.string(),
              started: z.boolean().openapi({ description: "false: a synchronisation was already running (its id is given)." }),
            }),
            "Accepted; follow it on the index (status, lastSynchronization) and its logs.",
          ),
        },
      },
    ),
    async (c) => {
      const row = await resyncTarget(c, c.req.valid("param").index);
      assertMayChange(c.get("principal"), row);
      return c.json(await startSync(c.env, row.id, `requested by ${c.get("principal").name || c.get("principal").id}`), 202);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, versions: v11, errors: [404] },
      {
        method: "get",
        path: "/Indices/{id}/Logs",
        tags: indexTags,
        summary: "The index's log: synchronisations and its library's logger lines, newest first",
        request: { params: IdParam, query: IndexLogQuery },
        responses: {
          200: withTotalCount(
            json(z.array(IndexLogLineSchema), "One page of log lines."),
            "Lines matching the filters before skip and take; only with includeTotal=true.",
          ),
        },
      },
    ),
    async (c) => {
      const row = await visibleIndex(c.env.DB, c.get("principal"), { id: c.req.valid("param").id }, c.get("apiVersion"));
      return answerPage(c, await listIndexLogs(c.env.DB, row.id, c.req.valid("query")));
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404, 409] },
      {
        method: "post",
        path: "/Indices/{id}/Search",
        tags: indexTags,
        summary: "Search an index without saving the query",
        description:
          "The same request a saved query holds (queryObject). Only documents you could read through their own endpoints are returned.",
        request: { params: IdParam, ...jsonBody(SearchRequestSchema) },
        responses: { 200: json(SearchResultSchema, "One page of results.") },
      },
    ),
    async (c) => {
      const index = await visibleIndex(c.env.DB, c.get("principal"), { id: c.req.valid("param").id }, c.get("apiVersion"));
      return c.json(await runSearch(c, index, c.req.valid("json")), 200);
    },
  );
  return app;
}
