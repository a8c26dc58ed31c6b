/**
 * Data processing routes (API version 1.2): job definitions, job configs, output types, jobs, chains,
 * cancellation and job outputs.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { newApp } from "../app-factory";
import type { AppEnv } from "../env";
import { writeContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { answerHoldsSecrets } from "../pkg/idempotency";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { createConfig, deleteConfig, getConfigRow, toConfiguration, updateConfig } from "./configs";
import { apiUrlOf, executeChain, executeConfig, kickChain, runnerOf } from "./execution";
import { decodeCursor, followOutput, readOutput, START } from "./follow";
import { hostFor } from "./host";
import { viaHost } from "./host-errors";
import { ACTIVE_STATUSES, getJob, toJob } from "./jobs";
import { ConfigListQuery, JobListQuery, JobOutputListQuery, listConfigRows, listJobRows } from "./list";
import { createJobOutput, deleteJobOutput, getJobOutput, listJobOutputs } from "./outputs";
import { createOutputType, deleteOutputType, getOutputType, updateOutputType } from "./output-types";
import { listOutputTypes, OutputTypeListQuery } from "./output-types-list";
import {
  ChainExecutionSchema,
  CreateJobConfigurationSchema,
  CreateJobOutputSchema,
  CreateOutputTypeSchema,
  ExecutionBodySchema,
  ExecutionResultSchema,
  JobConfigurationSchema,
  JobDefinitionSchema,
  JobOutputSchema,
  JobSchema,
  OutputTypeSchema,
  UpdateJobConfigurationSchema,
  UpdateOutputTypeSchema,
} from "./schema";

const read = { permission: PERMISSIONS.dataProcessingRead, area: "dataProcessing" } as const;
const write = { permission: PERMISSIONS.dataProcessingWrite, area: "dataProcessing" } as const;
const OutputQuery = z.object({
  follow: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      description:
        "`true`: a stream of server-sent events (text/event-stream) until the job ends or the stream's time is up; " +
        "otherwise one JSON read.",
    }),
  after: z
    .string()
    .max(400)
    .optional()
    .openapi({
      description:
        "A cursor from an earlier read (its `cursor`, or an event's id): only what came after it. Left out: from the " +
        "start of the output kept.",
    }),
});
const OutputHeaders = z.object({
  "last-event-id": z
    .string()
    .max(400)
    .optional()
    .openapi({ description: "What EventSource sends when it reconnects: the id of the last event it got (a cursor, as `after`)." }),
});
const OutputReadSchema = z
  .object({
    jobId: z.uuid(),
    status: z.string(),
    text: z.string().openapi({ description: "The output after the cursor (all of it kept, without one)." }),
    gap: z.boolean().openapi({
      description: "True when output was written between the cursor and now that is no longer kept (more than the 64 KiB tail).",
    }),
    cursor: z.string().openapi({ description: "Send back as `after` (or Last-Event-ID) to read on from here." }),
    live: z.boolean().openapi({
      description: "True when read from the container host now; false: the job's stored output (not running, or the host did not answer).",
    }),
    ended: z.boolean(),
    end: z
      .object({
        status: z.string(),
        errorMessage: z.string().nullable(),
        cancelledBy: z.object({ id: z.string().nullable(), name: z.string().nullable() }).nullable(),
        cancelledAt: z.string().nullable(),
        endedAt: z.string().nullable(),
      })
      .optional()
      .openapi({ description: "How the job ended, once it has." }),
  })
  .openapi("JobOutputRead");
const ConfigurationIdParam = z.object({ configurationId: z.uuid().openapi({ param: { name: "configurationId", in: "path" } }) });

function caller(c: Context<AppEnv>) {
  const principal = c.get("principal");
  return { id: principal.id, name: principal.name ?? null };
}

export function dataProcessingApp() {
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
      responses: { 200: json(z.array(JobConfigurationSchema), "The configs (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listConfigRows(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(await Promise.all(items.map((row) => toConfiguration(c.env, row, c.get("principal")))), 200);
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

  // --- Output types ---------------------------------------------------------------------------
  const typeTags = ["Output types"];
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/OutputTypes",
      tags: typeTags,
      summary: "List output types (by name)",
      request: { query: OutputTypeListQuery },
      responses: {
        200: {
          ...json(z.array(OutputTypeSchema), "One page of output types."),
          headers: {
            "x-total-count": {
              description: "Output types matching the filters before skip and take; only with includeTotal=true.",
              schema: { type: "integer" },
            },
          },
        },
      },
    }),
    async (c) => {
      const { items, total } = await listOutputTypes(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items, 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/OutputTypes/{id}",
        tags: typeTags,
        summary: "Get an output type",
        request: { params: IdParam },
        responses: {
          200: json(OutputTypeSchema, "The output type, with its ETag."),
          304: { description: "Not modified (If-None-Match)." },
        },
      },
    ),
    async (c) => {
      const found = await getOutputType(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );
  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/OutputTypes",
      tags: typeTags,
      summary: "Create an output type",
      description:
        "`schema` is a JSON Schema (drafts 4, 7, 2019-09, 2020-12; `$schema` picks one, 2020-12 by default) or null; a " +
        "schema that is not valid is refused.",
      request: jsonBody(CreateOutputTypeSchema),
      responses: { 201: json(OutputTypeSchema, "The created output type.") },
    }),
    async (c) => {
      const created = await createOutputType(writeContext(c), c.req.valid("json"));
      c.header("location", `/OutputTypes/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/OutputTypes",
        tags: typeTags,
        summary: "Replace an output type (the id is in the body)",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateOutputTypeSchema) },
        responses: { 200: json(OutputTypeSchema, "The updated output type.") },
      },
    ),
    async (c) => {
      const updated = await updateOutputType(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/OutputTypes/{id}",
        tags: typeTags,
        summary: "Delete an output type no config uses",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteOutputType(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  // --- Jobs -------------------------------------------------------------------------------------
  const jobTags = ["Jobs"];
  async function answerExecution(c: Context<AppEnv>, created: { chainId: string; jobIds: string[] }) {
    // The first job starts in the background; its runner retries every minute if this is lost.
    c.executionCtx.waitUntil(
      kickChain(c.env, created.chainId).catch((error: unknown) =>
        c.get("log").warn("job start deferred", { chainId: created.chainId, error: String(error) }),
      ),
    );
    const first = toJob(await getJob(c.env.DB, created.jobIds[0]!));
    c.header("location", `/Jobs/${first.id}`);
    return c.json({ jobId: first.id, jobIds: created.jobIds, chainId: created.chainId, job: first }, 201);
  }

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 501, 503] },
      {
        method: "post",
        path: "/Jobs/Execution/{configurationId}",
        tags: jobTags,
        summary: "Run a job configuration now (with its nextConfigId chain)",
        description:
          "Creates one job per config of the chain, in status Started; the first starts at once in container group " +
          "`containergroup-{jobId}`. The body is optional: `{ runOptions }` merged over the config's (the body wins); " +
          "`jobId` is always set.",
        request: {
          params: ConfigurationIdParam,
          body: { required: false, content: { "application/json": { schema: ExecutionBodySchema } } },
        },
        responses: { 201: json(ExecutionResultSchema, "`jobId` of the first job, every job id of the chain, and the first job.") },
      },
    ),
    async (c) => {
      const body = (c.req.valid("json") as z.infer<typeof ExecutionBodySchema> | undefined) ?? {};
      const created = await executeConfig(
        writeContext(c),
        c.env,
        c.req.valid("param").configurationId,
        body.runOptions,
        apiUrlOf(c.env, c.req.url),
        caller(c),
      );
      return answerExecution(c, created);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 501, 503] },
      {
        method: "post",
        path: "/Jobs/ChainExecution",
        tags: jobTags,
        summary: "Run configs once as a chain, in the order given",
        description:
          "One job per config, created at once; only the first starts, each next one when the previous succeeds; when one " +
          "fails every later job fails naming it. `runOptions` go to the first job only (rule 3): an object of strings, " +
          "or `{ <firstConfigId>: {...} }`.",
        request: jsonBody(ChainExecutionSchema),
        responses: { 201: json(ExecutionResultSchema, "`jobId` of the first job, every job id in chain order, and the first job.") },
      },
    ),
    async (c) => {
      const created = await executeChain(writeContext(c), c.env, c.req.valid("json") as never, apiUrlOf(c.env, c.req.url), caller(c));
      return answerExecution(c, created);
    },
  );
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Jobs",
      tags: jobTags,
      summary: "List jobs",
      request: { query: JobListQuery },
      responses: { 200: json(z.array(JobSchema), "The jobs, newest first (X-Total-Count with includeTotal).") },
    }),
    async (c) => {
      const { items, total } = await listJobRows(c.env.DB, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items.map(toJob), 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Jobs/{id}",
        tags: jobTags,
        summary: "Get a job with its output",
        request: { params: IdParam },
        responses: { 200: json(JobSchema, "The job, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const row = await getJob(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, toJob(row), row.etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 501, 503] },
      {
        method: "post",
        path: "/Jobs/{id}/Cancellation",
        tags: jobTags,
        summary: "Cancel a job that has not ended: it fails, its container is removed, and the rest of its chain fails",
        request: { params: IdParam },
        responses: { 200: json(JobSchema, "The cancelled job.") },
      },
    ),
    async (c) => {
      const id = c.req.valid("param").id;
      const job = await getJob(c.env.DB, id);
      if (!ACTIVE_STATUSES.includes(job.status)) throw new ApiError("Conflict", `Job ${id} has already ended (${job.status}).`);
      await runnerOf(c.env, job.chain_id).cancel(job.chain_id, id, caller(c));
      return c.json(toJob(await getJob(c.env.DB, id)), 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Jobs/{id}/Output",
        operationId: "getLiveJobOutput",
        tags: jobTags,
        summary: "Read or follow a job's output as the container writes it",
        description:
          "Live from the container host while the job runs (the job's stored `output` keeps its minute refresh). " +
          "`follow=true` answers text/event-stream: `status` events ({ status }), `output` events ({ text, gap }, id = a " +
          "cursor), then `end` ({ status, errorMessage, cancelledBy, cancelledAt, endedAt }) when the job ends, or " +
          "`limit` when the stream's time (JOB_OUTPUT_FOLLOW_SECONDS, default 300 s) is up while it runs; reconnecting " +
          "with Last-Event-ID goes on where it stopped. Without follow: one JSON read, `after` a cursor for only what is " +
          "new.",
        request: { params: IdParam, query: OutputQuery, headers: OutputHeaders },
        responses: {
          200: {
            description: "The output (JSON), or its stream (text/event-stream, with follow=true).",
            content: {
              "application/json": { schema: OutputReadSchema },
              "text/event-stream": {
                schema: z
                  .string()
                  .openapi({ example: 'event: output\nid: eyJvIjo5LCJhIjoibGluZSAxXG4ifQ\ndata: {"text":"line 1\\n","gap":false}\n\n' }),
              },
            },
          },
        },
      },
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const { follow, after } = c.req.valid("query");
      const lastEventId = c.req.valid("header")["last-event-id"];
      const position = after ? decodeCursor(after, "query.after") : lastEventId ? decodeCursor(lastEventId, "header.Last-Event-ID") : START;
      if (follow !== "true") return c.json(await readOutput(c.env, id, position, c.get("log")), 200);
      const job = await getJob(c.env.DB, id);
      const stream = followOutput(c.env, job, position, c.req.raw.signal, c.get("log"));
      return new Response(stream, {
        status: 200,
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache, no-transform",
          "x-accel-buffering": "no",
        },
      });
    },
  );

  // --- Job outputs ------------------------------------------------------------------------------
  const outputTags = ["Job outputs"];
  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.jobOutputsWrite, area: "dataProcessing", errors: [404, 409] },
      {
        method: "post",
        path: "/JobOutputs",
        tags: outputTags,
        summary: "Post an output of a running job (with the job's own token)",
        description:
          "A job container posts with the token it finds in INTEGRITY_EDGE_JOB_TOKEN, which may post outputs of that job " +
          "only, while it runs. `jobOutputTypeId` defaults to the config's output type; an output that does not match the " +
          "type's schema creates nothing (rule 6), is answered with the schema errors and is recorded on the job " +
          "(`outputRejections`).",
        request: jsonBody(CreateJobOutputSchema),
        responses: { 201: json(JobOutputSchema, "The stored output.") },
      },
    ),
    async (c) => {
      const created = await createJobOutput(writeContext(c), c.get("principal"), c.req.valid("json"));
      c.header("location", `/JobOutputs/${created.id}`);
      return c.json(created, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/JobOutputs/{id}",
        tags: outputTags,
        summary: "Get a job output",
        request: { params: IdParam },
        responses: { 200: json(JobOutputSchema, "The output.") },
      },
    ),
    async (c) => c.json(await getJobOutput(c.env.DB, c.req.valid("param").id), 200),
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Jobs/{id}/Outputs",
        tags: outputTags,
        summary: "List the outputs of a job, oldest first",
        description:
          "Paged like every list: `skip`, `take` (default 100, at most 1,000), `order`, `includeTotal` (X-Total-Count); a " +
          "job may have any number of outputs.",
        request: { params: IdParam, query: JobOutputListQuery },
        responses: { 200: json(z.array(JobOutputSchema), "One page of the outputs (X-Total-Count with includeTotal).") },
      },
    ),
    async (c) => {
      const { items, total } = await listJobOutputs(c.env.DB, c.req.valid("param").id, c.req.valid("query"));
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json(items, 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "delete",
        path: "/JobOutputs/{id}",
        tags: outputTags,
        summary: "Delete a job output",
        request: { params: IdParam },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteJobOutput(c.env.DB, c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
