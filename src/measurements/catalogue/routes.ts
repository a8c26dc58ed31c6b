/** CRUD /ChannelTypes, /DataOrigins and /ChannelAvailabilities: the original Signals client's catalogues. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { answerPage, defineRoute, IdParam, IfMatchHeader, json, jsonBody, withTotalCount } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import {
  ChannelAvailabilitySchema,
  ChannelTypeSchema,
  CreateChannelAvailabilitySchema,
  CreateChannelTypeSchema,
  CreateDataOriginSchema,
  DataOriginSchema,
  UpdateChannelAvailabilitySchema,
  UpdateChannelTypeSchema,
  UpdateDataOriginSchema,
  type CatalogueInput,
  type CatalogueKind,
} from "./schema";
import {
  CatalogueListQuery,
  createCatalogueEntry,
  deleteCatalogueEntry,
  getCatalogueEntry,
  listCatalogue,
  updateCatalogueEntry,
} from "./store";

const read = { permission: PERMISSIONS.measurementsRead, area: "signals" } as const;
const write = { permission: PERMISSIONS.measurementsWrite, area: "signals" } as const;

interface Catalogue {
  kind: CatalogueKind;
  path: string;
  one: string;
  many: string;
  schema: z.ZodType;
  create: z.ZodType;
  update: z.ZodType;
}

const CATALOGUES: Catalogue[] = [
  {
    kind: "channelType",
    path: "/ChannelTypes",
    one: "channel type",
    many: "channel types",
    schema: ChannelTypeSchema,
    create: CreateChannelTypeSchema,
    update: UpdateChannelTypeSchema,
  },
  {
    kind: "dataOrigin",
    path: "/DataOrigins",
    one: "data origin",
    many: "data origins",
    schema: DataOriginSchema,
    create: CreateDataOriginSchema,
    update: UpdateDataOriginSchema,
  },
  {
    kind: "channelAvailability",
    path: "/ChannelAvailabilities",
    one: "channel availability",
    many: "channel availabilities",
    schema: ChannelAvailabilitySchema,
    create: CreateChannelAvailabilitySchema,
    update: UpdateChannelAvailabilitySchema,
  },
];

export function catalogueApp() {
  const app = newApp();
  for (const cat of CATALOGUES) {
    const tags = ["Measurements"];
    app.openapi(
      defineRoute(read, {
        method: "get",
        path: cat.path,
        tags,
        summary: `List ${cat.many} (built-in ones included)`,
        request: { query: CatalogueListQuery },
        responses: { 200: withTotalCount(json(z.array(cat.schema), `One page of ${cat.many}.`)) },
      }),
      async (c) => answerPage(c, await listCatalogue(c.env.DB, cat.kind, c.req.valid("query"))),
    );
    app.openapi(
      defineRoute(
        { ...read, errors: [404] },
        {
          method: "get",
          path: `${cat.path}/{id}`,
          tags,
          summary: `Get a ${cat.one}`,
          request: { params: IdParam },
          responses: { 200: json(cat.schema, `The ${cat.one}, with its ETag.`), 304: { description: "Not modified (If-None-Match)." } },
        },
      ),
      async (c) => {
        const found = await getCatalogueEntry(c.env.DB, cat.kind, c.req.valid("param").id);
        return jsonWithEtag(c, found.value, found.etag);
      },
    );
    app.openapi(
      defineRoute(write, {
        method: "post",
        path: cat.path,
        tags,
        summary: `Create a ${cat.one}`,
        request: jsonBody(cat.create),
        responses: { 201: json(cat.schema, `The created ${cat.one}.`) },
      }),
      async (c) => {
        const created = await createCatalogueEntry(writeContext(c), cat.kind, c.req.valid("json") as CatalogueInput);
        c.header("location", `${cat.path}/${created.value.id}`);
        return jsonWithEtag(c, created.value, created.etag, 201);
      },
    );
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 409, 412] },
        {
          method: "put",
          path: cat.path,
          tags,
          summary: `Replace a ${cat.one} (the id is in the body)`,
          request: { headers: IfMatchHeader, ...jsonBody(cat.update) },
          responses: { 200: json(cat.schema, `The updated ${cat.one}.`) },
        },
      ),
      async (c) => {
        const updated = await updateCatalogueEntry(writeContext(c), cat.kind, c.req.valid("json") as CatalogueInput & { id: string });
        return jsonWithEtag(c, updated.value, updated.etag);
      },
    );
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 409, 412] },
        {
          method: "delete",
          path: `${cat.path}/{id}`,
          tags,
          summary: `Delete a ${cat.one} no channel uses (built-in ones cannot be deleted)`,
          request: { params: IdParam, headers: IfMatchHeader },
          responses: { 204: { description: "Deleted." } },
        },
      ),
      async (c) => {
        await deleteCatalogueEntry(writeContext(c), cat.kind, c.req.valid("param").id);
        return c.body(null, 204);
      },
    );
  }
  return app;
}
