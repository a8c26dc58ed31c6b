/** A work template's parts: its activity templates and section templates, read per revision and replaced or edited. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody } from "../../pkg/openapi";
import { writeTemplate } from "../writer";
import {
  ActivityTemplateLinkListInputSchema,
  SectionTemplateInputSchema,
  SectionTemplateListInputSchema,
  WorkTemplateActivityTemplateInputSchema,
  WorkTemplateActivityTemplateSchema,
  type WorkTemplate,
} from "./schema";
import { getWorkTemplate } from "./store";
import { tags, read, write, REVISION_NOTE, SectionParams, RevisionQuery, templateResponse, answer } from "./route-params";

export function workTemplatePartsApp() {
  const app = newApp();
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
