import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { CategorySchema, CreateCategorySchema, UpdateCategorySchema } from "./schema";
import { CategoryListQuery, listCategories } from "./list";
import { createCategory, deleteCategory, getCategory, updateCategory } from "./store";

const tags = ["Categories"];
const read = { permission: PERMISSIONS.propertiesRead, area: "properties" } as const;
const write = { permission: PERMISSIONS.propertiesWrite, area: "properties" } as const;

export function categoriesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Categories",
      tags,
      summary: "List categories (the default first, then by name)",
      request: { query: CategoryListQuery },
      responses: {
        200: withTotalCount(
          json(z.array(CategorySchema), "One page of categories."),
          "Categories matching the filters before skip and take; only with includeTotal=true.",
        ),
      },
    }),
    async (c) => answerPage(c, await listCategories(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Categories/{id}",
        tags,
        summary: "Get a category",
        request: { params: IdParam },
        responses: { 200: json(CategorySchema, "The category, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getCategory(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Categories",
      tags,
      summary: "Create a category",
      request: { body: { required: true, content: { "application/json": { schema: CreateCategorySchema } } } },
      responses: { 201: json(CategorySchema, "The created category.") },
    }),
    async (c) => {
      const created = await createCategory(writeContext(c), c.req.valid("json"));
      c.header("location", `/Categories/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Categories",
        tags,
        summary: "Rename a category (the id is in the body)",
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateCategorySchema } } } },
        responses: { 200: json(CategorySchema, "The updated category.") },
      },
    ),
    async (c) => {
      const updated = await updateCategory(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Categories/{id}",
        tags,
        summary: "Delete a category that no property definition uses (the default cannot be deleted)",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteCategory(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
