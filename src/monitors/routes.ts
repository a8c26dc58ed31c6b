/** Models and monitors routes (API area monitoring, version 1.0). */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { answerHoldsSecrets } from "../pkg/idempotency";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { listQueryShape, parsePaging, splitCsv, UniqueValuesResponseSchema } from "../pkg/query";
import {
  DefinitionListQuery,
  DefinitionVersionListQuery,
  listDefinitionRows,
  listDefinitionVersionRows,
  listModelRows,
  listMonitorRows,
  ModelListQuery,
  modelUniqueValues,
  ModelUniqueValuesQuery,
  MonitorListQuery,
  monitorUniqueValues,
  MonitorUniqueValuesQuery,
} from "./list";
import {
  addItem,
  addPopulation,
  createDefinition,
  createModel,
  createMonitor,
  deleteDefinition,
  deleteDefinitionById,
  deleteModel,
  deleteMonitor,
  duplicateMonitor,
  findDefinitionByVersion,
  getDefinition,
  getModelRow,
  getMonitorRow,
  definitionOf,
  toPopulationItemViews,
  removeItem,
  removePopulation,
  toModel,
  requireMonitorItem,
  criticalityHistory,
  toModels,
  toMonitor,
  toMonitors,
  updateDefinition,
  updateModel,
  updateMonitor,
} from "./store";
import { variableReports } from "./alarms";
import { AlarmHistoryQuery, listAlarmHistory, listPopulationItemRows, PopulationItemsQuery } from "./alarm-lists";
import {
  ACTIVE_MONITOR_JOB_STATUSES,
  executeMonitor,
  finishMonitorJob,
  criticalityReports,
  getMonitorJobRow,
  listMonitorJobs,
  monitorStatusToken,
  populationAssetCount,
  populationAssetPage,
  POPULATION_IDS_IN_ENVIRONMENT,
  toMonitorJob,
} from "./jobs";
import {
  ActiveAlarmSchema,
  AlarmHistoryEntrySchema,
  ASSET_TYPES,
  CreateModelDefinitionSchema,
  CreateModelSchema,
  CreateMonitorSchema,
  CreatePopulationItemSchema,
  CreatePopulationSchema,
  MONITOR_JOB_STATUSES,
  ModelDefinitionSchema,
  ModelSchema,
  MonitorJobSchema,
  MonitorSchema,
  PopulationItemSchema,
  PopulationSchema,
  UpdateModelDefinitionSchema,
  UpdateModelSchema,
  UpdateMonitorSchema,
} from "./schema";

const read = { permission: PERMISSIONS.monitorsRead, area: "monitoring" } as const;
const write = { permission: PERMISSIONS.monitorsWrite, area: "monitoring" } as const;
const NameVersion = z.object({
  name: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: "name", in: "path" } }),
  version: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: "version", in: "path" } }),
});
const NameParam = z.object({
  name: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: "name", in: "path" } }),
});
const PopulationParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
  populationId: z.uuid().openapi({ param: { name: "populationId", in: "path" } }),
});
const ItemParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
  itemId: z.uuid().openapi({ param: { name: "itemId", in: "path" } }),
});
const PopulationHeader = z.object({
  populationid: z.uuid().openapi({
    param: { name: "populationid", in: "header" },
    description: "populationId: the population the item is added to (the spec's shape; header names are case-insensitive).",
  }),
});

