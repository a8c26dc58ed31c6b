/** /Activities: create from an activity template revision, read, update, delete, list, unique values. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, notModified, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { exportable, exportList, exportQuery, pagesOf } from "../../export";
import { UniqueValuesResponseSchema } from "../../pkg/query";
import { ActivityListQuery, ActivityUniqueValuesQuery, activityUniqueValues, listActivities } from "./list";
import { ActivityInputSchema, ActivitySchema, CreateActivitySchema, UpdateActivitySchema } from "./schema";
import { getActivity } from "./store";
import { createActivity, deleteActivity, updateActivity } from "./write";
import { assertWorkItemExists } from "../store";

const tags = ["Activities"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;

export function activitiesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Activities",
      tags,
      summary: "List activities",
      request: { query: exportQuery(ActivityListQuery) },
      responses: {
        200: exportable(withTotalCount(json(z.array(ActivitySchema), "One page of activities."))),
      },
    }),
    async (c) => {
      const { format, ...query } = c.req.valid("query");
      if (format) {
        const pages = pagesOf(query, (paged) => listActivities(c.env.DB, paged));
        return (await exportList(c, format, { name: "activities", item: ActivitySchema, pages })) as never;
      }
      return answerPage(c, await listActivities(c.env.DB, query));
    },
  );

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Activities/UniqueValues",
      tags,
      summary: "Unique values of activity fields",
      request: { query: ActivityUniqueValuesQuery },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await activityUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Activities/{id}",
        tags,
        summary: "Get an activity with its inputs",
        request: { params: IdParam },
        responses: { 200: json(ActivitySchema, "The activity, with its ETag."), ...notModified },
      },
    ),
    async (c) => {
      const found = await getActivity(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Activities",
      tags,
      summary: "Create an activity from an activity template revision",
      description:
        "basedOn names the activity template (and optionally a revision; default the latest). With workItemId the " +
        "activity joins that work item and must use the revision the work item used first for that template (400 " +
        "otherwise); the first use is recorded.",
      request: { body: { required: true, content: { "application/json": { schema: CreateActivitySchema } } } },
      responses: { 201: json(ActivitySchema, "The created activity.") },
    }),
    async (c) => {
      const created = await createActivity(writeContext(c), c.req.valid("json"));
      c.header("location", `/Activities/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Activities",
        tags,
        summary: "Update an activity (the id is in the body); basedOn and workItemId cannot change",
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateActivitySchema } } } },
        responses: { 200: json(ActivitySchema, "The updated activity.") },
      },
    ),
    async (c) => {
      const updated = await updateActivity(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Activities/{id}",
        tags,
        summary: "Delete an activity with its inputs",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteActivity(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  // Paths of the original product's client (original-client.md): an activity's inputs, a work item's activities.
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Activities/{id}/Inputs",
        tags,
        summary: "The inputs of an activity (as in the activity)",
        request: { params: IdParam },
        responses: { 200: json(z.array(ActivityInputSchema), "Its inputs.") },
      },
    ),
    async (c) => c.json((await getActivity(c.env.DB, c.req.valid("param").id)).value.inputs, 200),
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/WorkItems/{id}/Activities",
        tags,
        summary: "The activities of a work item (as GET /Activities?workItemIds={id})",
        request: { params: IdParam, query: ActivityListQuery.omit({ workItemIds: true }) },
        responses: { 200: withTotalCount(json(z.array(ActivitySchema), "One page of its activities.")) },
      },
    ),
    async (c) => {
      const id = c.req.valid("param").id;
      await assertWorkItemExists(c.env.DB, id);
      return answerPage(c, await listActivities(c.env.DB, { ...c.req.valid("query"), workItemIds: id }));
    },
  );

  return app;
}
