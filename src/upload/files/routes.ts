import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { ApiError, invalid } from "../../pkg/errors";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { RANGE_NOT_SATISFIABLE_RESPONSE } from "../../pkg/range";
import { bodyStream, formBoundary } from "../../pkg/multipart";
import { MAX_REQUEST_BODY } from "../http";
import { viewerOf } from "./access";
import { downloadResponse } from "./download";
import { listFiles } from "./list";
import { postFile } from "./post";
import { FileMetadataSchema, FileSchema, ListFilesQuery, POST_FILE_FORM, UpdateFileStatusSchema, WholeFileStatusSchema } from "./schema";
import { deleteFile, getVisibleFile, setFileMetadata, setFileStatus } from "./store";

const tags = ["Files"];
const read = { permission: PERMISSIONS.filesRead, area: "upload" } as const;
const write = { permission: PERMISSIONS.filesWrite, area: "upload" } as const;
const VISIBILITY =
  "A file is visible to its object owner and its uploader, and to others once its metadata ties it to an asset; otherwise 404.";

export function filesApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Files",
      tags,
      summary: "List files",
      description:
        `Filters combine with and; each list filter matches any of its items. The total before paging is in ` +
        `X-Total-Count (when counted). ${VISIBILITY}`,
      request: { query: ListFilesQuery },
      responses: {
        200: withTotalCount(json(z.array(FileSchema), "One page of files."), "Files matching the filters, before skip and take."),
      },
    }),
    async (c) => answerPage(c, await listFiles(c.env.DB, viewerOf(c.get("principal")), c.req.valid("query"))),
  );

  app.openapi(
    defineRoute(
      { ...write, bodyLimit: MAX_REQUEST_BODY, errors: [413, 415] },
      {
        method: "post",
        path: "/Files",
        tags,
        summary: "Upload a file (multipart form)",
        description:
          "Stores the file under its data type (spec 4.2 rule 8): an extension the data type does not allow is a 400 " +
          "listing the allowed ones, " +
          "and nothing is stored. Without objectOwnerId the caller owns the file. The SHA-256 is computed while the file " +
          "streams to storage. " +
          `At most ${MAX_REQUEST_BODY / 1024 / 1024} MiB per request; larger files go through POST /Files/Uploads (resumable, in parts).`,
        request: { body: { required: true, content: { "multipart/form-data": { schema: POST_FILE_FORM } } } },
        responses: { 201: json(FileSchema, "The stored file's definition (status none), with its ETag and Location.") },
      },
    ),
    async (c) => {
      const boundary = formBoundary(c.req.header("content-type"));
      if (!boundary) throw new ApiError("UnsupportedMediaType", "POST /Files takes a multipart/form-data body (with a boundary).");
      const created = await postFile(writeContext(c), c.env.UPLOADS, viewerOf(c.get("principal")), await bodyStream(c), boundary);
      c.header("location", `/Files/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "put",
        path: "/Files/status",
        tags,
        summary: "Set a file's business status",
        description: `Any status may follow any other (the interface shows no transitions; the caller sets a status). ${VISIBILITY}`,
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateFileStatusSchema } } } },
        responses: { 200: json(FileSchema, "The file with its new status and ETag.") },
      },
    ),
    async (c) => {
      const { id, status } = c.req.valid("json");
      const updated = await setFileStatus(writeContext(c), viewerOf(c.get("principal")), id, status);
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "put",
        path: "/Files",
        tags,
        summary: "Change a file's status with the whole file object (older clients)",
        description:
          `Older clients of the original product send the whole file object with \`userStatus\` (or \`status\`) set; only ` +
          `the status changes, every other field is read-only and ignored. ${VISIBILITY}`,
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: WholeFileStatusSchema } } } },
        responses: { 200: json(FileSchema, "The file with its new status and ETag.") },
      },
    ),
    async (c) => {
      const body = c.req.valid("json");
      const status = body.userStatus ?? body.status;
      if (!status)
        throw invalid("body.userStatus", "required", "userStatus (or status) is required: it is the only field PUT /Files changes.");
      const updated = await setFileStatus(writeContext(c), viewerOf(c.get("principal")), body.id, status);
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Files/{id}",
        tags,
        summary: "Get a file's definition",
        description: VISIBILITY,
        request: { params: IdParam },
        responses: { 200: json(FileSchema, "The file, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getVisibleFile(c.env.DB, viewerOf(c.get("principal")), c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Files/{id}/Data",
        tags,
        summary: "Download a file",
        description:
          "Streams the bytes with the stored Content-Type, `Content-Disposition: attachment` with the stored name (RFC " +
          "6266 `filename*`), " +
          "an ETag (the SHA-256) and `Accept-Ranges: bytes`. One range (`Range: bytes=a-b`, `a-`, `-n`) answers 206; several ranges or a " +
          `malformed header answer 200 with everything; a range past the end answers a 416 problem (code ` +
          `RangeNotSatisfiable) with \`Content-Range: bytes */size\`. If-Range and If-None-Match are honoured. ` +
          `${VISIBILITY}`,
        request: { params: IdParam },
        responses: {
          200: {
            description: "The whole file.",
            content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
          },
          206: {
            description: "The requested range (Content-Range).",
            content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
          },
          304: { description: "Not modified (If-None-Match)." },
          416: RANGE_NOT_SATISFIABLE_RESPONSE,
        },
      },
    ),
    async (c) => {
      const id = c.req.valid("param").id;
      const file = await getVisibleFile(c.env.DB, viewerOf(c.get("principal")), id);
      const response = await downloadResponse(c.env.UPLOADS, file, c.req.raw);
      if (!response) {
        // A ready row always has its object; if it ever does not, say so in the log and treat the file as absent.
        c.get("log").error("file object missing", { fileId: id, key: file.row.r2_key });
        throw new ApiError("NotFound", `The bytes of file ${id} are not available.`);
      }
      return response;
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Files/{id}/Metadata",
        tags,
        summary: "Set a file's access metadata",
        description:
          "objectType (equipment, mainSystem, plant, organization) and objectId tie the file to an asset; from then on " +
          "every holder of files_read " +
          "sees it (until then only its owner and uploader do). Only the owner or the uploader may set it. A file whose " +
          "multipart upload is not " +
          "completed yet: 409.",
        request: {
          params: IdParam,
          headers: IfMatchHeader,
          body: { required: true, content: { "application/json": { schema: FileMetadataSchema } } },
        },
        responses: { 200: json(FileSchema, "The file with its metadata and new ETag.") },
      },
    ),
    async (c) => {
      const updated = await setFileMetadata(writeContext(c), viewerOf(c.get("principal")), c.req.valid("param").id, c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "delete",
        path: "/Files/{id}",
        tags,
        summary: "Delete a file and its bytes",
        description: VISIBILITY,
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteFile(writeContext(c), c.env.UPLOADS, viewerOf(c.get("principal")), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
