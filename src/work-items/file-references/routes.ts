/** /WorkItems/{id}/FileReferences (spec 2.5, 4.2): list, read one, link, unlink. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { ApiError } from "../../pkg/errors";
import { defineRoute, IdParam } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { CreateFileReferenceSchema, FileReferenceSchema } from "./schema";
import { createFileReference, deleteFileReference, getFileReference, listFileReferences, WORK_ITEM_OWNER } from "./store";

const tags = ["Work items"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const RefParams = IdParam.extend({ fileReferenceId: z.uuid().openapi({ param: { name: "fileReferenceId", in: "path" } }) });

export function workItemFileReferencesApp() {
  const app = newApp();

  app.openapi(
    defineRoute({ ...read, errors: [404] }, {
      method: "get",
      path: "/WorkItems/{id}/FileReferences",
      tags,
      summary: "List the file references of a work item (its own and those copied from its templates)",
      request: { params: IdParam },
      responses: { 200: json(z.array(FileReferenceSchema), "The file references, oldest first.") },
    }),
    async (c) => c.json(await listFileReferences(c.env.DB, WORK_ITEM_OWNER, c.req.valid("param").id), 200),
  );

  app.openapi(
    defineRoute({ ...read, errors: [404] }, {
      method: "get",
      path: "/WorkItems/{id}/FileReferences/{fileReferenceId}",
      tags,
      summary: "Get one file reference of a work item",
      request: { params: RefParams },
      responses: { 200: json(FileReferenceSchema, "The file reference.") },
    }),
    async (c) => {
      const { id, fileReferenceId } = c.req.valid("param");
      return c.json(await getFileReference(c.env.DB, WORK_ITEM_OWNER, id, fileReferenceId), 200);
    },
  );

  app.openapi(
    defineRoute({ ...write, errors: [404] }, {
      method: "post",
      path: "/WorkItems/{id}/FileReferences",
      tags,
      summary: "Link a file reference to a work item",
      description: "Platform: platformFile.id names a stored file (POST /Files). External: url, http or https only. name is optional.",
      request: { params: IdParam, body: { required: true, content: { "application/json": { schema: CreateFileReferenceSchema } } } },
      responses: { 201: json(FileReferenceSchema, "The created file reference.") },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const created = await createFileReference(writeContext(c), WORK_ITEM_OWNER, id, c.req.valid("json"));
      c.header("location", `/WorkItems/${id}/FileReferences/${created.id}`);
      return c.json(created, 201);
    },
  );

  app.openapi(
    defineRoute({ ...write, errors: [404] }, {
      method: "delete",
      path: "/WorkItems/{id}/FileReferences",
      tags,
      summary: "Unlink a file reference (named by the fileReferenceId query parameter)",
      request: { params: IdParam, query: z.object({ fileReferenceId: z.uuid().optional().openapi({ description: "Required: the file reference to unlink." }) }) },
      responses: { 204: { description: "Unlinked." } },
    }),
    async (c) => {
      const { fileReferenceId } = c.req.valid("query");
      if (!fileReferenceId) {
        const message = "fileReferenceId is required.";
        throw new ApiError("ValidationFailed", message, { errors: [{ field: "query.fileReferenceId", rule: "required", message }] });
      }
      await deleteFileReference(writeContext(c), WORK_ITEM_OWNER, c.req.valid("param").id, fileReferenceId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute({ ...write, errors: [404] }, {
      method: "delete",
      path: "/WorkItems/{id}/FileReferences/{fileReferenceId}",
      tags,
      summary: "Unlink a file reference",
      request: { params: RefParams },
      responses: { 204: { description: "Unlinked." } },
    }),
    async (c) => {
      const { id, fileReferenceId } = c.req.valid("param");
      await deleteFileReference(writeContext(c), WORK_ITEM_OWNER, id, fileReferenceId);
      return c.body(null, 204);
    },
  );

  return app;
}
