/** Job definitions (what the container host offers) and job configurations: GET, POST, PUT and DELETE /JobConfigurations. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { answerHoldsSecrets } from "../pkg/idempotency";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, answerPage, withTotalCount } from "../pkg/openapi";
import { createConfig, deleteConfig, getConfigRow, toConfiguration, updateConfig } from "./configs";
import { hostFor } from "./host";
import { viaHost } from "./host-errors";
import { ConfigListQuery, listConfigRows } from "./list";
import { CreateJobConfigurationSchema, JobConfigurationSchema, JobDefinitionSchema, UpdateJobConfigurationSchema } from "./schema";
import { read, write } from "./route-params";

export function jobConfigurationsApp() {
  const app = newApp();
  app.openapi(
    defineRoute(
      { ...read, errors: [501, 503] },
      {
        method: "get",
        path: "/JobDefinitions",
        tags: ["Job definitions"],
        summary: "List the images the container host can run",
        description: "Answers 503 with Retry-After when the container host does not answer.",
        responses: { 200: json(z.array(JobDefinitionSchema), "The images, by name and tag.") },
      },
    ),
    async (c) => {
      const { images } = await viaHost(() => hostFor(c.env).listImages());
      const definitions = images
        .map((i) => ({
          name: i.name,
          tag: i.tag,
          image: `${i.name}:${i.tag}`,
          description: i.description ?? null,
          command: i.command ?? null,
        }))
        .sort((a, b) => a.image.localeCompare(b.image));
      return c.json(definitions, 200);
    },
  );

  // --- Job configurations -------------------------------------------------------------------
  const configTags = ["Job configurations"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/JobConfigurations",
      tags: configTags,
      summary: "List job configurations",
      request: { query: ConfigListQuery },
      responses: { 200: withTotalCount(json(z.array(JobConfigurationSchema), "The configs.")) },
    }),
    async (c) => {
      const { items, total } = await listConfigRows(c.env.DB, c.req.valid("query"));
      return answerPage(c, { items: await Promise.all(items.map((row) => toConfiguration(c.env, row, c.get("principal")))), total });
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/JobConfigurations/{id}",
        tags: configTags,
        summary: "Get a job configuration",
        request: { params: IdParam },
        responses: {
          200: json(JobConfigurationSchema, "The config, with its ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const row = await getConfigRow(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, await toConfiguration(c.env, row, c.get("principal")), row.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [409, 501, 503] },
      {
        method: "post",
        path: "/JobConfigurations",
        tags: configTags,
        summary: "Create a job configuration",
        description:
          "The image must be one the container host lists and the resources within its capacity; a chain (nextConfigId) " +
          "must not name a missing config or make a cycle. Run options are stored encrypted.",
        request: jsonBody(CreateJobConfigurationSchema),
        responses: { 201: json(JobConfigurationSchema, "The created config.") },
      },
    ),
    async (c) => {
      const row = await createConfig(writeContext(c), c.env, c.get("principal"), c.req.valid("json"));
      // The answer shows the run option values: sealed if it is kept for an Idempotency-Key replay.
      answerHoldsSecrets(c);
      c.header("location", `/JobConfigurations/${row.id}`);
      return jsonWithEtag(c, await toConfiguration(c.env, row, c.get("principal")), row.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412, 501, 503] },
      {
        method: "put",
        path: "/JobConfigurations",
        tags: configTags,
        summary: "Replace a job configuration (the id is in the body)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateJobConfigurationSchema) },
        responses: { 200: json(JobConfigurationSchema, "The updated config.") },
      },
    ),
    async (c) => {
      const row = await updateConfig(writeContext(c), c.env, c.req.valid("json"));
      return jsonWithEtag(c, await toConfiguration(c.env, row, c.get("principal")), row.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/JobConfigurations/{id}",
        tags: configTags,
        summary: "Delete a job configuration that no other config chains to (its jobs stay readable)",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteConfig(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );
  return app;
}
