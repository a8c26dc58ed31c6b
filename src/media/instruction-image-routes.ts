/** PUT, GET and DELETE /PropertyDefinitions/{id}/InstructionImage (mounted by the media sub-app). */
import { newApp } from "../app-factory";
import { ApiError } from "../pkg/errors";
import { formatEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import {
  deleteInstructionImage,
  encodeBase64,
  getInstructionImage,
  imageEtag,
  instructionImageKeyOf,
  INSTRUCTION_IMAGE_MAX_BODY_BYTES,
  putInstructionImage,
} from "./instruction-image";
import { InstructionImageSchema, PutInstructionImageSchema } from "./schema";

const tags = ["Property definitions"];
const read = { permission: PERMISSIONS.propertiesRead, area: "properties" } as const;
const write = { permission: PERMISSIONS.propertiesWrite, area: "properties" } as const;
const path = "/PropertyDefinitions/{id}/InstructionImage";

function notModified(header: string | undefined, etag: string): boolean {
  return header !== undefined && (header.trim() === "*" || header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag));
}

export function instructionImageRoutes() {
  const app = newApp();

  app.openapi(
    defineRoute(
      { ...write, bodyLimit: INSTRUCTION_IMAGE_MAX_BODY_BYTES, errors: [404, 412, 413] },
      {
        method: "put",
        path,
        tags,
        summary: "Set a property definition's instruction image",
        description:
          "image is base64 (a data: URL is accepted), at most 5 MiB decoded. It must be an image by its magic bytes and " +
          "decode completely (spec 2.6); " +
          "contentType, when given, must be an image type, but the stored type is the detected one. If-Match takes the image's ETag.",
        request: {
          params: IdParam,
          headers: IfMatchHeader,
          body: { required: true, content: { "application/json": { schema: PutInstructionImageSchema } } },
        },
        responses: { 204: { description: "Stored; the new image's ETag is in the ETag header." } },
      },
    ),
    async (c) => {
      const etag = await putInstructionImage(c, c.req.valid("param").id, c.req.valid("json"));
      c.header("etag", formatEtag(etag));
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path,
        tags,
        summary: "Get a property definition's instruction image (base64)",
        request: { params: IdParam },
        responses: {
          200: { description: "The image, with its ETag.", content: { "application/json": { schema: InstructionImageSchema } } },
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const id = c.req.valid("param").id;
      const key = await instructionImageKeyOf(c.env.DB, id);
      if (key === null) throw new ApiError("NotFound", `Property definition ${id} has no instruction image.`);
      const etag = formatEtag(imageEtag(key));
      if (notModified(c.req.header("if-none-match"), etag)) return c.body(null, 304, { etag });
      const { object } = await getInstructionImage(c.env, id);
      const bytes = new Uint8Array(await object.arrayBuffer());
      c.header("etag", etag);
      return c.json({ image: encodeBase64(bytes), contentType: object.httpMetadata?.contentType ?? "application/octet-stream" }, 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "delete",
        path,
        tags,
        summary: "Remove a property definition's instruction image",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Removed." } },
      },
    ),
    async (c) => {
      await deleteInstructionImage(c, c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
