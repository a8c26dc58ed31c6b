/** Output types: GET, POST, PUT and DELETE /OutputTypes. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, withTotalCount, answerPage } from "../pkg/openapi";
import { createOutputType, deleteOutputType, getOutputType, updateOutputType } from "./output-types";
import { listOutputTypes, OutputTypeListQuery } from "./output-types-list";
import { CreateOutputTypeSchema, OutputTypeSchema, UpdateOutputTypeSchema } from "./schema";
import { read, write } from "./route-params";

export function outputTypesApp() {
  const app = newApp();
  const typeTags = ["Output types"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/OutputTypes",
      tags: typeTags,
      summary: "List output types (by name)",
      request: { query: OutputTypeListQuery },
      responses: {
        200: withTotalCount(
          json(z.array(OutputTypeSchema), "One page of output types."),
          "Output types matching the filters before skip and take; only with includeTotal=true.",
        ),
      },
    }),
    async (c) => answerPage(c, await listOutputTypes(c.env.DB, c.req.valid("query"))),
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/OutputTypes/{id}",
        tags: typeTags,
        summary: "Get an output type",
        request: { params: IdParam },
        responses: {
          200: json(OutputTypeSchema, "The output type, with its ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const found = await getOutputType(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );
  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/OutputTypes",
      tags: typeTags,
      summary: "Create an output type",
      description:
        "`schema` is a JSON Schema (drafts 4, 7, 2019-09, 2020-12; `$schema` picks one, 2020-12 by default) or null; a " +
        "schema that is not valid is refused.",
      request: jsonBody(CreateOutputTypeSchema),
      responses: { 201: json(OutputTypeSchema, "The created output type.") },
    }),
    async (c) => {
      const created = await createOutputType(writeContext(c), c.req.valid("json"));
      c.header("location", `/OutputTypes/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/OutputTypes",
        tags: typeTags,
        summary: "Replace an output type (the id is in the body)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateOutputTypeSchema) },
        responses: { 200: json(OutputTypeSchema, "The updated output type.") },
      },
    ),
    async (c) => {
      const updated = await updateOutputType(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/OutputTypes/{id}",
        tags: typeTags,
        summary: "Delete an output type no config uses",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteOutputType(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );
  return app;
}
