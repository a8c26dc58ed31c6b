/** The asset catalogue: CRUD /Assets (the assets deviations, activities and work items designate). */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { exportable, exportList, exportQuery, pagesOf } from "../export";
import { AssetListQuery, listAssets } from "./list";
import { AssetSchema, CreateAssetSchema, UpdateAssetSchema } from "./schema";
import { kindRoutes } from "./kind-routes";
import { createAsset, deleteAsset, getAsset, updateAsset } from "./store";

const tags = ["Assets"];
const read = { permission: PERMISSIONS.assetsRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.assetsWrite, area: "workManagement" } as const;

export function assetsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Assets",
      tags,
      summary: "List assets",
      request: { query: exportQuery(AssetListQuery) },
      responses: {
        200: exportable(withTotalCount(json(z.array(AssetSchema), "One page of assets."))),
      },
    }),
    async (c) => {
      const { format, ...query } = c.req.valid("query");
      if (format) {
        const pages = pagesOf(query, (paged) => listAssets(c.env.DB, paged));
        return (await exportList(c, format, { name: "assets", item: AssetSchema, pages })) as never;
      }
      return answerPage(c, await listAssets(c.env.DB, query));
    },
  );

  kindRoutes(app);

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Assets/{id}",
        tags,
        summary: "Get an asset",
        request: { params: IdParam },
        responses: { 200: json(AssetSchema, "The asset, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getAsset(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Assets",
      tags,
      summary: "Create an asset",
      description:
        "Parent rules: an organization has no parent; a plant's parent is an organization or none; a main system's parent is a plant; " +
        "equipment's parent is a main system or a plant; a design object's parent is a plant or a main system. Plant " +
        "names are unique (case-insensitive).",
      request: { body: { required: true, content: { "application/json": { schema: CreateAssetSchema } } } },
      responses: { 201: json(AssetSchema, "The created asset.") },
    }),
    async (c) => {
      const created = await createAsset(writeContext(c), c.req.valid("json"));
      c.header("location", `/Assets/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Assets",
        tags,
        summary: "Replace an asset (the id is in the body); kind and parent cannot change",
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateAssetSchema } } } },
        responses: { 200: json(AssetSchema, "The updated asset.") },
      },
    ),
    async (c) => {
      const updated = await updateAsset(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Assets/{id}",
        tags,
        summary: "Delete an asset nothing uses",
        description:
          "Refused (409 InUse) while an entity designates it, it has child assets, a file's access metadata names it, a " +
          "channel is measured on it, or an inspection plan generates work on it.",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteAsset(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
