/**
 * File references of work templates (spec 2.5). They belong to the template id, not to a revision,
 * so they are never copied with a revision and do not change its ETag. A Platform reference names a
 * file of POST /Files that the caller can see (stored and visible by the files access rule); an
 * External one an http(s) URL.
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { guardedOutboxStatement, outboxStatement } from "../../events/outbox";
import { assertStatement, isAssertionFailure, writeContext, type WriteContext } from "../../pkg/db";
import { ApiError, notFound, type FieldProblem } from "../../pkg/errors";
import { defineRoute, IdParam } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { maySee, type Viewer } from "../../upload/files/access";
import { json, jsonBody } from "../shared";
import { CreateFileReferenceSchema, FileReferenceSchema, type CreateFileReferenceInput, type FileReference } from "./schema";
import { ENTITY_KIND } from "./store";

interface FileReferenceRow {
  id: string;
  location: string;
  platform_file_id: string | null;
  url: string | null;
  name: string | null;
  created_at: string;
}

const COLUMNS = "id, location, platform_file_id, url, name, created_at";
const templateExists = "EXISTS (SELECT 1 FROM work_templates WHERE id = ?1 AND is_latest = 1)";

function toFileReference(row: FileReferenceRow): FileReference {
  return {
    id: row.id,
    location: row.location as FileReference["location"],
    platformFile: row.platform_file_id === null ? null : { id: row.platform_file_id },
    url: row.url,
    name: row.name,
    createdAt: row.created_at,
  };
}

async function requireTemplate(db: D1Database, id: string): Promise<void> {
  const found = await db.prepare(`SELECT ${templateExists} AS found`).bind(id).first<{ found: number }>();
  if (!found?.found) throw notFound("Work template", id);
}

/** Checks a reference's fields: Platform needs a visible file, External an http(s) URL. Every problem is reported. */
async function checkReference(db: D1Database, viewer: Viewer, input: CreateFileReferenceInput): Promise<{ platformFileId: string | null; url: string | null }> {
  const problems: FieldProblem[] = [];
  let platformFileId: string | null = null;
  let url: string | null = null;
  if (input.location === "Platform") {
    if (!input.platformFile) problems.push({ field: "body.platformFile", rule: "required", message: "platformFile.id is required when location is Platform." });
    if (input.url) problems.push({ field: "body.url", rule: "notAllowed", message: "url is only for location External." });
    if (input.platformFile) {
      platformFileId = input.platformFile.id;
      const file = await db
        .prepare("SELECT state, owner_id, created_by, object_type, object_id FROM files WHERE id = ?1")
        .bind(platformFileId)
        .first<{ state: string; owner_id: string; created_by: string | null; object_type: string | null; object_id: string | null }>();
      const visible = file !== null && maySee(viewer, { state: file.state, ownerId: file.owner_id, createdBy: file.created_by, objectType: file.object_type, objectId: file.object_id });
      if (!visible) problems.push({ field: "body.platformFile.id", rule: "exists", message: `File ${platformFileId} does not exist (GET /Files/{id}).` });
    }
  } else {
    if (input.platformFile) problems.push({ field: "body.platformFile", rule: "notAllowed", message: "platformFile is only for location Platform." });
    if (!input.url) problems.push({ field: "body.url", rule: "required", message: "url is required when location is External." });
    else {
      let parsed: URL | null = null;
      try {
        parsed = new URL(input.url);
      } catch {
        parsed = null;
      }
      if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
        problems.push({ field: "body.url", rule: "url", message: "url must be an absolute http or https URL." });
      } else url = input.url;
    }
  }
  if (problems.length > 0) throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
  return { platformFileId, url };
}

export async function createFileReference(ctx: WriteContext, viewer: Viewer, templateId: string, input: CreateFileReferenceInput): Promise<FileReference> {
  await requireTemplate(ctx.db, templateId);
  const { platformFileId, url } = await checkReference(ctx.db, viewer, input);
  const row: FileReferenceRow = { id: ctx.uuid(), location: input.location, platform_file_id: platformFileId, url, name: input.name ?? null, created_at: ctx.now };
  const created = toFileReference(row);
  try {
    await ctx.db.batch([
      // The template may have been deleted since it was checked: then nothing is linked.
      assertStatement(ctx.db, templateExists, templateId),
      ctx.db
        .prepare("INSERT INTO file_references (id, owner_kind, owner_id, location, platform_file_id, url, name, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
        .bind(row.id, ENTITY_KIND, templateId, row.location, row.platform_file_id, row.url, row.name, row.created_at, ctx.actorId),
      outboxStatement(ctx.db, ctx, { entityKind: "fileReference", entityId: row.id, action: "created", payload: { ...created, ownerKind: ENTITY_KIND, ownerId: templateId } }),
    ]);
  } catch (error) {
    if (isAssertionFailure(error)) throw notFound("Work template", templateId);
    throw error;
  }
  return created;
}

export async function listFileReferences(db: D1Database, templateId: string): Promise<FileReference[]> {
  await requireTemplate(db, templateId);
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 ORDER BY created_at, id`)
    .bind(ENTITY_KIND, templateId)
    .all<FileReferenceRow>();
  return results.map(toFileReference);
}

export async function getFileReference(db: D1Database, templateId: string, referenceId: string): Promise<FileReference> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 AND id = ?3`)
    .bind(ENTITY_KIND, templateId, referenceId)
    .first<FileReferenceRow>();
  if (!row) throw notFound("File reference", referenceId);
  return toFileReference(row);
}

