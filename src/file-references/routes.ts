/**
 * /{Owner}/{id}/FileReferences (spec 2.5, 4.2) for work items and work templates: list, read one,
 * link, unlink (the spec's DELETE has no reference id in its path, so it takes `fileReferenceId`
 * from the query; DELETE .../FileReferences/{fileReferenceId} does the same).
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { defineRoute, IdParam, json } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { viewerOf } from "../upload/files/access";
import { CreateFileReferenceSchema, FileReferenceSchema } from "./schema";
import { createFileReference, deleteFileReference, getFileReference, listFileReferences, type FileReferenceOwner } from "./store";

const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const RefParams = IdParam.extend({ fileReferenceId: z.uuid().openapi({ param: { name: "fileReferenceId", in: "path" } }) });

export interface FileReferenceRoutes {
  /** The owner's collection path, e.g. `/WorkItems`. */
  base: "/WorkItems" | "/WorkTemplates";
  owner: FileReferenceOwner;
  /** The OpenAPI tag of the owner's routes. */
  tag: string;
  /** What a list holds, for its summary. */
  listSummary: string;
}

export function fileReferencesApp({ base, owner, tag, listSummary }: FileReferenceRoutes) {
  const app = newApp();
  const tags = [tag];
  const what = owner.what.toLowerCase();
  const lower = (id: string) => id.toLowerCase();

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: `${base}/{id}/FileReferences`,
        tags,
        summary: listSummary,
        request: { params: IdParam },
        responses: { 200: json(z.array(FileReferenceSchema), "The file references, oldest first.") },
      },
    ),
    async (c) => c.json(await listFileReferences(c.env.DB, owner, lower(c.req.valid("param").id)), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: `${base}/{id}/FileReferences/{fileReferenceId}`,
        tags,
        summary: `Get one file reference of a ${what}`,
        request: { params: RefParams },
        responses: { 200: json(FileReferenceSchema, "The file reference.") },
      },
    ),
    async (c) => {
      const { id, fileReferenceId } = c.req.valid("param");
      return c.json(await getFileReference(c.env.DB, owner, lower(id), lower(fileReferenceId)), 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: `${base}/{id}/FileReferences`,
        tags,
        summary: `Link a file reference to a ${what}`,
        description: "Platform: platformFile.id of a file you can see (POST /Files). External: url, http or https only. name is optional.",
        request: { params: IdParam, body: { required: true, content: { "application/json": { schema: CreateFileReferenceSchema } } } },
        responses: { 201: json(FileReferenceSchema, "The created file reference.") },
      },
    ),
    async (c) => {
      const id = lower(c.req.valid("param").id);
      const created = await createFileReference(writeContext(c), viewerOf(c.get("principal")), owner, id, c.req.valid("json"));
      c.header("location", `${base}/${id}/FileReferences/${created.id}`);
      return c.json(created, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "delete",
        path: `${base}/{id}/FileReferences`,
        tags,
        summary: "Unlink a file reference (named by the fileReferenceId query parameter)",
        request: {
          params: IdParam,
          query: z.object({ fileReferenceId: z.uuid().optional().openapi({ description: "Required: the file reference to unlink." }) }),
        },
        responses: { 204: { description: "Unlinked." } },
      },
    ),
    async (c) => {
      const { fileReferenceId } = c.req.valid("query");
      if (!fileReferenceId) {
        const message = "fileReferenceId is required.";
        throw new ApiError("ValidationFailed", message, { errors: [{ field: "query.fileReferenceId", rule: "required", message }] });
      }
      await deleteFileReference(writeContext(c), owner, lower(c.req.valid("param").id), lower(fileReferenceId));
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "delete",
        path: `${base}/{id}/FileReferences/{fileReferenceId}`,
        tags,
        summary: "Unlink a file reference",
        request: { params: RefParams },
        responses: { 204: { description: "Unlinked." } },
      },
    ),
    async (c) => {
      const { id, fileReferenceId } = c.req.valid("param");
      await deleteFileReference(writeContext(c), owner, lower(id), lower(fileReferenceId));
      return c.body(null, 204);
    },
  );

  return app;
}
