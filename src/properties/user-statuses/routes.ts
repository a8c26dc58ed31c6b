import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { listUserStatuses, UserStatusListQuery } from "./list";
import { CreateUserStatusSchema, SystemStatusSchema, UpdateUserStatusSchema, UserStatusSchema } from "./schema";
import { createUserStatus, deleteUserStatus, getUserStatus, listSystemStatuses, updateUserStatus } from "./store";

const tags = ["User statuses"];
const read = { permission: PERMISSIONS.propertiesRead, area: "properties" } as const;
const write = { permission: PERMISSIONS.propertiesWrite, area: "properties" } as const;

export function userStatusesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/SystemStatuses",
      tags,
      summary: "List the system statuses a user status can extend",
      responses: { 200: json(z.array(SystemStatusSchema), "The system statuses in their order.") },
    }),
    async (c) => c.json(await listSystemStatuses(c.env.DB), 200),
  );

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/UserStatuses",
      tags,
      summary: "List user statuses (by order, then name)",
      request: { query: UserStatusListQuery },
      responses: {
        200: withTotalCount(
          json(z.array(UserStatusSchema), "One page of user statuses."),
          "User statuses matching the filters before skip and take; only with includeTotal=true.",
        ),
      },
    }),
    async (c) => answerPage(c, await listUserStatuses(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/UserStatuses/{id}",
        tags,
        summary: "Get a user status",
        request: { params: IdParam },
        responses: {
          200: json(UserStatusSchema, "The user status, with its ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const found = await getUserStatus(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/UserStatuses",
      tags,
      summary: "Create a user status linked to a system status",
      request: { body: { required: true, content: { "application/json": { schema: CreateUserStatusSchema } } } },
      responses: { 201: json(UserStatusSchema, "The created user status.") },
    }),
    async (c) => {
      const created = await createUserStatus(writeContext(c), c.req.valid("json"));
      c.header("location", `/UserStatuses/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/UserStatuses",
        tags,
        summary: "Replace a user status (the id is in the body)",
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateUserStatusSchema } } } },
        responses: { 200: json(UserStatusSchema, "The updated user status.") },
      },
    ),
    async (c) => {
      const updated = await updateUserStatus(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/UserStatuses/{id}",
        tags,
        summary: "Delete a user status that no entity uses",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteUserStatus(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