export async function deleteFileReference(ctx: WriteContext, templateId: string, referenceId: string): Promise<void> {
  const [removed] = await ctx.db.batch([
    ctx.db.prepare("DELETE FROM file_references WHERE owner_kind = ?1 AND owner_id = ?2 AND id = ?3").bind(ENTITY_KIND, templateId, referenceId),
    guardedOutboxStatement(ctx.db, ctx, { entityKind: "fileReference", entityId: referenceId, action: "deleted", payload: { ownerKind: ENTITY_KIND, ownerId: templateId } }, "previousChanged"),
  ]);
  if (removed?.meta.changes !== 1) throw notFound("File reference", referenceId);
}

const tags = ["Work templates"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const ReferenceParams = IdParam.extend({ fileReferenceId: z.uuid().openapi({ param: { name: "fileReferenceId", in: "path" } }) });
const DeleteQuery = z.object({
  fileReferenceId: z.uuid().openapi({ description: "The file reference to unlink (the spec's DELETE has no id in its path)." }),
});

export function workTemplateFileReferencesApp() {
  const app = newApp();
  const lower = (id: string) => id.toLowerCase();

  app.openapi(
    defineRoute({ ...write, errors: [404] }, {
      method: "post",
      path: "/WorkTemplates/{id}/FileReferences",
      tags,
      summary: "Link a file reference to a work template",
      description: "Platform: platformFile.id of a file you can see (POST /Files). External: url (http or https). name is optional. The reference belongs to the template, whatever its revision, and is inherited by work items created from it.",
      request: { params: IdParam, ...jsonBody(CreateFileReferenceSchema) },
      responses: { 201: json(FileReferenceSchema, "The file reference.") },
    }),
    async (c) => {
      const id = lower(c.req.valid("param").id);
      const created = await createFileReference(writeContext(c), c.get("principal"), id, c.req.valid("json"));
      c.header("location", `/WorkTemplates/${id}/FileReferences/${created.id}`);
      return c.json(created, 201);
    },
  );

  app.openapi(
    defineRoute({ ...read, errors: [404] }, {
      method: "get",
      path: "/WorkTemplates/{id}/FileReferences",
      tags,
      summary: "List the file references of a work template",
      request: { params: IdParam },
      responses: { 200: json(z.array(FileReferenceSchema), "The file references, oldest first.") },
    }),
    async (c) => c.json(await listFileReferences(c.env.DB, lower(c.req.valid("param").id)), 200),
  );

  app.openapi(
    defineRoute({ ...read, errors: [404] }, {
      method: "get",
      path: "/WorkTemplates/{id}/FileReferences/{fileReferenceId}",
      tags,
      summary: "Get one file reference of a work template",
      request: { params: ReferenceParams },
      responses: { 200: json(FileReferenceSchema, "The file reference.") },
    }),
    async (c) => {
      const { id, fileReferenceId } = c.req.valid("param");
      return c.json(await getFileReference(c.env.DB, lower(id), lower(fileReferenceId)), 200);
    },
  );

  app.openapi(
    defineRoute({ ...write, errors: [404] }, {
      method: "delete",
      path: "/WorkTemplates/{id}/FileReferences",
      tags,
      summary: "Unlink a file reference (its id in the fileReferenceId query parameter)",
      description: "The spec's path carries no reference id, so it is taken from the query. DELETE /WorkTemplates/{id}/FileReferences/{fileReferenceId} does the same.",
      request: { params: IdParam, query: DeleteQuery },
      responses: { 204: { description: "Unlinked." } },
    }),
    async (c) => {
      await deleteFileReference(writeContext(c), lower(c.req.valid("param").id), lower(c.req.valid("query").fileReferenceId));
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute({ ...write, errors: [404] }, {
      method: "delete",
      path: "/WorkTemplates/{id}/FileReferences/{fileReferenceId}",
      tags,
      summary: "Unlink a file reference",
      request: { params: ReferenceParams },
      responses: { 204: { description: "Unlinked." } },
    }),
    async (c) => {
      const { id, fileReferenceId } = c.req.valid("param");
      await deleteFileReference(writeContext(c), lower(id), lower(fileReferenceId));
      return c.body(null, 204);
    },
  );

  return app;
}
