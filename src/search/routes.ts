/**
 * Search routes (API area search, versions 1.0 and 1.1; spec 2.10, 4.2 rules 9 to 11, 9.2). Version
 * 1.0 knows the standard indices; 1.1 adds custom ones. Indices and saved queries are D1 rows listed by
 * the shared query engine; documents and searches are in each index's SearchIndex Durable Object.
 */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../pkg/resource";
import type { Context } from "hono";
import { newApp } from "../app-factory";
import type { AppEnv } from "../env";
import type { Principal } from "../pkg/auth";
import { writeContext } from "../pkg/db";
import { ApiError, invalid } from "../pkg/errors";
import { jsonWithEtag } from "../pkg/etag";
import { bodyStream, fieldText, formBoundary, readForm } from "../pkg/multipart";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { scheduleRuleProblem } from "../pkg/schedule";
import { MAX_LIBRARY_BYTES } from "./library";
import { IndexListQuery, IndexLogLineSchema, IndexLogQuery, listIndexLogs, listIndexRows, listQueryRows, QueryListQuery } from "./lists";
import { planSearch, SearchRequestSchema, SearchResultSchema, type SearchRequest, type SearchResult } from "./query";
import {
  createQuery,
  CreateQuerySchema,
  deleteQuery,
  SavedQuerySchema,
  toQuery,
  updateQuery,
  UpdateQuerySchema,
  visibleQuery,
} from "./queries";
import { userMark } from "./access";
import { standardIndex } from "./standard";
import {
  createIndex,
  deleteIndex,
  indexStub,
  mappingOf,
  mayChangeIndex,
  maySeeIndex,
  readIndexRow,
  startSync,
  toIndex,
  updateIndex,
  visibleIndex,
  type IndexRow,
} from "./store";

const AREA = "search" as const;
const read = { permission: PERMISSIONS.indexReadOwned, area: AREA } as const;
const write = { permission: PERMISSIONS.indexWrite, area: AREA } as const;
const v11 = ["1.1"] as const;
const indexTags = ["Search indices"];
const queryTags = ["Saved queries"];

const Owner = z.object({ id: z.string().min(1).max(200), name: z.string().max(200).nullable().optional() });
const SyncSchema = z
  .object({
    syncId: z.string(),
    status: z.string(),
    message: z.string(),
    documents: z.number().int(),
    reason: z.string(),
    startedAt: z.string(),
    endedAt: z.string(),
  })
  .openapi("IndexSynchronization");
const FieldSchema = z.object({
  type: z.string(),
  displayName: z.string(),
  alwaysShow: z.boolean().optional(),
  isIdentity: z.boolean().optional(),
});
const IndexSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    displayName: z.string(),
    description: z.string().nullable(),
    objectOwner: z.object({ id: z.string(), name: z.string().nullable() }),
    triggerSchedule: z.string().nullable(),
    type: z.enum(["standard", "custom"]),
    source: z
      .enum(["platform", "library"])
      .openapi({ description: "platform: built from this service's data and its events; library: fed by a library file." }),
    status: z.string().openapi({
      description:
        "Pending (never synchronised), Synchronizing, Ready or Failed (the last synchronisation failed; the previous documents stay).",
    }),
    documentCount: z.number().int(),
    lastSynchronization: SyncSchema.nullable(),
    nextSynchronizationAt: z
      .string()
      .nullable()
      .openapi({ description: "When the next scheduled synchronisation is due (custom: triggerSchedule, UTC; standard: daily)." }),
    libraryFileName: z.string().nullable(),
    mapping: z.record(z.string(), FieldSchema).nullable(),
    createdDate: z.string(),
    modifiedDate: z.string(),
  })
  .openapi("Index");

const UpdateIndexSchema = updateBodyOf(
  IndexSchema,
  {
    name: z.string().trim().min(1).max(100),
    displayName: z.string().trim().min(1).max(200),
    objectOwner: Owner,
    triggerSchedule: z.string().max(100).nullable().optional(),
    type: z.enum(["standard", "custom"]),
  },
  "UpdateIndex",
);

const INDEX_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkName(name: string, field: string) {
  if (!INDEX_NAME.test(name) || UUID.test(name))
    throw invalid(
      field,
      "format",
      "An index name is 1 to 100 letters, digits, '.', '_' or '-' (starting with a letter or digit), and not shaped like an id.",
    );
  if (name.toLowerCase().startsWith("platform-"))
    throw invalid(field, "reserved", "Names starting with 'platform-' are reserved for the standard indices.");
}

