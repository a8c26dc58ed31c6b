/**
 * Deviation <-> work item links from both sides: /Deviations/{id}/WorkItems[/{workItemId}] and the
 * mirror /WorkItems/{id}/Deviations[/{deviationId}]. Link answers 204 (also when already linked),
 * unlink 204 or 404 when not linked; 404 when either side does not exist.
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { defineRoute, type RouteOptions } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { DeviationSchema } from "./schema";
import { deviationsOfWorkItem, LinkedWorkItemSchema, linkWorkItem, unlinkWorkItem, workItemsOfDeviation } from "./work-item-links";

const read: RouteOptions = { permission: PERMISSIONS.workRead, area: "workManagement", errors: [404] };
const write: RouteOptions = { permission: PERMISSIONS.workWrite, area: "workManagement", errors: [404] };
const uuidParam = (name: string) => z.uuid().openapi({ param: { name, in: "path" } });
const DeviationSide = z.object({ id: uuidParam("id"), workItemId: uuidParam("workItemId") });
const WorkItemSide = z.object({ id: uuidParam("id"), deviationId: uuidParam("deviationId") });
const linked = { 204: { description: "Linked (also when the link already existed)." } };
const unlinked = { 204: { description: "Unlinked." } };

export function deviationWorkItemLinksApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Deviations/{id}/WorkItems",
      tags: ["Deviations"],
      summary: "The work items linked to a deviation",
      request: { params: z.object({ id: uuidParam("id") }) },
      responses: {
        200: { description: "Linked work items, by id.", content: { "application/json": { schema: z.array(LinkedWorkItemSchema) } } },
      },
    }),
    async (c) => c.json(await workItemsOfDeviation(c.env.DB, c.req.valid("param").id), 200),
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Deviations/{id}/WorkItems/{workItemId}",
      tags: ["Deviations"],
      summary: "Link a work item",
      request: { params: DeviationSide },
      responses: linked,
    }),
    async (c) => {
      const { id, workItemId } = c.req.valid("param");
      await linkWorkItem(writeContext(c), id, workItemId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "delete",
      path: "/Deviations/{id}/WorkItems/{workItemId}",
      tags: ["Deviations"],
      summary: "Unlink a work item",
      request: { params: DeviationSide },
      responses: unlinked,
    }),
    async (c) => {
      const { id, workItemId } = c.req.valid("param");
      await unlinkWorkItem(writeContext(c), id, workItemId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/WorkItems/{id}/Deviations",
      tags: ["Work items"],
      summary: "The deviations linked to a work item",
      request: { params: z.object({ id: uuidParam("id") }) },
      responses: {
        200: { description: "Linked deviations, by referenceId.", content: { "application/json": { schema: z.array(DeviationSchema) } } },
      },
    }),
    async (c) =>
      c.json(
        (await deviationsOfWorkItem(c.env.DB, c.req.valid("param").id)).map((d) => d.value),
        200,
      ),
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/WorkItems/{id}/Deviations/{deviationId}",
      tags: ["Work items"],
      summary: "Link a deviation",
      request: { params: WorkItemSide },
      responses: linked,
    }),
    async (c) => {
      const { id, deviationId } = c.req.valid("param");
      await linkWorkItem(writeContext(c), deviationId, id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "delete",
      path: "/WorkItems/{id}/Deviations/{deviationId}",
      tags: ["Work items"],
      summary: "Unlink a deviation",
      request: { params: WorkItemSide },
      responses: unlinked,
    }),
    async (c) => {
      const { id, deviationId } = c.req.valid("param");
      await unlinkWorkItem(writeContext(c), deviationId, id);
      return c.body(null, 204);
    },
  );

  return app;
}
