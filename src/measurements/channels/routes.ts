/** CRUD /Channels: the original Signals client's channels (each with its channelNumber). */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { answerPage, defineRoute, IdParam, IfMatchHeader, json, jsonBody, withTotalCount } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { exportable, exportList, exportQuery, pagesOf } from "../../export";
import { dropSeries, reanalyse } from "../series";
import { ChannelListQuery, listChannels } from "./list";
import { ChannelSchema, CreateChannelSchema, UpdateChannelSchema } from "./schema";
import { createChannel, deleteChannel, getChannel, updateChannel } from "./store";

const tags = ["Measurements"];
const read = { permission: PERMISSIONS.measurementsRead, area: "signals" } as const;
const write = { permission: PERMISSIONS.measurementsWrite, area: "signals" } as const;

export function channelsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Channels",
      tags,
      summary: "List channels (filters by asset, plant, type, origin, alarm state, next inspection due)",
      request: { query: exportQuery(ChannelListQuery) },
      responses: { 200: exportable(withTotalCount(json(z.array(ChannelSchema), "One page of channels."))) },
    }),
    async (c) => {
      const { format, ...query } = c.req.valid("query");
      if (format) {
        const pages = pagesOf(query, (paged) => listChannels(c.env.DB, paged));
        return (await exportList(c, format, { name: "channels", item: ChannelSchema, pages })) as never;
      }
      return answerPage(c, await listChannels(c.env.DB, query));
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Channels/{id}",
        tags,
        summary: "Get a channel, with its latest reading and analysis",
        request: { params: IdParam },
        responses: { 200: json(ChannelSchema, "The channel, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getChannel(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Channels",
      tags,
      summary: "Create a channel on an asset (its channelNumber is given by the service)",
      request: jsonBody(CreateChannelSchema),
      responses: { 201: json(ChannelSchema, "The created channel.") },
    }),
    async (c) => {
      const created = await createChannel(writeContext(c), c.req.valid("json"));
      c.header("location", `/Channels/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Channels",
        tags,
        summary: "Replace a channel (the id is in the body)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateChannelSchema) },
        responses: { 200: json(ChannelSchema, "The updated channel.") },
      },
    ),
    async (c) => {
      const ctx = writeContext(c);
      const updated = await updateChannel(ctx, c.req.valid("json"));
      // Its nominal, minimum or interval may have changed: the analysis is recomputed from the series.
      const again = await reanalyse(c.env, { ...ctx, db: c.env.DB }, updated.value.id);
      return jsonWithEtag(c, again?.value ?? updated.value, again?.etag ?? updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Channels/{id}",
        tags,
        summary: "Delete a channel and its readings",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted, with its series." } },
      },
    ),
    async (c) => {
      const row = await deleteChannel(writeContext(c), c.req.valid("param").id);
      await dropSeries(c.env, row.id);
      return c.body(null, 204);
    },
  );

  return app;
}
