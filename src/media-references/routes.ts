/** Media references and their links to activities (work management 1.0; original-client.md). */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, answerPage, withTotalCount } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { listMediaReferences, MediaReferenceListQuery } from "./list";
import { CreateMediaReferenceSchema, MediaReferenceSchema, toMediaReference, UpdateMediaReferenceSchema } from "./schema";
import {
  activityMediaReferences,
  createMediaReference,
  deleteMediaReference,
  getMediaReference,
  linkMediaReference,
  unlinkMediaReference,
  updateMediaReference,
  whatIdNames,
} from "./store";

const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const tags = ["Media references"];
const LinkParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "The activity." }),
  mediaReferenceId: z.uuid().openapi({ param: { name: "mediaReferenceId", in: "path" } }),
});

/**
 * The 404 of a link route given an id that is not a media reference. The original client's users
 * often pass the media's own id (what POST /Medias answered): then the answer says so and names the
 * route that makes a reference to it.
 */
async function explainMediaId(db: Database, error: unknown, activityId: string, id: string): Promise<never> {
  if (!(error instanceof ApiError) || error.code !== "NotFound") throw error;
  const found = await whatIdNames(db, id);
  if (found.reference || !found.media) throw error;
  const message =
    `${id} is a media, not a media reference: make a reference to it with POST /MediaReferences ` +
    `{"mediaId":"${id}"}, then link the reference's id with POST ` +
    `/Activities/${activityId}/MediaReferences/{mediaReferenceId}.`;
  throw new ApiError("NotFound", message, { errors: [{ field: "path.mediaReferenceId", rule: "mediaNotReference", message }] });
}

export function mediaReferencesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/MediaReferences",
      tags,
      summary: "List media references",
      request: { query: MediaReferenceListQuery },
      responses: { 200: withTotalCount(json(z.array(MediaReferenceSchema), "Newest first by default.")) },
    }),
    async (c) => {
      const { items, total } = await listMediaReferences(c.env.DB, c.req.valid("query"));
      return answerPage(c, { items: items.map(toMediaReference), total });
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/MediaReferences/{id}",
        tags,
        summary: "Get a media reference",
        request: { params: IdParam },
        responses: { 200: json(MediaReferenceSchema, "The reference.") },
      },
    ),
    async (c) => {
      const row = await getMediaReference(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, toMediaReference(row), row.etag);
    },
  );
  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/MediaReferences",
      tags,
      summary: "Create a media reference to an existing media",
      request: jsonBody(CreateMediaReferenceSchema),
      responses: { 201: json(MediaReferenceSchema, "The reference.") },
    }),
    async (c) => {
      const row = await createMediaReference(writeContext(c), c.req.valid("json"));
      c.header("location", `/MediaReferences/${row.id}`);
      return jsonWithEtag(c, toMediaReference(row), row.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "put",
        path: "/MediaReferences",
        tags,
        summary: "Update a media reference (the whole object with its id)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateMediaReferenceSchema) },
        responses: { 200: json(MediaReferenceSchema, "The reference.") },
      },
    ),
    async (c) => {
      const row = await updateMediaReference(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, toMediaReference(row), row.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "delete",
        path: "/MediaReferences/{id}",
        tags,
        summary: "Delete a media reference (and its links to activities; the media stays)",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteMediaReference(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Activities/{id}/MediaReferences",
        tags,
        summary: "The media references linked to an activity, in the order they were linked",
        request: { params: IdParam },
        responses: { 200: json(z.array(MediaReferenceSchema), "Its media references (a bare array).") },
      },
    ),
    async (c) => c.json((await activityMediaReferences(c.env.DB, c.req.valid("param").id)).map(toMediaReference), 200),
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: "/Activities/{id}/MediaReferences/{mediaReferenceId}",
        tags,
        summary: "Link a media reference to an activity",
        description:
          "Linking one that is already linked changes nothing and answers 200 (the first link answers 201). The id is a " +
          "media reference's (POST /MediaReferences makes one); a media's own id is a 404 that says so.",
        request: { params: LinkParams },
        responses: { 200: json(MediaReferenceSchema, "Already linked."), 201: json(MediaReferenceSchema, "Linked.") },
      },
    ),
    async (c) => {
      const { id, mediaReferenceId } = c.req.valid("param");
      const { row, created } = await linkMediaReference(writeContext(c), id, mediaReferenceId).catch((error: unknown) =>
        explainMediaId(c.env.DB, error, id, mediaReferenceId),
      );
      return c.json(toMediaReference(row), created ? 201 : 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "delete",
        path: "/Activities/{id}/MediaReferences/{mediaReferenceId}",
        tags,
        summary: "Unlink a media reference from an activity",
        request: { params: LinkParams },
        responses: { 204: { description: "Unlinked." } },
      },
    ),
    async (c) => {
      const { id, mediaReferenceId } = c.req.valid("param");
      await unlinkMediaReference(writeContext(c), id, mediaReferenceId).catch((error: unknown) =>
        explainMediaId(c.env.DB, error, id, mediaReferenceId),
      );
      return c.body(null, 204);
    },
  );
  return app;
}