export function monitoringApp() {
  const app = newApp();

  // --- Model definitions ------------------------------------------------------------------------
  const defTags = ["Model definitions"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/ModelDefinitions",
      tags: defTags,
      summary: "List model definitions",
      request: { query: DefinitionListQuery },
      responses: { 200: json(z.array(ModelDefinitionSchema), "By name, then age (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listDefinitionRows<Parameters<typeof definitionOf>[0]>(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items.map(definitionOf), 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/ModelDefinitions/{id}",
        tags: defTags,
        summary: "Get a model definition",
        request: { params: IdParam },
        responses: { 200: json(ModelDefinitionSchema, "The definition.") },
      },
    ),
    async (c) => {
      const found = await getDefinition(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/ModelDefinitions/{name}/versions",
      tags: defTags,
      summary: "The versions of a model definition, oldest first",
      request: { params: NameParam, query: DefinitionVersionListQuery },
      responses: { 200: json(z.array(ModelDefinitionSchema), "One page of its versions (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listDefinitionVersionRows<Parameters<typeof definitionOf>[0]>(
        c.env.DB,
        c.req.valid("param").name,
        c.req.valid("query"),
      );
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items.map(definitionOf), 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/ModelDefinitions/{name}/versions/{version}",
        tags: defTags,
        summary: "One version of a model definition",
        request: { params: NameVersion },
        responses: { 200: json(ModelDefinitionSchema, "The version.") },
      },
    ),
    async (c) => {
      const { name, version } = c.req.valid("param");
      const row = await findDefinitionByVersion(c.env.DB, name, version);
      if (!row) throw new ApiError("NotFound", `Model definition ${name} version ${version} does not exist.`);
      return c.json(
        { id: row.id, name: row.name, version: row.version, uri: row.uri, location: row.location, createdDate: row.created_at },
        200,
      );
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/ModelDefinitions/{name}/versions/{version}",
        tags: defTags,
        summary: "Delete a version no model uses",
        request: { params: NameVersion },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      const { name, version } = c.req.valid("param");
      await deleteDefinition(writeContext(c), await findDefinitionByVersion(c.env.DB, name, version), `${name} version ${version}`);
      return c.body(null, 204);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [409, 501, 503] },
      {
        method: "post",
        path: "/ModelDefinitions",
        tags: defTags,
        summary: "Create a model definition (an image by name and version)",
        description:
          "location ACR: the image name:version must be one the container host lists; uri is refused. location External: uri is required.",
        request: jsonBody(CreateModelDefinitionSchema),
        responses: { 201: json(ModelDefinitionSchema, "The definition.") },
      },
    ),
    async (c) => {
      const created = await createDefinition(writeContext(c), c.env, c.req.valid("json"));
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/ModelDefinitions",
        tags: defTags,
        summary: "Replace a model definition",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateModelDefinitionSchema) },
        responses: { 200: json(ModelDefinitionSchema, "The definition.") },
      },
    ),
    async (c) => {
      const updated = await updateDefinition(writeContext(c), c.env, c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/ModelDefinitions/{id}",
        tags: defTags,
        summary: "Delete a model definition no model uses",
        request: { params: IdParam },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteDefinitionById(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  // --- Models and monitors: the resource routes and their populations ------------------------------
  const modelTags = ["Models"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Models",
      tags: modelTags,
      summary: "List models",
      request: { query: ModelListQuery },
      responses: { 200: json(z.array(ModelSchema), "Newest first by default (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listModelRows(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(await toModels(c.env.DB, items), 200);
    },
  );
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Models/UniqueValues",
      tags: modelTags,
      summary: "Unique values of model fields and properties",
      request: { query: ModelUniqueValuesQuery },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await modelUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Models/{id}",
        tags: modelTags,
        summary: "Get a model with its populations",
        request: { params: IdParam },
        responses: { 200: json(ModelSchema, "The model.") },
      },
    ),
    async (c) => {
      const row = await getModelRow(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, await toModel(c.env.DB, row), row.etag);
    },
  );
  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Models",
      tags: modelTags,
      summary: "Create a model (numbered MOD-n)",
      request: jsonBody(CreateModelSchema),
      responses: { 201: json(ModelSchema, "The model.") },
    }),
    async (c) => {
      const row = await createModel(writeContext(c), c.get("principal"), c.req.valid("json"));
      c.header("location", `/Models/${row.id}`);
      return jsonWithEtag(c, await toModel(c.env.DB, row), row.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Models",
        tags: modelTags,
        summary: "Replace a model; monitors that do not override a field follow it",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateModelSchema) },
        responses: { 200: json(ModelSchema, "The model.") },
      },
    ),
    async (c) => {
      const row = await updateModel(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, await toModel(c.env.DB, row), row.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/Models/{id}",
        tags: modelTags,
        summary: "Delete a model no monitor uses",
        request: { params: IdParam },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteModel(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  for (const [resource, kind] of [
    ["Models", "model"],
    ["Monitors", "monitor"],
  ] as const) {
    const tags = [resource === "Models" ? "Models" : "Monitors"];
    const owner = async (db: D1Database, id: string) => (kind === "model" ? getModelRow(db, id) : getMonitorRow(db, id));
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 412] },
        {
          method: "post",
          path: `/${resource}/{id}/Populations`,
          tags,
          summary: `Add a population to a ${kind}`,
          request: { params: IdParam, ...jsonBody(CreatePopulationSchema) },
          responses: { 201: json(PopulationSchema, "The population.") },
        },
      ),
      async (c) => {
        const { id } = c.req.valid("param");
        await owner(c.env.DB, id);
        return c.json(await addPopulation(writeContext(c), kind, id, c.req.valid("json")), 201);
      },
    );
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 412] },
        {
          method: "delete",
          path: `/${resource}/{id}/Populations/{populationId}`,
          tags,
          summary: "Delete a population with its items",
          request: { params: PopulationParams },
          responses: { 204: { description: "Deleted." } },
        },
      ),
      async (c) => {
        const { id, populationId } = c.req.valid("param");
        await removePopulation(writeContext(c), kind, id, populationId);
        return c.body(null, 204);
      },
    );
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 409, 412] },
        {
          method: "post",
          path: `/${resource}/{id}/Populations/{populationId}/Items`,
          tags,
          summary: "Add an asset to a population (path form)",
          description: "The asset must exist in the asset catalogue and be of the population's asset type.",
          request: { params: PopulationParams, ...jsonBody(CreatePopulationItemSchema) },
          responses: { 201: json(PopulationItemSchema, "The item.") },
        },
      ),
      async (c) => {
        const { id, populationId } = c.req.valid("param");
        return c.json(await addItem(writeContext(c), kind, id, populationId, "path.populationId", c.req.valid("json")), 201);
      },
    );
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 409, 412] },
        {
          method: "post",
          path: `/${resource}/{id}/PopulationItems`,
          tags,
          summary: "Add an asset to a population named by the populationId header (the spec's form)",
          request: { params: IdParam, headers: PopulationHeader, ...jsonBody(CreatePopulationItemSchema) },
          responses: { 201: json(PopulationItemSchema, "The item.") },
        },
      ),
      async (c) => {
        const { id } = c.req.valid("param");
        return c.json(
          await addItem(writeContext(c), kind, id, c.req.valid("header").populationid, "header.populationId", c.req.valid("json")),
          201,
        );
      },
    );
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 412] },
        {
          method: "delete",
          path: `/${resource}/{id}/PopulationItems/{itemId}`,
          tags,
          summary: "Remove an item",
          request: { params: ItemParams },
          responses: { 204: { description: "Deleted." } },
        },
      ),
      async (c) => {
        const { id, itemId } = c.req.valid("param");
        await removeItem(writeContext(c), kind, id, itemId);
        return c.body(null, 204);
      },
    );
  }

  // --- Monitors ------------------------------------------------------------------------------------
  const monitorTags = ["Monitors"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Monitors",
      tags: monitorTags,
      summary: "List monitors",
      request: { query: MonitorListQuery },
      responses: { 200: json(z.array(MonitorSchema), "Newest first by default (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listMonitorRows(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(await toMonitors(c.env.DB, items), 200);
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
        200: json(
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
      },
    }),
    async (c) => {
      const { items, total } = await listPopulationItemRows(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(await toPopulationItemViews(c.env.DB, items), 200);
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
        responses: { 200: json(z.array(AlarmHistoryEntrySchema), "Entries (X-Total-Count with includeTotal).") },
      },
    ),
    async (c) => {
      const { id, itemId } = c.req.valid("param");
      await requireMonitorItem(c.env.DB, id, itemId);
      const { items, total } = await listAlarmHistory(c.env.DB, itemId, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items as z.infer<typeof AlarmHistoryEntrySchema>[], 200);
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
      return c.json(await criticalityHistory(c.env.DB, itemId, skip, take), 200);
    },
  );

  // --- Monitor jobs ----------------------------------------------------------------------------------
  const jobTags = ["Monitor jobs"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/MonitorJobs",
      tags: jobTags,
      summary: "List monitor jobs",
      request: { query: z.object({ monitorIds: z.string().optional() }) },
      responses: { 200: json(z.array(MonitorJobSchema), "Newest first.") },
    }),
    async (c) => c.json(await listMonitorJobs(c.env.DB, splitCsv(c.req.valid("query").monitorIds)), 200),
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/MonitorJobs/{id}",
        tags: jobTags,
        summary: "Get a monitor job",
        request: { params: IdParam },
        responses: { 200: json(MonitorJobSchema, "The monitor job.") },
      },
    ),
    async (c) => c.json(await toMonitorJob(c.env.DB, await getMonitorJobRow(c.env.DB, c.req.valid("param").id)), 200),
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 501, 503] },
      {
        method: "post",
        path: "/MonitorJobs/Execution/{monitorId}",
        tags: jobTags,
        summary: "Run a monitor now",
        description:
          "ACR models: a data processing job runs the model image; its end is copied back. External models: the answer " +
          "carries `statusToken`, the token the external system uses with PUT /MonitorJobs/{id}/{status}.",
        request: { params: z.object({ monitorId: z.uuid().openapi({ param: { name: "monitorId", in: "path" } }) }) },
        responses: { 201: json(MonitorJobSchema, "The monitor job.") },
      },
    ),
    async (c) => {
      const { row } = await executeMonitor(c.env, c.req.valid("param").monitorId, "onDemand", null);
      const job = await toMonitorJob(c.env.DB, row);
      if (row.location !== "External") return c.json(job, 201);
      // The status token is a bearer secret: sealed if the answer is kept for an Idempotency-Key replay.
      answerHoldsSecrets(c);
      return c.json({ ...job, statusToken: await monitorStatusToken(c.env, row.monitor_ref) }, 201);
    },
  );
  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.monitorJobAssetsRead, area: "monitoring", errors: [404] },
      {
        method: "get",
        path: "/MonitorJobs/{id}/PopulationAssetIds",
        tags: jobTags,
        summary: "Page the asset ids a monitor job scores (for its model, with the job's own token)",
        description:
          `Every distinct asset of the monitor's population items, by id, as they are when read; \`skip\`, \`take\` ` +
          `(default 100, at most 1,000), \`includeTotal\` (X-Total-Count). The job's environment holds ` +
          `\`populationAssetCount\` and this path in \`populationAssetIdsPath\`, and the ids themselves in ` +
          `\`populationAssetIds\` only when there are at most ${POPULATION_IDS_IN_ENVIRONMENT}. An ACR model's job token ` +
          `reads its own monitor job's assets only; a monitor's status token, its monitor's jobs' only.`,
        request: {
          params: IdParam,
          query: z.object({ skip: listQueryShape.skip, take: listQueryShape.take, includeTotal: listQueryShape.includeTotal }),
        },
        responses: { 200: json(z.array(z.string()), "One page of asset ids, ascending.") },
      },
    ),
    async (c) => {
      const row = await getMonitorJobRow(c.env.DB, c.req.valid("param").id);
      const principal = c.get("principal");
      if (principal.jobId !== undefined && principal.jobId !== row.job_id)
        throw new ApiError("Forbidden", "A job token may read the assets of its own monitor job only.");
      if (principal.monitorRef !== undefined && principal.monitorRef !== row.monitor_ref)
        throw new ApiError("Forbidden", "This token may read the assets of its own monitor's jobs only.");
      const query = c.req.valid("query");
      const { skip, take } = parsePaging(query.skip, query.take);
      if (query.includeTotal === "true") c.header("x-total-count", String(await populationAssetCount(c.env.DB, row.monitor_ref)));
      return c.json(await populationAssetPage(c.env.DB, row.monitor_ref, skip, take), 200);
    },
  );
  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.monitorJobsStatus, area: "monitoring", errors: [404, 409] },
      {
        method: "put",
        path: "/MonitorJobs/{id}/{status}",
        tags: jobTags,
        summary: "Set the status of a monitor job of an External model (empty body, or criticality)",
        description:
          "The original product's shape: an empty body. An optional JSON body `{ output?, errorMessage?, criticality?: [{ " +
          "assetId, criticality }], variables?: [{ assetId, name, value }] }` reports the result. A monitor's status " +
          "token may set only that monitor's jobs. A job moves forward only (Started, InProgress, then Succeeded, Failed " +
          "or Unknown; repeating the current active status is harmless): going back, or changing an ended job, is a 409. " +
          "Criticality or variables for an asset that no population item of the monitor references are not applied, and " +
          "the job's error message names it. On Succeeded the monitor's controllers are evaluated on the variables: " +
          "alarms are entered and left, with their actions, before the answer.",
        request: {
          params: z.object({
            id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
            status: z.enum(MONITOR_JOB_STATUSES).openapi({ param: { name: "status", in: "path" } }),
          }),
          body: {
            required: false,
            content: {
              "application/json": {
                schema: z
                  .object({
                    output: z.string().max(65536).optional(),
                    errorMessage: z.string().max(4000).optional(),
                    criticality: z.array(z.unknown()).max(10000).optional(),
                    variables: z
                      .array(z.unknown())
                      .max(50000)
                      .optional()
                      .openapi({ description: "[{ assetId, name, value (a number) }]: what the controllers compare with their limits." }),
                  })
                  .strict(),
              },
            },
          },
        },
        responses: { 200: json(MonitorJobSchema, "The monitor job.") },
      },
    ),
    async (c) => {
      const { id, status } = c.req.valid("param");
      const row = await getMonitorJobRow(c.env.DB, id);
      const principal = c.get("principal");
      if (principal.monitorRef !== undefined && principal.monitorRef !== row.monitor_ref)
        throw new ApiError(
          "Forbidden",
          "This token may set the job statuses of its own monitor only, and this job belongs to another monitor.",
        );
      if (row.location !== "External")
        throw new ApiError("Conflict", "This monitor job runs an ACR model: its status comes from its data processing job.");
      const body =
        (c.req.valid("json") as { output?: string; errorMessage?: string; criticality?: unknown[]; variables?: unknown[] } | undefined) ??
        {};
      const criticality = criticalityReports(body.criticality ? [{ criticality: body.criticality }] : []);
      const variables = variableReports(body.variables ? [{ variables: body.variables }] : []);
      const problems = [
        ...criticality.problems.map((message) => ({ field: "body.criticality", rule: "criticality", message })),
        ...variables.problems.map((message) => ({ field: "body.variables", rule: "variables", message })),
      ];
      if (problems.length) throw new ApiError("ValidationFailed", problems.map((p) => p.message).join("; "), { errors: problems });
      const reports = { criticality: criticality.reports, variables: variables.reports };
      const applied = await finishMonitorJob(
        c.env,
        row,
        status,
        body.errorMessage ?? null,
        body.output ?? null,
        reports,
        new Date().toISOString(),
        { requestId: c.get("requestId") },
      );
      if (!applied) {
        const now = await getMonitorJobRow(c.env.DB, id);
        if (!ACTIVE_MONITOR_JOB_STATUSES.includes(now.status))
          throw new ApiError("Conflict", `Monitor job ${id} has already ended (${now.status}).`);
        throw new ApiError(
          "Conflict",
          `Monitor job ${id} is ${now.status}; a monitor job moves forward only (Started, InProgress, then Succeeded, ` +
            `Failed or Unknown), not back to ${status}.`,
        );
      }
      return c.json(await toMonitorJob(c.env.DB, await getMonitorJobRow(c.env.DB, id)), 200);
    },
  );

  return app;
}
