import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, notModified, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { ActivityTypeListQuery, ActivityTypeSchema, CreateActivityTypeSchema, UpdateActivityTypeSchema } from "./schema";
import { createActivityType, deleteActivityType, getActivityType, listActivityTypes, updateActivityType } from "./store";

const tags = ["Activity types"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
export function activityTypesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/ActivityTypes",
      tags,
      summary: "List activity types",
      request: { query: ActivityTypeListQuery },
      responses: { 200: withTotalCount(json(z.array(ActivityTypeSchema), "One page of activity types.")) },
    }),
    async (c) => answerPage(c, await listActivityTypes(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/ActivityTypes/{id}",
        tags,
        summary: "Get an activity type",
        request: { params: IdParam },
        responses: { 200: json(ActivityTypeSchema, "The activity type, with its ETag."), ...notModified },
      },
    ),
    async (c) => {
      const found = await getActivityType(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/ActivityTypes",
      tags,
      summary: "Create an activity type",
      request: jsonBody(CreateActivityTypeSchema),
      responses: { 201: json(ActivityTypeSchema, "The created activity type.") },
    }),
    async (c) => {
      const created = await createActivityType(writeContext(c), c.req.valid("json"));
      c.header("location", `/ActivityTypes/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/ActivityTypes",
        tags,
        summary: "Replace an activity type (the id is in the body)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateActivityTypeSchema) },
        responses: { 200: json(ActivityTypeSchema, "The updated activity type.") },
      },
    ),
    async (c) => {
      const updated = await updateActivityType(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/ActivityTypes/{id}",
        tags,
        summary: "Delete an activity type no activity template or activity uses (409 InUse otherwise)",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteActivityType(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
