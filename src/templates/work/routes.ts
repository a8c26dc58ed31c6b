/** Work templates: GET, POST, PUT and DELETE /WorkTemplates, revisions and unique values; their parts are in part-routes.ts. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, notModified, withTotalCount, answerPage } from "../../pkg/openapi";
import { UniqueValuesQuerySchema, UniqueValuesResponseSchema } from "../../pkg/query";
import { writeTemplate } from "../writer";
import { listWorkTemplates, WorkTemplateListQuery, workTemplateUniqueValues } from "./list";
import { CreateWorkTemplateSchema, UpdateWorkTemplateSchema, WorkTemplateSchema, type WorkTemplate } from "./schema";
import { createWorkTemplate, getWorkTemplate } from "./store";
import { tags, read, write, REVISION_NOTE, RevisionQuery, templateResponse, answer } from "./route-params";
import { workTemplatePartsApp } from "./part-routes";

export function workTemplatesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/WorkTemplates",
      tags,
      summary: "List work templates (latest revisions)",
      request: { query: WorkTemplateListQuery },
      responses: {
        200: withTotalCount(json(z.array(WorkTemplateSchema), "One page of work templates, each at its latest revision.")),
      },
    }),
    async (c) => answerPage(c, await listWorkTemplates(c.env.DB, c.req.valid("query"))),
  );

  // Before /{id}, so "UniqueValues" is not read as an id.
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/WorkTemplates/UniqueValues",
      tags,
      summary: "Unique values of work template fields (latest revisions)",
      description:
        "fieldNames: displayName, referenceId, status, objectOwner (value id, displayName name), objectOwner.id, " +
        "objectOwner.name, typeId, revision, properties.{name}.",
      request: { query: UniqueValuesQuerySchema },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await workTemplateUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/WorkTemplates/{id}",
        tags,
        summary: "Get the latest revision of a work template (or ?revision=N)",
        request: { params: IdParam, query: RevisionQuery },
        responses: { 200: templateResponse("The revision, with its ETag."), ...notModified },
      },
    ),
    async (c) => {
      const found = await getWorkTemplate(c.env.DB, c.req.valid("param").id, c.req.valid("query").revision);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/WorkTemplates",
      tags,
      summary: "Create a work template (revision 1)",
      request: jsonBody(CreateWorkTemplateSchema),
      responses: { 201: templateResponse("The created work template.") },
    }),
    async (c) => {
      const created = await createWorkTemplate(writeContext(c), c.req.valid("json"));
      c.header("location", `/WorkTemplates/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/WorkTemplates",
        tags,
        summary: "Replace a work template (the id is in the body); may create a revision",
        description: `${REVISION_NOTE} activityTemplates and sectionTemplates replace the lists when given and keep them when absent.`,
        request: { headers: IfMatchHeader, ...jsonBody(UpdateWorkTemplateSchema) },
        responses: { 200: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) => {
      const input = c.req.valid("json");
      return answer(c, await writeTemplate<WorkTemplate>(c, { template: "work", action: "update", id: input.id, input }));
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/WorkTemplates/{id}",
        tags,
        summary: "Delete the latest revision (only when no work item is based on it)",
        description:
          "Deletes the latest revision and its dependents. When older revisions exist, the newest of them becomes the " +
          "latest again; with none left the template (and its file references) is gone. 409 InUse when a work item is " +
          "based on the latest revision.",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await writeTemplate(c, { template: "work", action: "delete", id: c.req.valid("param").id });
      return c.body(null, 204);
    },
  );
  app.route("/", workTemplatePartsApp());
  return app;
}
