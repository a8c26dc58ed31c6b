/** CRUD /DeviationTypes: a view of the entity types that deviations use (spec 2.3). */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { DeviationTypeListQuery, listDeviationTypes } from "./list";
import { CreateDeviationTypeSchema, DeviationTypeSchema, UpdateDeviationTypeSchema } from "./schema";
import { createDeviationType, deleteDeviationType, getDeviationType, updateDeviationType } from "./store";

const tags = ["Deviation types"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const RULES =
  "Linked definitions must have the application rule deviationType (the type's own properties; deviatioType is " +
  "accepted as a spelling) or Deviation " +
  "(the properties its deviations carry); General accepts every rule. At most one linked definition may have " +
  "metadata.displayNameField = true. " +
  "`properties` gives values for the linked deviationType definitions only.";

export function deviationTypesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/DeviationTypes",
      tags,
      summary: "List deviation types (General first)",
      request: { query: DeviationTypeListQuery },
      responses: {
        200: withTotalCount(json(z.array(DeviationTypeSchema), "One page of deviation types.")),
      },
    }),
    async (c) => answerPage(c, await listDeviationTypes(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/DeviationTypes/{id}",
        tags,
        summary: "Get a deviation type",
        request: { params: IdParam },
        responses: {
          200: json(DeviationTypeSchema, "The deviation type, with its ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const found = await getDeviationType(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/DeviationTypes",
      tags,
      summary: "Create a deviation type",
      description: RULES,
      request: { body: { required: true, content: { "application/json": { schema: CreateDeviationTypeSchema } } } },
      responses: { 201: json(DeviationTypeSchema, "The created deviation type.") },
    }),
    async (c) => {
      const created = await createDeviationType(writeContext(c), c.req.valid("json"));
      c.header("location", `/DeviationTypes/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/DeviationTypes",
        tags,
        summary: "Replace a deviation type, its links and its properties (the id is in the body)",
        description: `${RULES} General can be renamed and stays the default.`,
        request: {
          headers: IfMatchHeader,
          body: { required: true, content: { "application/json": { schema: UpdateDeviationTypeSchema } } },
        },
        responses: { 200: json(DeviationTypeSchema, "The updated deviation type.") },
      },
    ),
    async (c) => {
      const updated = await updateDeviationType(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/DeviationTypes/{id}",
        tags,
        summary: "Delete a deviation type no deviation uses (General cannot be deleted)",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteDeviationType(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
