/** /WorkItems: CRUD with instantiation of work templates, list, unique values, used activity templates. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, notModified, withTotalCount, answerPage } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { exportable, exportList, exportQuery, pagesOf } from "../export";
import { definitionNames } from "../properties/definitions/catalog";
import { UniqueValuesResponseSchema } from "../pkg/query";
import { activitiesApp } from "./activities/routes";
import { UsedActivityTemplateSchema, usedActivityTemplates } from "./activity-templates";
import { fileReferencesApp } from "../file-references/routes";
import { WORK_ITEM_OWNER } from "../file-references/store";
import { listWorkItems, WorkItemListQuery, workItemUniqueValues, WorkItemUniqueValuesQuery } from "./list";
import { CreateWorkItemSchema, UpdateWorkItemSchema, WorkItemSchema } from "./schema";
import { getWorkItem } from "./store";
import { createWorkItem, deleteWorkItem, updateWorkItem } from "./write";

const tags = ["Work items"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;

export function workItemsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/WorkItems",
      tags,
      summary: "List work items",
      request: { query: exportQuery(WorkItemListQuery) },
      responses: {
        200: exportable(withTotalCount(json(z.array(WorkItemSchema), "One page of work items."))),
      },
    }),
    async (c) => {
      const { format, ...query } = c.req.valid("query");
      if (format) {
        const pages = pagesOf(query, (paged) => listWorkItems(c.env.DB, paged, c.get("clock").now()));
        const propertyNames = definitionNames(c.env.DB, "WorkItem");
        return (await exportList(c, format, { name: "work-items", item: WorkItemSchema, pages, propertyNames })) as never;
      }
      return answerPage(c, await listWorkItems(c.env.DB, query, c.get("clock").now()));
    },
  );

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/WorkItems/UniqueValues",
      tags,
      summary: "Unique values of work item fields and WorkItem properties",
      request: { query: WorkItemUniqueValuesQuery },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await workItemUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/WorkItems/{id}",
        tags,
        summary: "Get a work item",
        request: { params: IdParam },
        responses: { 200: json(WorkItemSchema, "The work item, with its ETag."), ...notModified },
      },
    ),
    async (c) => {
      const found = await getWorkItem(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/WorkItems/{id}/ActivityTemplates",
        tags,
        summary: "The activity template revisions the work item used (not necessarily the latest)",
        request: { params: IdParam },
        responses: { 200: json(z.array(UsedActivityTemplateSchema), "The revisions, in the order first used.") },
      },
    ),
    async (c) => c.json(await usedActivityTemplates(c.env.DB, c.req.valid("param").id), 200),
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/WorkItems",
      tags,
      summary: "Create a work item, instantiating the work templates in basedOn",
      description:
        "For each work template in basedOn (its latest revision), every activity template becomes an activity with its " +
        "inputs, the template's tags are merged into the work item's and its file references are copied. The revisions " +
        "used are recorded (which freezes them).",
      request: { body: { required: true, content: { "application/json": { schema: CreateWorkItemSchema } } } },
      responses: { 201: json(WorkItemSchema, "The created work item.") },
    }),
    async (c) => {
      const created = await createWorkItem(writeContext(c), c.req.valid("json"));
      c.header("location", `/WorkItems/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/WorkItems",
        tags,
        summary: "Replace a work item (the id is in the body); templates added to basedOn are instantiated",
        description: "A template already in basedOn cannot be removed (400 `instantiated`); an absent basedOn leaves it unchanged.",
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateWorkItemSchema } } } },
        responses: { 200: json(WorkItemSchema, "The updated work item.") },
      },
    ),
    async (c) => {
      const updated = await updateWorkItem(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/WorkItems/{id}",
        tags,
        summary: "Delete a work item with its activities, file references, links and values",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteWorkItem(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.route(
    "/",
    fileReferencesApp({
      base: "/WorkItems",
      owner: WORK_ITEM_OWNER,
      tag: "Work items",
      listSummary: "List the file references of a work item (its own and those copied from its templates)",
    }),
  );
  app.route("/", activitiesApp());
  return app;
}