function checkSchedule(cron: string | null | undefined, field: string): string | null {
  if (cron === undefined || cron === null || cron.trim() === "") return null;
  const problem = scheduleRuleProblem({ cron: cron.trim() });
  if (problem) throw invalid(field, "cron", problem.message);
  return cron.trim();
}

/** The read permissions a library's clients act with: those the uploader holds. */
const READ_PERMISSIONS = [PERMISSIONS.workRead, PERMISSIONS.assetsRead, PERMISSIONS.filesRead, PERMISSIONS.monitorsRead];
const grantOf = (principal: Principal) => READ_PERMISSIONS.filter((p) => principal.permissions.has(p));

/** Who searches: their permissions (a token's claim cannot pass for someone's user mark) and their own user mark. */
const searcherOf = (principal: Principal) => ({
  id: principal.id,
  name: principal.name ?? principal.id,
  permissions: [...[...principal.permissions].filter((p) => !p.startsWith("user:")), userMark(principal.id)],
});

function assertMayChange(principal: Principal, row: IndexRow) {
  if (!mayChangeIndex(principal, row))
    throw new ApiError("Forbidden", `Changing index '${row.name}' needs its ownership with 'index_write', or 'index_admin'.`);
}

interface IndexForm {
  name?: string;
  displayName?: string;
  objectOwnerId?: string;
  triggerSchedule?: string;
  file?: { name: string; source: string };
}

