import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, notModified, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { UniqueValuesQuerySchema, UniqueValuesResponseSchema } from "../../pkg/query";
import { writeTemplate, type Written } from "../writer";
import { ActivityTemplateListQuery, activityTemplateUniqueValues, listActivityTemplates } from "./list";
import {
  ActivityTemplateSchema,
  CreateActivityTemplateSchema,
  InputTemplateInputSchema,
  InputTemplateListInputSchema,
  InputTemplateSchema,
  UpdateActivityTemplateSchema,
  type ActivityTemplate,
} from "./schema";
import { createActivityTemplate, getActivityTemplate } from "./store";

const tags = ["Activity templates"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const REVISION_NOTE =
  "Revision rule (spec section 3): while no activity is based on the latest revision (and no work item used it) " +
  "it is changed in place; otherwise this operation copies it with all its input templates as revision + 1 and " +
  "changes the copy. The answer is the latest revision after the change.";

const InputParams = IdParam.extend({ inputTemplateId: z.uuid().openapi({ param: { name: "inputTemplateId", in: "path" } }) });
const RevisionQuery = z.object({
  revision: z.coerce.number().int().min(1).optional().openapi({ description: "Read this revision instead of the latest." }),
});
const templateResponse = (description: string) => json(ActivityTemplateSchema, description);

function answer<S extends 200 | 201 = 200>(
  c: Parameters<typeof jsonWithEtag>[0],
  written: Written<ActivityTemplate>,
  status: S = 200 as S,
) {
  return jsonWithEtag(c, written.value, written.etag ?? "", status);
}

export function activityTemplatesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/ActivityTemplates",
      tags,
      summary: "List activity templates (latest revisions)",
      request: { query: ActivityTemplateListQuery },
      responses: {
        200: withTotalCount(json(z.array(ActivityTemplateSchema), "One page of activity templates, each at its latest revision.")),
      },
    }),
    async (c) => answerPage(c, await listActivityTemplates(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/ActivityTemplates/UniqueValues",
      tags,
      summary: "Unique values of activity template fields (latest revisions)",
      description:
        "fieldNames: displayName, referenceId, status, objectOwner, objectOwner.id, objectOwner.name, activityType " +
        "(value id, displayName name), templateType, revision.",
      request: { query: UniqueValuesQuerySchema },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await activityTemplateUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/ActivityTemplates/{id}",
        tags,
        summary: "Get the latest revision of an activity template (or ?revision=N)",
        request: { params: IdParam, query: RevisionQuery },
        responses: { 200: templateResponse("The revision, with its ETag."), ...notModified },
      },
    ),
    async (c) => {
      const found = await getActivityTemplate(c.env.DB, c.req.valid("param").id, c.req.valid("query").revision);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/ActivityTemplates",
      tags,
      summary: "Create an activity template (revision 1)",
      request: jsonBody(CreateActivityTemplateSchema),
      responses: { 201: templateResponse("The created activity template.") },
    }),
    async (c) => {
      const created = await createActivityTemplate(writeContext(c), c.req.valid("json"));
      c.header("location", `/ActivityTemplates/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/ActivityTemplates",
        tags,
        summary: "Replace an activity template (the id is in the body); may create a revision",
        description: `${REVISION_NOTE} inputTemplates replaces the list when given and keeps it when absent.`,
        request: { headers: IfMatchHeader, ...jsonBody(UpdateActivityTemplateSchema) },
        responses: { 200: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) => {
      const input = c.req.valid("json");
      return answer(c, await writeTemplate<ActivityTemplate>(c, { template: "activity", action: "update", id: input.id, input }));
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/ActivityTemplates/{id}",
        tags,
        summary: "Delete the latest revision (only when no activity is based on it)",
        description:
          "Deletes the latest revision and its input templates; an older revision becomes the latest again. 409 InUse " +
          "when an activity is based on it or a work item used it, or when it is the last revision and a work template " +
          "lists the activity template.",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await writeTemplate(c, { template: "activity", action: "delete", id: c.req.valid("param").id });
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/ActivityTemplates/{id}/InputTemplates",
        tags,
        summary: "Replace the input templates of an activity template",
        description: REVISION_NOTE,
        request: { params: IdParam, headers: IfMatchHeader, ...jsonBody(InputTemplateListInputSchema) },
        responses: { 200: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) =>
      answer(
        c,
        await writeTemplate<ActivityTemplate>(c, {
          template: "activity",
          action: "replaceInputTemplates",
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
        path: "/ActivityTemplates/{id}/InputTemplates",
        tags,
        summary: "Add one input template to an activity template",
        description: `${REVISION_NOTE} Without an order it goes after the last one.`,
        request: { params: IdParam, headers: IfMatchHeader, ...jsonBody(InputTemplateInputSchema) },
        responses: { 201: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) =>
      answer(
        c,
        await writeTemplate<ActivityTemplate>(c, {
          template: "activity",
          action: "addInputTemplate",
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
        path: "/ActivityTemplates/{id}/InputTemplates/{inputTemplateId}",
        tags,
        summary: "Delete an input template of an activity template",
        description: `${REVISION_NOTE} Answers 200 with the template (not 204), since the change may have created a revision.`,
        request: { params: InputParams, headers: IfMatchHeader },
        responses: { 200: templateResponse("The latest revision after the change.") },
      },
    ),
    async (c) => {
      const { id, inputTemplateId } = c.req.valid("param");
      return answer(
        c,
        await writeTemplate<ActivityTemplate>(c, { template: "activity", action: "deleteInputTemplate", id, inputTemplateId }),
      );
    },
  );

  // The input templates of the latest revision; `Inputs` is the original product's client's path for them.
  for (const path of ["/ActivityTemplates/{id}/InputTemplates", "/ActivityTemplates/{id}/Inputs"]) {
    app.openapi(
      defineRoute(
        { ...read, errors: [404] },
        {
          method: "get",
          path,
          tags,
          summary: "The input templates of an activity template's latest revision",
          request: { params: IdParam },
          responses: { 200: json(z.array(InputTemplateSchema), "Its input templates.") },
        },
      ),
      async (c) => c.json((await getActivityTemplate(c.env.DB, c.req.valid("param").id)).value.inputTemplates, 200),
    );
  }

  return app;
}
