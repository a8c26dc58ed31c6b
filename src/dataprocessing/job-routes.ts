/** Jobs: execution of a configuration or a chain, GET /Jobs, cancellation, and the container's output. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { newApp } from "../app-factory";
import type { AppEnv } from "../env";
import { writeContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, json, jsonBody, answerPage, withTotalCount } from "../pkg/openapi";
import { apiUrlOf, executeChain, executeConfig, kickChain, runnerOf } from "./execution";
import { decodeCursor, followOutput, readOutput, START } from "./follow";
import { ACTIVE_STATUSES, getJob, toJob } from "./jobs";
import { JobListQuery, listJobRows } from "./list";
import { ChainExecutionSchema, ExecutionBodySchema, ExecutionResultSchema, JobSchema } from "./schema";
import { read, write, ConfigurationIdParam, caller } from "./route-params";
import { OutputQuery, OutputHeaders, OutputReadSchema } from "./job-output-read";

export function jobsApp() {
  const app = newApp();
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
      const created = await executeChain(writeContext(c), c.env, c.req.valid("json"), apiUrlOf(c.env, c.req.url), caller(c));
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
      responses: { 200: withTotalCount(json(z.array(JobSchema), "The jobs, newest first.")) },
    }),
    async (c) => {
      const { items, total } = await listJobRows(c.env.DB, c.req.valid("query"));
      return answerPage(c, { items: items.map(toJob), total });
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
  return app;
}
