/** Search indices: GET, POST (a multipart form), PUT and DELETE /Indices, and PUT /Indices/{id}/File. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { ApiError, invalid } from "../pkg/errors";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, answerPage, withTotalCount } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { MAX_LIBRARY_BYTES } from "./library";
import { IndexListQuery, listIndexRows } from "./lists";
import { standardIndex } from "./standard";
import { createIndex, indexStub, readIndexRow, startSync, toIndex, updateIndex, visibleIndex } from "./store";
import { deleteIndex } from "./index-removal";
import { retryWrite } from "../pkg/resource";
import { read, write, v11, indexTags } from "./route-options";
import { IndexSchema, UpdateIndexSchema } from "./index-schema";
import { checkName, checkSchedule, grantOf, assertMayChange, readIndexForm, respondIndex } from "./index-requests";

export function indicesApp() {
  const app = newApp();
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Indices",
      tags: indexTags,
      summary: "List the indices you may search",
      description:
        "Standard indices, your custom indices (1.1), and every custom index with index_read_all. Version 1.0 lists the " +
        "standard indices only.",
      request: { query: IndexListQuery },
      responses: { 200: withTotalCount(json(z.array(IndexSchema), "Indices.")) },
    }),
    async (c) => {
      const { items, total } = await listIndexRows(c.env.DB, c.get("principal"), c.get("apiVersion"), c.req.valid("query"));
      return answerPage(c, { items: items.map(toIndex), total });
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Indices/{id}",
        tags: indexTags,
        summary: "Get an index, its mapping and its last synchronisation",
        request: { params: IdParam },
        responses: { 200: json(IndexSchema, "The index.") },
      },
    ),
    async (c) => respondIndex(c, await visibleIndex(c.env.DB, c.get("principal"), { id: c.req.valid("param").id }, c.get("apiVersion"))),
  );

  app.openapi(
    defineRoute(
      { ...write, versions: v11, bodyLimit: MAX_LIBRARY_BYTES + 16 * 1024, errors: [413, 415] },
      {
        method: "post",
        path: "/Indices",
        tags: indexTags,
        summary: "Create a custom index from a library file (multipart)",
        description:
          "Fields Name, DisplayName, ObjectOwnerId (default: you; another owner needs index_admin), TriggerSchedule " +
          "(CRON, UTC) and File (the library: a JavaScript module whose default export extends IndexBuilder; README, " +
          '"Search"). ' +
          "The first synchronisation starts at once; its outcome and the library's log lines are on the index and under " +
          "/Indices/{id}/Logs.",
        request: {
          body: {
            required: true,
            content: {
              "multipart/form-data": {
                schema: {
                  type: "object",
                  required: ["Name", "DisplayName", "File"],
                  properties: {
                    Name: { type: "string" },
                    DisplayName: { type: "string" },
                    ObjectOwnerId: { type: "string" },
                    TriggerSchedule: { type: "string" },
                    File: { type: "string", format: "binary" },
                  },
                },
              },
            },
          },
        },
        responses: { 201: json(IndexSchema, "The index (status Synchronizing).") },
      },
    ),
    async (c) => {
      const principal = c.get("principal");
      const form = await readIndexForm(c, ["name", "displayName", "objectOwnerId", "triggerSchedule", "file"]);
      if (!form.name) throw invalid("body.name", "required", "Name is required.");
      checkName(form.name, "body.name");
      if (!form.displayName) throw invalid("body.displayName", "required", "DisplayName is required.");
      if (form.displayName.length > 200) throw invalid("body.displayName", "maxLength", "DisplayName has at most 200 characters.");
      if (!form.file) throw invalid("body.file", "required", "File (the library) is required.");
      const schedule = checkSchedule(form.triggerSchedule, "body.triggerSchedule");
      const ownerId = form.objectOwnerId || principal.id;
      if (ownerId !== principal.id && !principal.permissions.has(PERMISSIONS.indexAdmin))
        throw new ApiError("Forbidden", "Creating an index for another owner needs the permission 'index_admin'.");
      const row = await createIndex(writeContext(c), {
        id: c.get("ids").uuid(),
        name: form.name,
        displayName: form.displayName,
        owner: { id: ownerId, name: ownerId === principal.id ? (principal.name ?? null) : null },
        triggerSchedule: schedule,
        library: form.file.source,
        libraryFileName: form.file.name,
        grant: grantOf(principal),
      });
      await startSync(c.env, row.id, "created");
      c.header("location", `/Indices/${row.id}`);
      return respondIndex(c, (await readIndexRow(c.env.DB, row.id))!, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Indices",
        tags: indexTags,
        summary: "Update an index (rule 9)",
        description:
          "The whole index with its id. type never changes; of a standard index only objectOwner changes. Needs ownership " +
          "(with index_write) or index_admin; If-Match honoured.",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateIndexSchema) },
        responses: { 200: json(IndexSchema, "The index.") },
      },
    ),
    async (c) => {
      const body = c.req.valid("json");
      const principal = c.get("principal");
      const ctx = writeContext(c);
      const updated = await retryWrite(ctx, async () => {
        const current = await visibleIndex(c.env.DB, principal, { id: body.id }, c.get("apiVersion"));
        assertMayChange(principal, current);
        if (body.type !== current.type) throw invalid("body.type", "immutable", `type cannot be changed (this index is ${current.type}).`);
        const schedule =
          current.type === "standard" ? current.trigger_schedule : checkSchedule(body.triggerSchedule, "body.triggerSchedule");
        if (current.type === "standard") {
          for (const [field, sent, stored] of [
            ["name", body.name, current.name],
            ["displayName", body.displayName, current.display_name],
            ["triggerSchedule", body.triggerSchedule ?? null, current.trigger_schedule],
          ] as const) {
            if (sent !== stored)
              throw invalid(
                `body.${field}`,
                "standardIndex",
                `Of a standard index only objectOwner can be changed; ${field} must stay ${JSON.stringify(stored)}.`,
              );
          }
        } else checkName(body.name, "body.name");
        if (
          body.objectOwner.id !== current.owner_id &&
          body.objectOwner.id !== principal.id &&
          !principal.permissions.has(PERMISSIONS.indexAdmin)
        ) {
          throw new ApiError("Forbidden", "Giving an index to another owner needs the permission 'index_admin'.");
        }
        return updateIndex(ctx, current, {
          name: body.name,
          displayName: body.displayName,
          owner: { id: body.objectOwner.id, name: body.objectOwner.name ?? null },
          triggerSchedule: schedule,
        });
      });
      return respondIndex(c, updated);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, versions: v11, bodyLimit: MAX_LIBRARY_BYTES + 16 * 1024, errors: [404, 409, 412, 413, 415] },
      {
        method: "put",
        path: "/Indices/{id}/File",
        tags: indexTags,
        summary: "Replace the library file of a custom index (multipart File)",
        description:
          "Also feeds a standard index whose entities live in another service (its mapping stays the standard one). A " +
          "synchronisation starts at once; until it succeeds the previous documents stay.",
        request: {
          params: IdParam,
          headers: IfMatchHeader,
          body: {
            required: true,
            content: {
              "multipart/form-data": {
                schema: { type: "object", required: ["File"], properties: { File: { type: "string", format: "binary" } } },
              },
            },
          },
        },
        responses: { 200: json(IndexSchema, "The index.") },
      },
    ),
    async (c) => {
      const principal = c.get("principal");
      const current = await visibleIndex(c.env.DB, principal, { id: c.req.valid("param").id }, c.get("apiVersion"));
      assertMayChange(principal, current);
      if (standardIndex(current.id)?.source)
        throw new ApiError("Conflict", `'${current.name}' is built from this service's own data; it takes no library file.`);
      const form = await readIndexForm(c, ["file"]);
      if (!form.file) throw invalid("body.file", "required", "File (the library) is required.");
      await updateIndex(writeContext(c), current, {
        name: current.name,
        displayName: current.display_name,
        owner: { id: current.owner_id, name: current.owner_name },
        triggerSchedule: current.trigger_schedule,
        library: { source: form.file.source, fileName: form.file.name, grant: grantOf(principal) },
      });
      await startSync(c.env, current.id, "library replaced");
      return respondIndex(c, (await readIndexRow(c.env.DB, current.id))!);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, versions: v11, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Indices/{id}",
        tags: indexTags,
        summary: "Delete a custom index",
        description:
          "Its documents, saved queries, schedule and logs go with it. A standard index answers 409 (only custom indices can be deleted).",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      const principal = c.get("principal");
      const ctx = writeContext(c);
      const current = await retryWrite(ctx, async () => {
        const current = await visibleIndex(c.env.DB, principal, { id: c.req.valid("param").id }, c.get("apiVersion"));
        assertMayChange(principal, current);
        await deleteIndex(ctx, current);
        return current;
      });
      await indexStub(c.env, current.id).destroy();
      return c.body(null, 204);
    },
  );
  return app;
}
