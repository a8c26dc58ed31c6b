import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { UniqueValuesQuerySchema, UniqueValuesResponseSchema } from "../../pkg/query";
import { listPropertyDefinitions, propertyDefinitionUniqueValues } from "./list";
import {
  CreatePropertyDefinitionSchema,
  ListPropertyDefinitionsQuery,
  PropertyDefinitionSchema,
  UpdatePropertyDefinitionSchema,
} from "./schema";
import { createPropertyDefinition, deletePropertyDefinition, updatePropertyDefinition } from "./service";
import { getDefinition } from "./store";

const tags = ["Property definitions"];
const read = { permission: PERMISSIONS.propertiesRead, area: "properties" } as const;
const write = { permission: PERMISSIONS.propertiesWrite, area: "properties" } as const;

export function propertyDefinitionsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/PropertyDefinitions",
      tags,
      summary: "List property definitions",
      description:
        "Filters combine with and; each list filter matches any of its items. With includeTotal=true, the total before " +
        "paging is in X-Total-Count.",
      request: { query: ListPropertyDefinitionsQuery },
      responses: {
        200: withTotalCount(
          json(z.array(PropertyDefinitionSchema), "One page of definitions."),
          "Definitions matching the filters before skip and take; only with includeTotal=true.",
        ),
      },
    }),
    async (c) => answerPage(c, await listPropertyDefinitions(c.env.DB, c.req.valid("query"))),
  );

  // Before /{id}, so "UniqueValues" is not read as an id.
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/PropertyDefinitions/UniqueValues",
      tags,
      summary: "Unique values of definition fields",
      description:
        "fieldNames: format, applicationRule, unit, required, category (value: id, displayName: name), classification (the same).",
      request: { query: UniqueValuesQuerySchema },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await propertyDefinitionUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/PropertyDefinitions/{id}",
        tags,
        summary: "Get a property definition",
        request: { params: IdParam },
        responses: {
          200: json(PropertyDefinitionSchema, "The definition, with its ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const found = await getDefinition(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/PropertyDefinitions",
      tags,
      summary: "Create a property definition",
      description: "Without a category the definition goes to the default category (Ungrouped). Every broken rule is listed in errors[].",
      request: { body: { required: true, content: { "application/json": { schema: CreatePropertyDefinitionSchema } } } },
      responses: { 201: json(PropertyDefinitionSchema, "The created definition.") },
    }),
    async (c) => {
      const created = await createPropertyDefinition(writeContext(c), c.req.valid("json"));
      c.header("location", `/PropertyDefinitions/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/PropertyDefinitions",
        tags,
        summary: "Replace a property definition (the id is in the body)",
        description:
          "The whole definition is replaced; the name cannot change. While values are stored for the property, format, classification, " +
          "entityType and isMultiselect cannot change (409); while entity types link it, the application rule can change " +
          "only to one they accept.",
        request: {
          headers: IfMatchHeader,
          body: { required: true, content: { "application/json": { schema: UpdatePropertyDefinitionSchema } } },
        },
        responses: { 200: json(PropertyDefinitionSchema, "The updated definition.") },
      },
    ),
    async (c) => {
      const updated = await updatePropertyDefinition(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/PropertyDefinitions/{id}",
        tags,
        summary: "Delete a property definition no entity type links and no entity holds a value of",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deletePropertyDefinition(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
