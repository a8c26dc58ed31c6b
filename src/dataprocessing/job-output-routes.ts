/** Job outputs: what a running job posts (POST /JobOutputs), read, listed per job and deleted. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { defineRoute, IdParam, json, jsonBody, answerPage, withTotalCount } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { JobOutputListQuery } from "./list";
import { createJobOutput, deleteJobOutput, getJobOutput, listJobOutputs } from "./outputs";
import { CreateJobOutputSchema, JobOutputSchema } from "./schema";
import { read, write } from "./route-params";

export function jobOutputsApp() {
  const app = newApp();
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
        responses: { 200: withTotalCount(json(z.array(JobOutputSchema), "One page of the outputs.")) },
      },
    ),
    async (c) => answerPage(c, await listJobOutputs(c.env.DB, c.req.valid("param").id, c.req.valid("query"))),
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
      await deleteJobOutput(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );
  return app;
}
