import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, notModified } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { UniqueValuesQuerySchema, UniqueValuesResponseSchema } from "../../pkg/query";
import { writeTemplate, type Written } from "../writer";
import { listWorkTemplates, WorkTemplateListQuery, workTemplateUniqueValues } from "./list";
import {
  ActivityTemplateLinkListInputSchema,
  CreateWorkTemplateSchema,
  SectionTemplateInputSchema,
  SectionTemplateListInputSchema,
  UpdateWorkTemplateSchema,
  WorkTemplateActivityTemplateInputSchema,
  WorkTemplateActivityTemplateSchema,
  WorkTemplateSchema,
  type WorkTemplate,
} from "./schema";
import { createWorkTemplate, getWorkTemplate } from "./store";

const tags = ["Work templates"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const REVISION_NOTE =
  "Revision rule (spec section 3): while no work item is based on the latest revision it is changed in place; " +
  "once one is, this operation copies it with all its dependents as revision + 1 and changes the copy. The answer " +
  "is the latest revision after the change.";

const SectionParams = IdParam.extend({ sectionTemplateId: z.uuid().openapi({ param: { name: "sectionTemplateId", in: "path" } }) });
const RevisionQuery = z.object({
  revision: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .openapi({ description: "Read this revision instead of the latest (e.g. the one a work item is based on)." }),
});
const templateResponse = (description: string) => json(WorkTemplateSchema, description);

function answer<S extends 200 | 201 = 200>(c: Parameters<typeof jsonWithEtag>[0], written: Written<WorkTemplate>, status: S = 200 as S) {
  return jsonWithEtag(c, written.value, written.etag ?? "", status);
}

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
        200: {
          ...json(z.array(WorkTemplateSchema), "One page of work templates, each at its latest revision."),
          headers: {
            "x-total-count": { description: "Matches before skip and take; only with includeTotal=true.", schema: { type: "integer" } },
          },
        },
      },
    }),
    async (c) => {
      const { items, total } = await listWorkTemplates(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items, 200);
    },
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

  // The activity templates of a revision; `activities` is the original product's client's path for them
  // (its WorkTemplateActivity object reads `workTemplates/{id}/activities`).
  for (const [path, component] of [
    ["/WorkTemplates/{id}/ActivityTemplates", "WorkTemplateActivityTemplate"],
    ["/WorkTemplates/{id}/Activities", "WorkTemplateActivity"],
  ] as const) {
    app.openapi(
      defineRoute(
        { ...read, errors: [404] },
        {
          method: "get",
          path,
          tags,
          summary: "The activity templates of a work template's latest revision (or ?revision=N)",
          description:
            "Its `activityTemplates` as GET /WorkTemplates/{id} shows them, in order: each names the activity template, its " +
            "section and order.",
          request: { params: IdParam, query: RevisionQuery },
          responses: { 200: json(z.array(WorkTemplateActivityTemplateSchema.openapi(component)), "Its activity templates.") },
        },
      ),
      async (c) =>
        c.json((await getWorkTemplate(c.env.DB, c.req.valid("param").id, c.req.valid("query").revision)).value.activityTemplates, 200),
    );
  }

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/WorkTemplates/{id}/ActivityTemplates",
        tags,
        summary: "Replace the activity templates (WorkTemplateActivityTemplate list) of a work template",
        description: REVISION_NOTE,
        request: { params: IdParam, headers: IfMatchHeader, ...jsonBody(ActivityTemplateLinkListInputSchema) },
        responses: { 200: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) =>
      answer(
        c,
        await writeTemplate<WorkTemplate>(c, {
          template: "work",
          action: "replaceActivityTemplates",
          id: c.req.valid("param").id,
          items: c.req.valid("json"),
        }),
      ),
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "post",
        path: "/WorkTemplates/{id}/ActivityTemplates",
        tags,
        summary: "Add one activity template to a work template",
        description: `${REVISION_NOTE} Without an order it goes after the last one.`,
        request: { params: IdParam, headers: IfMatchHeader, ...jsonBody(WorkTemplateActivityTemplateInputSchema) },
        responses: { 201: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) =>
      answer(
        c,
        await writeTemplate<WorkTemplate>(c, {
          template: "work",
          action: "addActivityTemplate",
          id: c.req.valid("param").id,
          item: c.req.valid("json"),
        }),
        201,
      ),
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/WorkTemplates/{id}/SectionTemplates",
        tags,
        summary: "Replace the section templates of a work template",
        description: `${REVISION_NOTE} Activity templates of a section that is no longer listed stay, outside any section.`,
        request: { params: IdParam, headers: IfMatchHeader, ...jsonBody(SectionTemplateListInputSchema) },
        responses: { 200: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) =>
      answer(
        c,
        await writeTemplate<WorkTemplate>(c, {
          template: "work",
          action: "replaceSectionTemplates",
          id: c.req.valid("param").id,
          items: c.req.valid("json"),
        }),
      ),
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "post",
        path: "/WorkTemplates/{id}/SectionTemplates",
        tags,
        summary: "Add one section template to a work template",
        description: `${REVISION_NOTE} Without an order it goes after the last one.`,
        request: { params: IdParam, headers: IfMatchHeader, ...jsonBody(SectionTemplateInputSchema) },
        responses: { 201: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) =>
      answer(
        c,
        await writeTemplate<WorkTemplate>(c, {
          template: "work",
          action: "addSectionTemplate",
          id: c.req.valid("param").id,
          item: c.req.valid("json"),
        }),
        201,
      ),
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/WorkTemplates/{id}/SectionTemplates/{sectionTemplateId}",
        tags,
        summary: "Delete a section template of a work template",
        description:
          `${REVISION_NOTE} Its activity templates stay, outside any section. Answers 200 with the template (not 204), ` +
          `since the change may have created a revision.`,
        request: { params: SectionParams, headers: IfMatchHeader },
        responses: { 200: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) => {
      const { id, sectionTemplateId } = c.req.valid("param");
      return answer(c, await writeTemplate<WorkTemplate>(c, { template: "work", action: "deleteSectionTemplate", id, sectionTemplateId }));
    },
  );

  return app;
}
