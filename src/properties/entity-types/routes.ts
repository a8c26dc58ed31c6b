import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, notModified, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { EntityTypeListQuery, listEntityTypes } from "./list";
import { CreateEntityTypeSchema, EntityTypeSchema, UpdateEntityTypeSchema } from "./schema";
import { createEntityType, deleteEntityType, getDefaultEntityType, getEntityType, updateEntityType } from "./store";

const tags = ["Entity types"];
const read = { permission: PERMISSIONS.propertiesRead, area: "properties" } as const;
const write = { permission: PERMISSIONS.propertiesWrite, area: "properties" } as const;

export function entityTypesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/EntityTypes",
      tags,
      summary: "List entity types (the default first, then by name)",
      request: { query: EntityTypeListQuery },
      responses: {
        200: withTotalCount(
          json(z.array(EntityTypeSchema), "One page of entity types."),
          "Entity types matching the filters before skip and take; only with includeTotal=true.",
        ),
      },
    }),
    async (c) => answerPage(c, await listEntityTypes(c.env.DB, c.req.valid("query"))),
  );

  // Declared before /EntityTypes/{id}, which would otherwise take "Default" for a (malformed) id.
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/EntityTypes/Default",
      tags,
      summary: "Get the default entity type (General)",
      responses: { 200: json(EntityTypeSchema, "The default entity type, with its ETag."), ...notModified },
    }),
    async (c) => {
      const found = await getDefaultEntityType(c.env.DB);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/EntityTypes/{id}",
        tags,
        summary: "Get an entity type with its linked property definitions",
        request: { params: IdParam },
        responses: { 200: json(EntityTypeSchema, "The entity type, with its ETag."), ...notModified },
      },
    ),
    async (c) => {
      const found = await getEntityType(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/EntityTypes",
      tags,
      summary: "Create an entity type",
      description:
        "Linked definitions must exist and fit appliesTo (a type with appliesTo null links any). At most one may have " +
        "metadata.displayNameField = true.",
      request: { body: { required: true, content: { "application/json": { schema: CreateEntityTypeSchema } } } },
      responses: { 201: json(EntityTypeSchema, "The created entity type.") },
    }),
    async (c) => {
      const created = await createEntityType(writeContext(c), c.req.valid("json"));
      c.header("location", `/EntityTypes/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/EntityTypes",
        tags,
        summary: "Replace an entity type and its links (the id is in the body)",
        description: "The default type (General) can be renamed and stays the default; its appliesTo stays null.",
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateEntityTypeSchema } } } },
        responses: { 200: json(EntityTypeSchema, "The updated entity type.") },
      },
    ),
    async (c) => {
      const updated = await updateEntityType(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/EntityTypes/{id}",
        tags,
        summary: "Delete an entity type that no entity uses (the default cannot be deleted)",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteEntityType(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
