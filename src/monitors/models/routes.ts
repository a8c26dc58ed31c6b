/** Models: GET, POST, PUT and DELETE /Models. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, answerPage, withTotalCount } from "../../pkg/openapi";
import { UniqueValuesResponseSchema } from "../../pkg/query";
import { listModelRows, ModelListQuery, modelUniqueValues, ModelUniqueValuesQuery } from "./list";
import { createModel, deleteModel, getModelRow, toModel, toModels, updateModel } from "./store";
import { CreateModelSchema, ModelSchema, UpdateModelSchema } from "./schema";
import { read, write } from "../route-params";

export function modelsApp() {
  const app = newApp();
  const modelTags = ["Models"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Models",
      tags: modelTags,
      summary: "List models",
      request: { query: ModelListQuery },
      responses: { 200: withTotalCount(json(z.array(ModelSchema), "Newest first by default.")) },
    }),
    async (c) => {
      const { items, total } = await listModelRows(c.env.DB, c.req.valid("query"));
      return answerPage(c, { items: await toModels(c.env.DB, items), total });
    },
  );
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Models/UniqueValues",
      tags: modelTags,
      summary: "Unique values of model fields and properties",
      request: { query: ModelUniqueValuesQuery },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await modelUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Models/{id}",
        tags: modelTags,
        summary: "Get a model with its populations",
        request: { params: IdParam },
        responses: { 200: json(ModelSchema, "The model.") },
      },
    ),
    async (c) => {
      const row = await getModelRow(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, await toModel(c.env.DB, row), row.etag);
    },
  );
  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Models",
      tags: modelTags,
      summary: "Create a model (numbered MOD-n)",
      request: jsonBody(CreateModelSchema),
      responses: { 201: json(ModelSchema, "The model.") },
    }),
    async (c) => {
      const row = await createModel(writeContext(c), c.get("principal"), c.req.valid("json"));
      c.header("location", `/Models/${row.id}`);
      return jsonWithEtag(c, await toModel(c.env.DB, row), row.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Models",
        tags: modelTags,
        summary: "Replace a model; monitors that do not override a field follow it",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateModelSchema) },
        responses: { 200: json(ModelSchema, "The model.") },
      },
    ),
    async (c) => {
      const row = await updateModel(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, await toModel(c.env.DB, row), row.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Models/{id}",
        tags: modelTags,
        summary: "Delete a model no monitor uses",
        request: { params: IdParam },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteModel(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );
  return app;
}
