/** Monitor jobs: GET /MonitorJobs, execution, the population's asset ids, and status updates from the model. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { ApiError } from "../../pkg/errors";
import { answerHoldsSecrets } from "../../pkg/idempotency";
import { defineRoute, IdParam, json, withTotalCount, answerPage } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { listQueryShape, parsePaging, splitCsv } from "../../pkg/query";
import { caller } from "../../dataprocessing/route-params";
import { monitorAssetCount, monitorAssetPage } from "../populations/store";
import { read, write } from "../route-params";
import { criticalityReports, variableReports } from "./reports";
import { cancelMonitorJob, executeMonitor, finishMonitorJob, monitorJobStatusToken, POPULATION_IDS_IN_ENVIRONMENT } from "./run";
import { MONITOR_JOB_STATUSES, MonitorJobSchema } from "./schema";
import { ACTIVE_MONITOR_JOB_STATUSES, getMonitorJobRow, listMonitorJobs, statusOf, toMonitorJob } from "./store";

export function monitorJobsApp() {
  const app = newApp();
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
          "carries `statusToken`, the token the external system uses with PUT /MonitorJobs/{id}/{status} for this run " +
          "alone, valid until the run ends (its model reports an end, its deadline passes, or it is cancelled).",
        request: { params: z.object({ monitorId: z.uuid().openapi({ param: { name: "monitorId", in: "path" } }) }) },
        responses: { 201: json(MonitorJobSchema, "The monitor job.") },
      },
    ),
    async (c) => {
      const { row } = await executeMonitor(c.env, c.req.valid("param").monitorId, "onDemand", null, c.get("clock").now());
      const job = await toMonitorJob(c.env.DB, row);
      if (row.location !== "External") return c.json(job, 201);
      // The status token is a bearer secret: sealed if the answer is kept for an Idempotency-Key replay.
      answerHoldsSecrets(c);
      return c.json({ ...job, statusToken: await monitorJobStatusToken(c.env, row.id) }, 201);
    },
  );
  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409] },
      {
        method: "post",
        path: "/MonitorJobs/{id}/Cancellation",
        tags: jobTags,
        summary: "Cancel a monitor job that has not ended: it fails, its status token stops working, and an ACR model's job is cancelled",
        description:
          "The run ends Failed with `Cancelled by {name} at {time}.` as its error message; the status token its execution " +
          "answered (External models) is refused from then on, like the token of any ended run. An ACR model's data " +
          "processing job is cancelled with it (POST /Jobs/{id}/Cancellation). A run that has already ended is a 409.",
        request: { params: IdParam },
        responses: { 200: json(MonitorJobSchema, "The cancelled monitor job.") },
      },
    ),
    async (c) => {
      const id = c.req.valid("param").id;
      const row = await getMonitorJobRow(c.env.DB, id);
      if (!(await cancelMonitorJob(c.env, row, caller(c), c.get("clock").now(), { requestId: c.get("requestId") })))
        throw new ApiError("Conflict", `Monitor job ${id} has already ended (${statusOf(row)}).`);
      return c.json(await toMonitorJob(c.env.DB, await getMonitorJobRow(c.env.DB, id)), 200);
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
          `reads its own monitor job's assets only; an External model's status token, its own run's only.`,
        request: {
          params: IdParam,
          query: z.object({ skip: listQueryShape.skip, take: listQueryShape.take, includeTotal: listQueryShape.includeTotal }),
        },
        responses: {
          200: withTotalCount(
            json(z.array(z.string()), "One page of asset ids, ascending."),
            "The population's assets; only with includeTotal=true.",
          ),
        },
      },
    ),
    async (c) => {
      const row = await getMonitorJobRow(c.env.DB, c.req.valid("param").id);
      const principal = c.get("principal");
      if (principal.jobId !== undefined && principal.jobId !== row.jobId)
        throw new ApiError("Forbidden", "A job token may read the assets of its own monitor job only.");
      if (principal.monitorJobId !== undefined && principal.monitorJobId !== row.id)
        throw new ApiError("Forbidden", "A monitor job's status token may read the assets of its own run only.");
      const query = c.req.valid("query");
      const { skip, take } = parsePaging(query.skip, query.take);
      const total = query.includeTotal === "true" ? await monitorAssetCount(c.env.DB, row.monitorRef) : undefined;
      return answerPage(c, { items: await monitorAssetPage(c.env.DB, row.monitorRef, skip, take), total });
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
          "assetId, criticality }], variables?: [{ assetId, name, value }] }` reports the result. A run's status " +
          "token (the execution's answer) may set only that run, until it ends. A job moves forward only (Started, " +
          "InProgress, then Succeeded, Failed or Unknown; repeating the current active status is harmless): going " +
          "back, or changing an ended job, is a 409. " +
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
      if (principal.monitorJobId !== undefined && principal.monitorJobId !== row.id)
        throw new ApiError(
          "Forbidden",
          "This token may set the status of its own monitor job only (the run whose execution answered it), and this is " +
            `${principal.monitorRef === row.monitorRef ? "another run of the same monitor" : "a job of another monitor"}.`,
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
        c.get("clock").now().toISOString(),
        { requestId: c.get("requestId") },
      );
      if (!applied) {
        const now = await getMonitorJobRow(c.env.DB, id);
        if (!ACTIVE_MONITOR_JOB_STATUSES.includes(statusOf(now)))
          throw new ApiError("Conflict", `Monitor job ${id} has already ended (${statusOf(now)}).`);
        throw new ApiError(
          "Conflict",
          `Monitor job ${id} is ${statusOf(now)}; a monitor job moves forward only (Started, InProgress, then Succeeded, ` +
            `Failed or Unknown), not back to ${status}.`,
        );
      }
      return c.json(await toMonitorJob(c.env.DB, await getMonitorJobRow(c.env.DB, id)), 200);
    },
  );
  return app;
}
