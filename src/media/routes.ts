/** The media area (spec 2.6, table 4.2): uploads, their data in three sizes, and instruction images. */
import { retryWrite } from "../pkg/resource";
import { z } from "@hono/zod-openapi";
import { assertMediaUnreferenced } from "../media-references/store";
import { newApp } from "../app-factory";
import { isForeignKeyViolation, writeContext } from "../pkg/db";
import { assertIfMatch, jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { RANGE_NOT_SATISFIABLE_RESPONSE } from "../pkg/range";
import { instructionImageRoutes } from "./instruction-image-routes";
import { listMedia, MediaListQuery } from "./list";
import { MediaDataQuery, MediaSchema, RangeHeaders, UPLOAD_MEDIA_FORM } from "./schema";
import { serveMediaData } from "./serve";
import { deleteObjects } from "./storage";
import { deleteMediaRow, forbiddenToDelete, getMedia } from "./store";
import { MEDIA_MAX_BODY_BYTES, readUploadForm, uploadMedia } from "./upload";

const tags = ["Media"];
const read = { permission: PERMISSIONS.mediaRead, area: "media" } as const;
const write = { permission: PERMISSIONS.mediaWrite, area: "media" } as const;

const dataHeaders = {
  etag: { description: "The stored version's ETag.", schema: { type: "string" } },
  "x-media-size": { description: "The stored version whose bytes are sent: Original, Medium or Small.", schema: { type: "string" } },
  "x-media-size-fallback": {
    description: "true when the size asked for does not exist and the original was sent instead.",
    schema: { type: "string" },
  },
  "content-range": { description: "On 206 and 416.", schema: { type: "string" } },
} as const;

export function mediaApp() {
  const app = newApp();

  app.openapi(
    defineRoute(
      { ...write, bodyLimit: MEDIA_MAX_BODY_BYTES, errors: [413, 415] },
      {
        method: "post",
        path: "/Medias",
        tags,
        summary: "Upload a media file; images are recognised (spec 2.6) and resized",
        description:
          "multipart/form-data with the fields File and Type (image or document); field names and the Type value are " +
          "matched without regard to case. " +
          "At most 20 MiB. The upload succeeds for any file: recognition says which of the four checks failed, and a " +
          "corrupt image keeps only its original.",
        request: { body: { required: true, content: { "multipart/form-data": { schema: UPLOAD_MEDIA_FORM } } } },
        responses: { 201: json(MediaSchema, "The stored media, with its ETag and Location.") },
      },
    ),
    async (c) => {
      const created = await uploadMedia(c, await readUploadForm(c));
      c.header("location", `/Medias/${created.media.id}`);
      return jsonWithEtag(c, created.media, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Medias",
      tags,
      summary: "List media (newest first)",
      description:
        "Filters: ids, excludeIds, searchText (name), types, objectOwnerIds, createdFrom/createdTo; order and paging as " +
        "every list. The original client's Media object reads it with no query.",
      request: { query: MediaListQuery },
      responses: {
        200: withTotalCount(json(z.array(MediaSchema), "One page of media.")),
      },
    }),
    async (c) => answerPage(c, await listMedia(c.env.DB, c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Medias/{id}",
        tags,
        summary: "Get a media's description",
        request: { params: IdParam },
        responses: { 200: json(MediaSchema, "The media, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getMedia(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.media, found.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Medias/{id}/Data",
        tags,
        summary: "Get a media's bytes, for images in one of three sizes",
        description:
          "size (Original, Medium, Small; images only, else 400) defaults to Original. One byte range (Range, If-Range) " +
          "is served as 206; a range past the end is a 416 problem (code RangeNotSatisfiable) " +
          "with Content-Range: bytes */size. X-Media-Size names the version sent; X-Media-Size-Fallback: true when the " +
          "size does not exist and the original was sent.",
        request: { params: IdParam, query: MediaDataQuery, headers: RangeHeaders },
        responses: {
          200: {
            description: "The bytes.",
            headers: dataHeaders,
            content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
          },
          206: { description: "One range of the bytes.", headers: dataHeaders },
          304: { description: "Not modified (If-None-Match)." },
          416: RANGE_NOT_SATISFIABLE_RESPONSE,
        },
      },
    ),
    async (c) => {
      const record = await getMedia(c.env.DB, c.req.valid("param").id);
      return serveMediaData(c, record, c.req.valid("query").size);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Medias/{id}",
        tags,
        summary: "Delete a media (its owner, or a holder of media_write); 409 while media references use it",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted, with every stored size." } },
      },
    ),
    async (c) => {
      const principal = c.get("principal");
      const ctx = writeContext(c);
      const record = await retryWrite(ctx, async () => {
        const record = await getMedia(c.env.DB, c.req.valid("param").id);
        if (record.media.owner.id !== principal.id && !principal.permissions.has(PERMISSIONS.mediaWrite)) throw forbiddenToDelete();
        assertIfMatch(c, record.etag);
        await assertMediaUnreferenced(c.env.DB, record.media.id);
        // A reference created since the check makes the delete a foreign-key failure: the same 409.
        await deleteMediaRow(ctx, record).catch(async (error: unknown) => {
          if (isForeignKeyViolation(error)) await assertMediaUnreferenced(c.env.DB, record.media.id);
          throw error;
        });
        return record;
      });
      // After the row: a failure here leaves objects no row names, which the orphan sweep removes.
      await deleteObjects(
        c.env.MEDIA,
        record.versions.map((v) => v.key),
        c.get("log"),
      );
      return c.body(null, 204);
    },
  );

  app.route("/", instructionImageRoutes());
  return app;
}
