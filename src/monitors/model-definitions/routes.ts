/** Model definitions: GET, POST, PUT and DELETE /ModelDefinitions, by id and by name and version. */
import { retryWrite } from "../../pkg/resource";
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { ApiError } from "../../pkg/errors";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, answerPage, withTotalCount } from "../../pkg/openapi";
import { DefinitionListQuery, DefinitionVersionListQuery, listDefinitionRows, listDefinitionVersionRows } from "./list";
import {
  createDefinition,
  deleteDefinition,
  deleteDefinitionById,
  findDefinitionByVersion,
  getDefinition,
  definitionOf,
  updateDefinition,
} from "./store";
import { CreateModelDefinitionSchema, ModelDefinitionSchema, UpdateModelDefinitionSchema } from "./schema";
import { read, write, NameVersion, NameParam } from "../route-params";

export function modelDefinitionsApp() {
  const app = newApp();
  const defTags = ["Model definitions"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/ModelDefinitions",
      tags: defTags,
      summary: "List model definitions",
      request: { query: DefinitionListQuery },
      responses: { 200: withTotalCount(json(z.array(ModelDefinitionSchema), "By name, then age.")) },
    }),
    async (c) => {
      const { items, total } = await listDefinitionRows(c.env.DB, c.req.valid("query"));
      return answerPage(c, { items: items.map(definitionOf), total });
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/ModelDefinitions/{id}",
        tags: defTags,
        summary: "Get a model definition",
        request: { params: IdParam },
        responses: { 200: json(ModelDefinitionSchema, "The definition.") },
      },
    ),
    async (c) => {
      const found = await getDefinition(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/ModelDefinitions/{name}/versions",
      tags: defTags,
      summary: "The versions of a model definition, oldest first",
      request: { params: NameParam, query: DefinitionVersionListQuery },
      responses: { 200: withTotalCount(json(z.array(ModelDefinitionSchema), "One page of its versions.")) },
    }),
    async (c) => {
      const { items, total } = await listDefinitionVersionRows(c.env.DB, c.req.valid("param").name, c.req.valid("query"));
      return answerPage(c, { items: items.map(definitionOf), total });
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/ModelDefinitions/{name}/versions/{version}",
        tags: defTags,
        summary: "One version of a model definition",
        request: { params: NameVersion },
        responses: { 200: json(ModelDefinitionSchema, "The version.") },
      },
    ),
    async (c) => {
      const { name, version } = c.req.valid("param");
      const row = await findDefinitionByVersion(c.env.DB, name, version);
      if (!row) throw new ApiError("NotFound", `Model definition ${name} version ${version} does not exist.`);
      return c.json(definitionOf(row), 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/ModelDefinitions/{name}/versions/{version}",
        tags: defTags,
        summary: "Delete a version no model uses",
        request: { params: NameVersion },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      const { name, version } = c.req.valid("param");
      const ctx = writeContext(c);
      await retryWrite(ctx, async () =>
        deleteDefinition(ctx, await findDefinitionByVersion(c.env.DB, name, version), `${name} version ${version}`),
      );
      return c.body(null, 204);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [409, 501, 503] },
      {
        method: "post",
        path: "/ModelDefinitions",
        tags: defTags,
        summary: "Create a model definition (an image by name and version)",
        description:
          "location ACR: the image name:version must be one the container host lists; uri is refused. location External: uri is required.",
        request: jsonBody(CreateModelDefinitionSchema),
        responses: { 201: json(ModelDefinitionSchema, "The definition.") },
      },
    ),
    async (c) => {
      const created = await createDefinition(writeContext(c), c.env, c.req.valid("json"));
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/ModelDefinitions",
        tags: defTags,
        summary: "Replace a model definition",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateModelDefinitionSchema) },
        responses: { 200: json(ModelDefinitionSchema, "The definition.") },
      },
    ),
    async (c) => {
      const updated = await updateDefinition(writeContext(c), c.env, c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/ModelDefinitions/{id}",
        tags: defTags,
        summary: "Delete a model definition no model uses",
        request: { params: IdParam },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteDefinitionById(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );
  return app;
}
