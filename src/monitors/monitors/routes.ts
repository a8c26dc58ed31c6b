/**
 * Monitors: GET, POST, PUT and DELETE /Monitors, duplication, and the reads of their population items
 * (with their alarms and criticality) under /Monitors, in the order the OpenAPI document lists them.
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, answerPage, withTotalCount } from "../../pkg/openapi";
import { UniqueValuesResponseSchema } from "../../pkg/query";
import { listMonitorRows, MonitorListQuery, monitorUniqueValues, MonitorUniqueValuesQuery } from "./list";
import { createMonitor, deleteMonitor, duplicateMonitor, getMonitorRow, toMonitor, toMonitors, updateMonitor } from "./store";
import { criticalityHistoryOf, requireMonitorItem, toMonitorItemViews } from "../populations/store";
import { listPopulationItemRows, PopulationItemsQuery } from "../populations/list";
import { AlarmHistoryQuery, listAlarmHistory } from "../alarms/list";
import { ActiveAlarmSchema } from "../alarms/active";
import { AlarmHistoryEntrySchema } from "../alarms/schema";
import { ASSET_TYPES } from "../populations/schema";
import { CreateMonitorSchema, MonitorSchema, UpdateMonitorSchema } from "./schema";
import { read, write, ItemParams } from "../route-params";

export function monitorsApp() {
  const app = newApp();
  const monitorTags = ["Monitors"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Monitors",
      tags: monitorTags,
      summary: "List monitors",
      request: { query: MonitorListQuery },
      responses: { 200: withTotalCount(json(z.array(MonitorSchema), "Newest first by default.")) },
    }),
    async (c) => {
      const { items, total } = await listMonitorRows(c.env.DB, c.req.valid("query"));
      return answerPage(c, { items: await toMonitors(c.env.DB, items), total });
    },
  );
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Monitors/UniqueValues",
      tags: monitorTags,
      summary: "Unique values of monitor fields",
      request: { query: MonitorUniqueValuesQuery },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await monitorUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Monitors/PopulationItems",
      tags: monitorTags,
      summary: "Population items of monitors",
      description:
        "Table 4.2's filters (monitorIds, assetIds with assetType), the alarm state (issue 25), and the common paging " +
        "(skip, take up to 1,000, includeTotal) and order.",
      request: { query: PopulationItemsQuery },
      responses: {
        200: withTotalCount(
          json(
            z.array(
              z.object({
                id: z.uuid(),
                monitor: z.object({ id: z.uuid(), name: z.string() }),
                population: z.object({ id: z.uuid(), name: z.string() }),
                assetReference: z.object({ id: z.string(), name: z.string().nullable() }),
                type: z.enum(ASSET_TYPES),
                criticality: z.number().nullable(),
                band: z.string().nullable(),
                lastMonitorJobId: z.uuid().nullable(),
                alarms: z.array(ActiveAlarmSchema),
              }),
            ),
            "Items with Monitor, Population, AssetReference, Type, Criticality and LastMonitorJobId (table 4.2), and their active alarms.",
          ),
        ),
      },
    }),
    async (c) => {
      const { items, total } = await listPopulationItemRows(c.env.DB, c.req.valid("query"));
      return answerPage(c, { items: await toMonitorItemViews(c.env.DB, items), total });
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Monitors/{id}/PopulationItems/{itemId}/Alarms",
        tags: monitorTags,
        summary: "The alarm history of one population item: each alarm entered and left, newest first",
        description:
          "Each entry names the controller, the monitor job that decided it, the conditions with the values seen, and the " +
          "deviation and work item the alarm's actions made. Filters controllers and actions; skip, take, includeTotal.",
        request: { params: ItemParams, query: AlarmHistoryQuery },
        responses: { 200: withTotalCount(json(z.array(AlarmHistoryEntrySchema), "Entries.")) },
      },
    ),
    async (c) => {
      const { id, itemId } = c.req.valid("param");
      await requireMonitorItem(c.env.DB, id, itemId);
      const { items, total } = await listAlarmHistory(c.env.DB, itemId, c.req.valid("query"));
      return answerPage(c, { items, total });
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Monitors/{id}",
        tags: monitorTags,
        summary: "Get a monitor with its effective values",
        request: { params: IdParam },
        responses: { 200: json(MonitorSchema, "The monitor.") },
      },
    ),
    async (c) => {
      const row = await getMonitorRow(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, await toMonitor(c.env.DB, row), row.etag);
    },
  );
  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Monitors",
      tags: monitorTags,
      summary: "Create a monitor (numbered MON-n); it copies its model's populations and items",
      request: jsonBody(CreateMonitorSchema),
      responses: { 201: json(MonitorSchema, "The monitor.") },
    }),
    async (c) => {
      const row = await createMonitor(writeContext(c), c.get("principal"), c.req.valid("json"));
      c.header("location", `/Monitors/${row.id}`);
      return jsonWithEtag(c, await toMonitor(c.env.DB, row), row.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Monitors",
        tags: monitorTags,
        summary: "Replace a monitor",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateMonitorSchema) },
        responses: { 200: json(MonitorSchema, "The monitor.") },
      },
    ),
    async (c) => {
      const row = await updateMonitor(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, await toMonitor(c.env.DB, row), row.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "delete",
        path: "/Monitors/{id}",
        tags: monitorTags,
        summary: "Delete a monitor",
        request: { params: IdParam },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteMonitor(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: "/Monitors/{id}/Duplication",
        tags: monitorTags,
        summary: "Duplicate a monitor with its populations and items",
        description:
          "The copy gets a new MON number, status Draft, the caller as owner, ' (copy)' after its name; criticality and " +
          "lastMonitorJobId are cleared.",
        request: { params: IdParam },
        responses: { 201: json(MonitorSchema, "The copy.") },
      },
    ),
    async (c) => {
      const row = await duplicateMonitor(writeContext(c), c.get("principal"), c.req.valid("param").id);
      c.header("location", `/Monitors/${row.id}`);
      return c.json(await toMonitor(c.env.DB, row), 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Monitors/{id}/PopulationItems/{itemId}/Criticality",
        tags: monitorTags,
        summary: "The criticality history of one population item, newest first",
        request: {
          params: ItemParams,
          query: z.object({ skip: z.coerce.number().int().min(0).default(0), take: z.coerce.number().int().min(1).max(500).default(100) }),
        },
        responses: {
          200: json(
            z.array(z.object({ monitorJobId: z.uuid(), criticality: z.number(), band: z.string(), recordedAt: z.string() })),
            "Reported values.",
          ),
        },
      },
    ),
    async (c) => {
      const { id, itemId } = c.req.valid("param");
      const { skip, take } = c.req.valid("query");
      await requireMonitorItem(c.env.DB, id, itemId);
      return c.json(await criticalityHistoryOf(c.env.DB, itemId, skip, take), 200);
    },
  );
  return app;
}
