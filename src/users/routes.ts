/**
 * GET /Users, /Users/me, /Users/{id}: the read-only directory of everyone who has called the API
 * (issue 21 §4). The original client finds the owner of an upload with `GET /Users?keyword={clientId}`
 * (its identity service, api-version 1.0) and posts that user's `id` as `ObjectOwnerId`.
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, json, notModified, withTotalCount, answerPage } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { ensureRecorded } from "./recorder";
import { UserListQuery, UserSchema } from "./schema";
import { currentUser, getUser, listUsers, userEtag } from "./store";

const tags = ["Users"];
const read = { permission: PERMISSIONS.usersRead, area: "identity" } as const;
const RECORDING =
  "Every person and machine client that calls the API is recorded from its token (id = `sub`, name, kind, client id) after the response, " +
  "at most once every five minutes per principal and isolate, so `lastSeenAt` is accurate to five minutes. The directory is read-only; " +
  'an `objectOwner` anywhere may name a user who is not (yet) in it (docs/decisions.md, "Users").';

export function usersApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Users",
      tags,
      summary: "List users who have called the API (keyword over name, id and client id)",
      description: `${RECORDING} The caller is always in its own directory, even on its first call.`,
      request: { query: UserListQuery },
      responses: {
        200: withTotalCount(json(z.array(UserSchema), "One page of users, ordered by name unless `order` says otherwise.")),
      },
    }),
    async (c) => {
      await ensureRecorded(c.env.DB, c.get("principal"), c.get("clock").now());
      return answerPage(c, await listUsers(c.env.DB, c.req.valid("query")));
    },
  );

  // Before /Users/{id}, so `me` is never read as an id.
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Users/me",
      tags,
      summary: "The caller, as the directory shows it (recorded or not yet)",
      description: RECORDING,
      responses: { 200: json(UserSchema, "The caller, with an ETag."), ...notModified },
    }),
    async (c) => {
      const user = await currentUser(c.env.DB, c.get("principal"), c.get("clock").now());
      return jsonWithEtag(c, user, await userEtag(user));
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Users/{id}",
        tags,
        summary: "Get a user by id",
        description: RECORDING,
        request: {
          params: z.object({
            id: z
              .string()
              .min(1)
              .max(200)
              .openapi({
                param: { name: "id", in: "path" },
                description: "The user's id (a token's `sub`).",
                example: "client:local-integration",
              }),
          }),
        },
        responses: { 200: json(UserSchema, "The user, with an ETag."), ...notModified },
      },
    ),
    async (c) => {
      const user = await getUser(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, user, await userEtag(user));
    },
  );

  return app;
}
