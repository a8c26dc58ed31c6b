import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IfMatchHeader, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { CreateDataTypeSchema, DataTypeIdParam, DataTypeSchema, UpdateDataTypeSchema } from "./schema";
import { DataTypeListQuery, listDataTypes } from "./list";
import { createDataType, deleteDataType, getDataType, updateDataType } from "./store";

const tags = ["Data types"];
// Uploaders pick a data type, so reading them goes with reading files; changing them is an admin's job.
const read = { permission: PERMISSIONS.filesRead, area: "upload" } as const;
const write = { permission: PERMISSIONS.dataTypesWrite, area: "upload" } as const;

export function dataTypesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/DataTypes",
      tags,
      summary: "List data types (by name)",
      request: { query: DataTypeListQuery },
      responses: {
        200: withTotalCount(
          json(z.array(DataTypeSchema), "One page of data types."),
          "Data types matching the filters before skip and take; only with includeTotal=true.",
        ),
      },
    }),
    async (c) => answerPage(c, await listDataTypes(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/DataTypes/{id}",
        tags,
        summary: "Get a data type",
        request: { params: DataTypeIdParam },
        responses: { 200: json(DataTypeSchema, "The data type, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getDataType(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/DataTypes",
      tags,
      summary: "Create a data type",
      description: "The id and the name are unique across the API (the name regardless of case): 409 naming `body.id` or `body.name`.",
      request: { body: { required: true, content: { "application/json": { schema: CreateDataTypeSchema } } } },
      responses: { 201: json(DataTypeSchema, "The created data type.") },
    }),
    async (c) => {
      const created = await createDataType(writeContext(c), c.req.valid("json"));
      c.header("location", `/DataTypes/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/DataTypes",
        tags,
        summary: "Update a data type (the id is in the body and cannot change)",
        description: "New allowedExtensions apply to later uploads; files already stored keep theirs.",
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateDataTypeSchema } } } },
        responses: { 200: json(DataTypeSchema, "The updated data type.") },
      },
    ),
    async (c) => {
      const updated = await updateDataType(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/DataTypes/{id}",
        tags,
        summary: "Delete a data type that no file uses",
        description: "While a file (or an upload in progress) has the data type: 409 `InUse`.",
        request: { params: DataTypeIdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteDataType(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