/** Reads the multipart form of index creation and file replacement (field names match without case). */
async function readIndexForm(c: Context<AppEnv>, allowed: readonly (keyof IndexForm)[]): Promise<IndexForm> {
  const boundary = formBoundary(c.req.header("content-type"));
  if (!boundary) throw new ApiError("UnsupportedMediaType", "This route takes a multipart/form-data body (with a boundary).");
  const form: IndexForm = {};
  const byLower = new Map(allowed.map((k) => [k.toLowerCase(), k]));
  for await (const part of readForm(await bodyStream(c), boundary)) {
    const key = byLower.get(part.head.name.toLowerCase());
    if (!key)
      throw invalid(
        `body.${part.head.name}`,
        "unknownField",
        `'${part.head.name}' is not a field of this form; its fields are ` +
          `${allowed.map((k) => k[0]!.toUpperCase() + k.slice(1)).join(", ")}.`,
      );
    if (form[key] !== undefined) throw invalid(`body.${key}`, "single", `${key} is given twice.`);
    if (key === "file") {
      if (!part.head.filename) throw invalid("body.file", "file", "File must be a file part (with a filename).");
      const source = await fieldText(part, "body.file", MAX_LIBRARY_BYTES);
      if (/[\ud800-\udfff]/.test(source.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")) || source.includes("\ufffd"))
        throw invalid("body.file", "utf8", "The library file must be UTF-8 JavaScript.");
      form.file = { name: part.head.filename, source };
    } else {
      form[key] = (await fieldText(part, `body.${key}`, 1024)).trim();
    }
  }
  return form;
}

async function respondIndex<S extends 200 | 201 = 200>(c: Context<AppEnv>, row: IndexRow, status: S = 200 as S) {
  return jsonWithEtag(c, toIndex(row), row.etag, status);
}

/** Resolves the index named by a resynchronisation path: an id in 1.1, a name in 1.0. */
async function resyncTarget(c: Context<AppEnv>, value: string): Promise<IndexRow> {
  const version = c.get("apiVersion");
  const principal = c.get("principal");
  if (version === "1.1" && !UUID.test(value)) {
    throw new ApiError(
      "UnsupportedApiVersion",
      `PUT /Indices/{indexName}/Resynchronization is the version 1.0 route; in 1.1 the path names the index id (send ` +
        `api-version: 1.0 to use the name '${value}').`,
      { headers: { "api-supported-versions": "1.0" } },
    );
  }
  if (version === "1.0" && UUID.test(value)) {
    throw new ApiError(
      "UnsupportedApiVersion",
      "PUT /Indices/{id}/Resynchronization is the version 1.1 route; in 1.0 the path names the index name (send " +
        "api-version: 1.1 to use the id).",
      { headers: { "api-supported-versions": "1.1" } },
    );
  }
  return visibleIndex(c.env.DB, principal, version === "1.1" ? { id: value } : { name: value }, version);
}

async function runSearch(c: Context<AppEnv>, index: IndexRow, request: SearchRequest, path = "body") {
  const mapping = mappingOf(index);
  if (!mapping) throw new ApiError("Conflict", `Index '${index.name}' has not synchronised yet; it has no fields to search.`);
  const plan = planSearch(mapping, request, path);
  // Every document of a standard index carries its resource's read permission: a caller without it
  // sees none of them (as the resource's own endpoint would refuse them all). Documents a library
  // wrote carry those of the clients it used; the index's Durable Object keeps each caller to theirs.
  const required = standardIndex(index.id)?.source?.permission;
  if (required && !c.get("principal").permissions.has(required)) {
    return {
      index: { id: index.id, name: index.name },
      total: 0,
      skip: plan.skip,
      take: plan.take,
      results: [],
      ...(plan.facets.length > 0 ? { facets: Object.fromEntries(plan.facets.map((f) => [f, []])) } : {}),
    };
  }
  const result = (await indexStub(c.env, index.id).search(plan, mapping, searcherOf(c.get("principal")))) as unknown as Omit<
    SearchResult,
    "index"
  >;
  return { index: { id: index.id, name: index.name }, ...result };
}

export function searchApp() {
  const app = newApp();

  // --- Indices --------------------------------------------------------------------------------------
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
      responses: { 200: json(z.array(IndexSchema), "Indices (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listIndexRows(c.env.DB, c.get("principal"), c.get("apiVersion"), c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items.map(toIndex), 200);
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
      const current = await visibleIndex(c.env.DB, principal, { id: body.id }, c.get("apiVersion"));
      assertMayChange(principal, current);
      if (body.type !== current.type) throw invalid("body.type", "immutable", `type cannot be changed (this index is ${current.type}).`);
      const schedule = current.type === "standard" ? current.trigger_schedule : checkSchedule(body.triggerSchedule, "body.triggerSchedule");
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
      const updated = await updateIndex(writeContext(c), current, {
        name: body.name,
        displayName: body.displayName,
        owner: { id: body.objectOwner.id, name: body.objectOwner.name ?? null },
        triggerSchedule: schedule,
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
      const current = await visibleIndex(c.env.DB, principal, { id: c.req.valid("param").id }, c.get("apiVersion"));
      assertMayChange(principal, current);
      await deleteIndex(writeContext(c), current);
      await indexStub(c.env, current.id).destroy();
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "put",
        path: "/Indices/{index}/Resynchronization",
        tags: indexTags,
        summary: "Resynchronise an index (1.1: by id; 1.0: by name)",
        description:
          "Starts a full synchronisation now (one runs at a time; a second request while one runs reports it). Version " +
          "1.1 names the index by id, version 1.0 by name; the other form answers UnsupportedApiVersion.",
        request: {
          params: z.object({
            index: z
              .string()
              .min(1)
              .max(100)
              .openapi({ param: { name: "index", in: "path" }, description: "1.1: the index id; 1.0: the index name." }),
          }),
        },
        responses: {
          202: json(
            z.object({
              syncId: z.string(),
              started: z.boolean().openapi({ description: "false: a synchronisation was already running (its id is given)." }),
            }),
            "Accepted; follow it on the index (status, lastSynchronization) and its logs.",
          ),
        },
      },
    ),
    async (c) => {
      const row = await resyncTarget(c, c.req.valid("param").index);
      assertMayChange(c.get("principal"), row);
      return c.json(await startSync(c.env, row.id, `requested by ${c.get("principal").name || c.get("principal").id}`), 202);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, versions: v11, errors: [404] },
      {
        method: "get",
        path: "/Indices/{id}/Logs",
        tags: indexTags,
        summary: "The index's log: synchronisations and its library's logger lines, newest first",
        request: { params: IdParam, query: IndexLogQuery },
        responses: {
          200: {
            ...json(z.array(IndexLogLineSchema), "One page of log lines."),
            headers: {
              "x-total-count": {
                description: "Lines matching the filters before skip and take; only with includeTotal=true.",
                schema: { type: "integer" },
              },
            },
          },
        },
      },
    ),
    async (c) => {
      const row = await visibleIndex(c.env.DB, c.get("principal"), { id: c.req.valid("param").id }, c.get("apiVersion"));
      const { items, total } = await listIndexLogs(c.env.DB, row.id, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items, 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404, 409] },
      {
        method: "post",
        path: "/Indices/{id}/Search",
        tags: indexTags,
        summary: "Search an index without saving the query",
        description:
          "The same request a saved query holds (queryObject). Only documents you could read through their own endpoints are returned.",
        request: { params: IdParam, ...jsonBody(SearchRequestSchema) },
        responses: { 200: json(SearchResultSchema, "One page of results.") },
      },
    ),
    async (c) => {
      const index = await visibleIndex(c.env.DB, c.get("principal"), { id: c.req.valid("param").id }, c.get("apiVersion"));
      return c.json(await runSearch(c, index, c.req.valid("json")), 200);
    },
  );

  // --- Saved queries --------------------------------------------------------------------------------
  const queryRead = { permission: PERMISSIONS.queryReadOwned, area: AREA } as const;
  const queryWrite = { permission: PERMISSIONS.queryWrite, area: AREA } as const;

  app.openapi(
    defineRoute(queryRead, {
      method: "get",
      path: "/Queries",
      tags: queryTags,
      summary: "List your saved queries",
      description: "Your own; everyone's with query_read_all. The My Actions page: `isVisible=true&order=metadata.action.order`.",
      request: { query: QueryListQuery },
      responses: { 200: json(z.array(SavedQuerySchema), "Saved queries (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listQueryRows(c.env.DB, c.get("principal"), c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      const names = new Map<string, string>();
      for (const id of new Set(items.map((q) => q.index_id))) {
        const row = await readIndexRow(c.env.DB, id);
        if (row) names.set(id, row.name);
      }
      return c.json(
        items.map((q) => toQuery({ ...q, index_name: names.get(q.index_id) ?? null })),
        200,
      );
    },
  );

  app.openapi(
    defineRoute(
      { ...queryRead, errors: [404] },
      {
        method: "get",
        path: "/Queries/{id}",
        tags: queryTags,
        summary: "Get a saved query",
        request: { params: IdParam },
        responses: { 200: json(SavedQuerySchema, "The query.") },
      },
    ),
    async (c) => {
      const row = await visibleQuery(c.env.DB, c.get("principal"), c.req.valid("param").id);
      return jsonWithEtag(c, toQuery(row), row.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryWrite, errors: [409] },
      {
        method: "post",
        path: "/Queries",
        tags: queryTags,
        summary: "Save a query",
        description:
          "queryObject is checked against the index's mapping (an unknown field is a 400 naming it). objectOwner defaults to you.",
        request: jsonBody(CreateQuerySchema),
        responses: { 201: json(SavedQuerySchema, "The saved query.") },
      },
    ),
    async (c) => {
      const row = await createQuery(writeContext(c), c.get("principal"), c.get("apiVersion"), c.req.valid("json"));
      c.header("location", `/Queries/${row.id}`);
      return jsonWithEtag(c, toQuery(row), row.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryWrite, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Queries",
        tags: queryTags,
        summary: "Update a saved query (the whole object with its id)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateQuerySchema) },
        responses: { 200: json(SavedQuerySchema, "The saved query.") },
      },
    ),
    async (c) => {
      const row = await updateQuery(writeContext(c), c.get("principal"), c.get("apiVersion"), c.req.valid("json"));
      return jsonWithEtag(c, toQuery(row), row.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryWrite, errors: [404, 412] },
      {
        method: "delete",
        path: "/Queries/{id}",
        tags: queryTags,
        summary: "Delete a saved query",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteQuery(writeContext(c), c.get("principal"), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...queryRead, errors: [404, 409] },
      {
        method: "post",
        path: "/Queries/{id}/Execution",
        tags: queryTags,
        summary: "Execute a saved query (rule 11)",
        description:
          "Needs query_read_owned (see the query) and index_read_owned (read the index's data), spec 5 rule 1. An " +
          "optional body pages through the results ({ skip, take }).",
        request: {
          params: IdParam,
          body: {
            required: false,
            content: {
              "application/json": {
                schema: z
                  .object({ skip: z.number().int().min(0).max(100_000).optional(), take: z.number().int().min(1).max(200).optional() })
                  .strict(),
              },
            },
          },
        },
        responses: { 200: json(SearchResultSchema, "One page of results.") },
      },
    ),
    async (c) => {
      const principal = c.get("principal");
      if (!principal.permissions.has(PERMISSIONS.indexReadOwned))
        throw new ApiError(
          "Forbidden",
          "Executing a saved query also requires the permission 'index_read_owned' (access to the index data).",
        );
      const query = await visibleQuery(c.env.DB, principal, c.req.valid("param").id);
      const index = await readIndexRow(c.env.DB, query.index_id);
      if (!index) throw new ApiError("NotFound", "The query's index no longer exists.");
      if (!maySeeIndex(principal, index, c.get("apiVersion")))
        throw new ApiError("Forbidden", `You may not read index '${index.name}', which this query runs on.`);
      const paging = c.req.valid("json") ?? {};
      const request = {
        ...(JSON.parse(query.query_object) as SearchRequest),
        ...(paging.skip !== undefined ? { skip: paging.skip } : {}),
        ...(paging.take !== undefined ? { take: paging.take } : {}),
      };
      return c.json(await runSearch(c, index, request, "queryObject"), 200);
    },
  );

  return app;
}
