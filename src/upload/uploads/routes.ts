import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, json, ProblemSchema } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { viewerOf } from "../files/access";
import { FileSchema } from "../files/schema";
import { bodyStream } from "../../pkg/multipart";
import { MAX_REQUEST_BODY } from "../http";
import { directUploadConfig } from "./direct";
import {
  DirectCompletionSchema,
  PartParams,
  PresignedPartSchema,
  StartUploadSchema,
  UploadIdParam,
  UploadPartSchema,
  UploadSchema,
} from "./schema";
import { abortUpload, completeUpload, getUpload, presignUploadPart, putPart, startUpload } from "./service";

const tags = ["File uploads"];
// Uploads are writes from start to end; only the caller who started one may use it (others: 404).
const write = { permission: PERMISSIONS.filesWrite, area: "upload" } as const;
const OWN = "Only the caller who started the upload may use it; for anyone else it is a 404. An expired upload is a 404.";

export function uploadsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Files/Uploads",
      tags,
      summary: "Start a resumable upload (for files of any size, in parts)",
      description:
        "Checks the data type and the name's extension now, so a refused file costs no bytes. Send the parts with PUT .../Parts/{n} " +
        "(any order, in parallel, again after a failure), then POST .../Completion. Without activity for 24 h (and at most 6 days after " +
        "the start) the upload is aborted and removed.",
      request: { body: { required: true, content: { "application/json": { schema: StartUploadSchema } } } },
      responses: { 201: json(UploadSchema, "The upload: its id, the file id it becomes, the part size and the expiry.") },
    }),
    async (c) => {
      const upload = await startUpload(writeContext(c), c.env.UPLOADS, viewerOf(c.get("principal")), c.req.valid("json"));
      c.header("location", `/Files/Uploads/${upload.uploadId}`);
      return c.json(upload, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "get",
        path: "/Files/Uploads/{uploadId}",
        tags,
        summary: "An upload and the parts received so far",
        description: `A client that lost its connection reads this and sends only the missing parts. ${OWN}`,
        request: { params: UploadIdParam },
        responses: { 200: json(UploadSchema, "The upload.") },
      },
    ),
    async (c) =>
      c.json(
        await getUpload(c.env.DB, viewerOf(c.get("principal")), c.req.valid("param").uploadId, c.get("clock").now().toISOString()),
        200,
      ),
  );

  app.openapi(
    defineRoute(
      { ...write, bodyLimit: MAX_REQUEST_BODY, idempotent: true, errors: [404, 409, 413] },
      {
        method: "put",
        path: "/Files/Uploads/{uploadId}/Parts/{partNumber}",
        tags,
        summary: "Upload one part (raw bytes)",
        description:
          "The body is the part's bytes (any content type). Every part but the last has exactly partSize bytes; the last at most that. " +
          `Sending a part again replaces it. With an Idempotency-Key, a part sent again with the same key and bytes gets ` +
          `the first answer ` +
          `without being stored again (the bytes are hashed as they pass, never held whole); the same key with other ` +
          `bytes is a 422. ${OWN}`,
        request: {
          params: PartParams,
          body: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
        },
        responses: { 200: json(UploadPartSchema, "The part as recorded.") },
      },
    ),
    async (c) => {
      const { uploadId, partNumber } = c.req.valid("param");
      const length = c.req.header("content-length");
      // The part goes to R2 as it arrives: with its declared length, or, sent chunked (or compressed),
      // with the length the upload expects of it (service.ts).
      const body = { value: await bodyStream(c), size: length !== undefined ? Number(length) : null };
      const part = await putPart(writeContext(c), c.env.UPLOADS, viewerOf(c.get("principal")), { uploadId, partNumber }, body);
      return c.json(part, 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: "/Files/Uploads/{uploadId}/Completion",
        tags,
        summary: "Complete an upload: the file becomes visible",
        description:
          "Needs parts 1..n without gaps, all of partSize but the last (409 naming what is missing otherwise). Assembles them in order, " +
          "sets the checksum from the parts' SHA-256 digests (taken as each part streamed in: `sha256-parts:<hex>-<n>`, " +
          "or the plain SHA-256 " +
          "for one part; see File.checksum) and makes the file ready (status none). Completing again returns the same file (200). " +
          OWN,
        request: { params: UploadIdParam },
        responses: {
          201: json(FileSchema, "The file, now visible, with its ETag and Location."),
          200: json(FileSchema, "The file, from an earlier completion."),
        },
      },
    ),
    async (c) => {
      const { file, created, timing } = await completeUpload(
        writeContext(c),
        c.env.UPLOADS,
        viewerOf(c.get("principal")),
        c.req.valid("param").uploadId,
      );
      c.header("location", `/Files/${file.value.id}`);
      // Assembling (and hashing, when a part has no digest and the file is read back) dominate a completion; the split helps
      // whoever tunes part sizes.
      if (timing) c.header("server-timing", `assemble;dur=${timing.assembleMs}, hash;dur=${timing.hashMs}`);
      return jsonWithEtag(c, file.value, file.etag, created ? 201 : 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409] },
      {
        method: "post",
        path: "/Files/Uploads/{uploadId}/Parts/{partNumber}/PresignedUrl",
        tags,
        summary: "Presign one part for a PUT straight to R2 (when configured)",
        description:
          "Returns a SigV4-presigned S3 UploadPart URL (valid 1 h at most, never past the upload's expiry): PUT the " +
          "part's bytes to it with the " +
          "listed headers, keep the ETag R2 answers, and pass it to POST .../DirectCompletion. When the upload declared " +
          "its size, the part's " +
          "Content-Length is signed, so R2 refuses a part of another size. The deployment needs R2 S3 credentials (R2_ACCESS_KEY_ID, " +
          "R2_SECRET_ACCESS_KEY, R2_ACCOUNT_ID or R2_S3_ENDPOINT); without them: 501 NotConfigured, and parts go through " +
          "PUT .../Parts/{n}. " +
          OWN,
        request: { params: PartParams },
        responses: {
          200: json(PresignedPartSchema, "The URL and how to use it."),
          501: {
            description: "Direct upload is not configured on this deployment (code NotConfigured).",
            content: { "application/problem+json": { schema: ProblemSchema } },
          },
        },
      },
    ),
    async (c) => {
      const viewer = viewerOf(c.get("principal"));
      return c.json(await presignUploadPart(c.env.DB, directUploadConfig(c.env), viewer, c.req.valid("param"), c.get("clock").now()), 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: "/Files/Uploads/{uploadId}/DirectCompletion",
        tags,
        summary: "Complete an upload whose parts were (some or all) sent straight to R2",
        description:
          "As POST .../Completion, with the ETags R2 answered to the presigned PUTs. Listed parts replace parts of the same number sent " +
          "through the Worker; together they must be 1..n without gaps. R2 checks the parts as it assembles them (409 " +
          "rule assemble when an " +
          "ETag is wrong or a part is missing or too small). The file's checksum is then the plain SHA-256 of the " +
          "assembled bytes, read back " +
          "once by this request (the Worker never saw those bytes). A total that differs from the declared size removes " +
          "the upload (409). " +
          OWN,
        request: { params: UploadIdParam, body: { required: true, content: { "application/json": { schema: DirectCompletionSchema } } } },
        responses: {
          201: json(FileSchema, "The file, now visible, with its ETag and Location."),
          200: json(FileSchema, "The file, from an earlier completion."),
        },
      },
    ),
    async (c) => {
      const viewer = viewerOf(c.get("principal"));
      const { file, created } = await completeUpload(
        writeContext(c),
        c.env.UPLOADS,
        viewer,
        c.req.valid("param").uploadId,
        c.req.valid("json").parts,
      );
      c.header("location", `/Files/${file.value.id}`);
      return jsonWithEtag(c, file.value, file.etag, created ? 201 : 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409] },
      {
        method: "delete",
        path: "/Files/Uploads/{uploadId}",
        tags,
        summary: "Abort an upload",
        description: `Discards the parts and the file it would have become. A completed upload: 409 (delete the file instead). ${OWN}`,
        request: { params: UploadIdParam },
        responses: { 204: { description: "Aborted." } },
      },
    ),
    async (c) => {
      await abortUpload(
        c.env.DB,
        c.env.UPLOADS,
        viewerOf(c.get("principal")),
        c.req.valid("param").uploadId,
        c.get("clock").now().toISOString(),
      );
      return c.body(null, 204);
    },
  );

  return app;
}
