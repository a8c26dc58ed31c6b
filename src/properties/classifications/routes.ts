import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { ClassificationListQuery, listClassifications } from "./list";
import { ClassificationElementSchema, ClassificationSchema, CreateClassificationSchema, UpdateClassificationSchema } from "./schema";
import { createClassification, deleteClassification, getClassification, updateClassification } from "./store";

const tags = ["Classifications"];
const read = { permission: PERMISSIONS.propertiesRead, area: "properties" } as const;
const write = { permission: PERMISSIONS.propertiesWrite, area: "properties" } as const;

export function classificationsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Classifications",
      tags,
      summary: "List classifications with their element trees",
      request: { query: ClassificationListQuery },
      responses: {
        200: withTotalCount(
          json(z.array(ClassificationSchema), "One page of classifications."),
          "Classifications matching the filters before skip and take; only with includeTotal=true.",
        ),
      },
    }),
    async (c) => answerPage(c, await listClassifications(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Classifications/{id}",
        tags,
        summary: "Get a classification with its element tree",
        request: { params: IdParam },
        responses: {
          200: json(ClassificationSchema, "The classification, with its ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const found = await getClassification(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  // The original client's ClassificationElement object reads `Classifications/{id}/Elements`.
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Classifications/{id}/Elements",
        tags,
        summary: "The element tree of a classification",
        description:
          "The classification's `elements` as GET /Classifications/{id} shows them: the root elements, each with its `children`.",
        request: { params: IdParam },
        responses: {
          200: json(z.array(ClassificationElementSchema), "The root elements with their children, with the classification's ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const found = await getClassification(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value.elements, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Classifications",
      tags,
      summary: "Create a classification",
      description:
        "Element names are unique in the whole tree (case-insensitive); the tree nests at most 10 levels and holds at most 2000 elements.",
      request: { body: { required: true, content: { "application/json": { schema: CreateClassificationSchema } } } },
      responses: { 201: json(ClassificationSchema, "The created classification.") },
    }),
    async (c) => {
      const created = await createClassification(writeContext(c), c.req.valid("json"));
      c.header("location", `/Classifications/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Classifications",
        tags,
        summary: "Replace a classification and its whole element tree (the id is in the body)",
        description:
          "Removing or renaming an element that a stored property value or a definition's default value still names is " +
          "refused with 409 InUse.",
        request: {
          headers: IfMatchHeader,
          body: { required: true, content: { "application/json": { schema: UpdateClassificationSchema } } },
        },
        responses: { 200: json(ClassificationSchema, "The updated classification.") },
      },
    ),
    async (c) => {
      const updated = await updateClassification(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Classifications/{id}",
        tags,
        summary: "Delete a classification that no property definition references",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteClassification(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
