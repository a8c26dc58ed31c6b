/** CRUD /InspectionPlans (issue 36) and their forecasts: recurring work that knows when it is due. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { jsonWithEtag } from "../pkg/etag";
import { answerPage, defineRoute, IdParam, IfMatchHeader, json, jsonBody, withTotalCount } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { crossPlanForecast, ForecastEntrySchema, ForecastQuery, planForecast, PlanForecastQuery } from "./forecast";
import { listPlans, PlanListQuery } from "./list";
import { CreateInspectionPlanSchema, InspectionPlanSchema, UpdateInspectionPlanSchema } from "./schema";
import { createPlan, deletePlan, getPlan, updatePlan } from "./store";

const tags = ["Inspection plans"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;

export function plansApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/InspectionPlans",
      tags,
      summary: "List inspection plans (filters by asset, work template, status)",
      request: { query: PlanListQuery },
      responses: { 200: withTotalCount(json(z.array(InspectionPlanSchema), "One page of inspection plans.")) },
    }),
    async (c) => answerPage(c, await listPlans(c.env.DB, c.req.valid("query"))),
  );

  // Before /InspectionPlans/{id}: "Forecast" is not an id.
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/InspectionPlans/Forecast",
      tags,
      summary: "The due dates coming across active plans, filtered by asset or plant, with their reasons",
      request: { query: ForecastQuery },
      responses: { 200: json(z.array(ForecastEntrySchema), "The due dates up to `until`, earliest first.") },
    }),
    async (c) => c.json(await crossPlanForecast(c.env.DB, c.req.valid("query"), c.get("clock").now()), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/InspectionPlans/{id}",
        tags,
        summary: "Get an inspection plan, with each asset's last generated and completed items and next due date",
        request: { params: IdParam },
        responses: { 200: json(InspectionPlanSchema, "The plan, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getPlan(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/InspectionPlans/{id}/Forecast",
        tags,
        summary: "The plan's due dates coming, with their reasons (calendar, completion, condition)",
        request: { params: IdParam, query: PlanForecastQuery },
        responses: { 200: json(z.array(ForecastEntrySchema), "The due dates up to `until`, earliest first.") },
      },
    ),
    async (c) => c.json(await planForecast(c.env.DB, c.req.valid("param").id, c.req.valid("query").until, c.get("clock").now()), 200),
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/InspectionPlans",
      tags,
      summary: "Create an inspection plan",
      request: jsonBody(CreateInspectionPlanSchema),
      responses: { 201: json(InspectionPlanSchema, "The created plan.") },
    }),
    async (c) => {
      const created = await createPlan(writeContext(c), c.req.valid("json"));
      c.header("location", `/InspectionPlans/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/InspectionPlans",
        tags,
        summary: "Replace an inspection plan (the id is in the body); its next due dates are recomputed",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateInspectionPlanSchema) },
        responses: { 200: json(InspectionPlanSchema, "The updated plan.") },
      },
    ),
    async (c) => {
      const updated = await updatePlan(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "delete",
        path: "/InspectionPlans/{id}",
        tags,
        summary: "Delete an inspection plan (the work items it generated stay)",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deletePlan(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
