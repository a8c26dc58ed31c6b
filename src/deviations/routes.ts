/** /Deviations (spec 2.3, 4.2): create, read, replace, delete, list and unique values. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { exportable, exportList, exportQuery, pagesOf } from "../export";
import { definitionNames } from "../properties/definitions/catalog";
import { UniqueValuesResponseSchema } from "../pkg/query";
import { DeviationListQuery, DeviationUniqueValuesQuery, deviationUniqueValues, listDeviations } from "./list";
import { DEVIATION_RULE, getDeviation } from "./store";
import { CreateDeviationSchema, DeviationSchema, UpdateDeviationSchema } from "./schema";
import { createDeviation, deleteDeviation, updateDeviation } from "./write";

const tags = ["Deviations"];
const read = { permission: PERMISSIONS.workRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.workWrite, area: "workManagement" } as const;
const RULES =
  "typeId defaults to General. properties: only Deviation-rule definitions linked to the type. assetReference: a " +
  "main system, a design object and/or " +
  "equipment by id; equipment and a design object must belong to the given main system, and all to one plant (derived, read-only). " +
  "relationships are symmetric (the related deviation lists this one too); no self-links or duplicates.";

export function deviationsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Deviations",
      tags,
      summary: "List deviations",
      request: { query: exportQuery(DeviationListQuery) },
      responses: {
        200: exportable(withTotalCount(json(z.array(DeviationSchema), "One page of deviations."))),
      },
    }),
    async (c) => {
      const { format, ...query } = c.req.valid("query");
      if (format) {
        const pages = pagesOf(query, async (paged) => {
          const { items, next } = await listDeviations(c.env.DB, paged);
          return { items: items.map((d) => d.value), next };
        });
        const propertyNames = definitionNames(c.env.DB, DEVIATION_RULE);
        return (await exportList(c, format, { name: "deviations", item: DeviationSchema, pages, propertyNames })) as never;
      }
      const { items, total } = await listDeviations(c.env.DB, query);
      return answerPage(c, { items: items.map((d) => d.value), total });
    },
  );

  // Declared before /Deviations/{id}, which would otherwise take "UniqueValues" for a (malformed) id.
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Deviations/UniqueValues",
      tags,
      summary: "Unique values of deviation fields and properties",
      request: { query: DeviationUniqueValuesQuery },
      responses: { 200: json(UniqueValuesResponseSchema, "One entry per requested field.") },
    }),
    async (c) => c.json(await deviationUniqueValues(c.env.DB, c.req.valid("query")), 200),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Deviations/{id}",
        tags,
        summary: "Get a deviation",
        request: { params: IdParam },
        responses: { 200: json(DeviationSchema, "The deviation, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = await getDeviation(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(write, {
      method: "post",
      path: "/Deviations",
      tags,
      summary: "Create a deviation",
      description:
        `${RULES} referenceId, when absent, is DEV- and the first 8 hex digits of the id (upper-case); referenceIds are ` +
        `unique (case-insensitive, 409).`,
      request: { body: { required: true, content: { "application/json": { schema: CreateDeviationSchema } } } },
      responses: { 201: json(DeviationSchema, "The created deviation.") },
    }),
    async (c) => {
      const created = await createDeviation(writeContext(c), c.req.valid("json"));
      c.header("location", `/Deviations/${created.value.id}`);
      return jsonWithEtag(c, created.value, created.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 409, 412] },
      {
        method: "put",
        path: "/Deviations",
        tags,
        summary: "Replace a deviation (the id is in the body)",
        description:
          `${RULES} Absent referenceId, typeId and objectOwner keep their current values; relationships replace the list ` +
          `(and the reverse rows).`,
        request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateDeviationSchema } } } },
        responses: { 200: json(DeviationSchema, "The updated deviation.") },
      },
    ),
    async (c) => {
      const updated = await updateDeviation(writeContext(c), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "delete",
        path: "/Deviations/{id}",
        tags,
        summary: "Delete a deviation with its relationships, designations, property values and work item links",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteDeviation(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  return app;
}
