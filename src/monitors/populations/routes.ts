/**
 * The populations of models and monitors, and their items (/Models/{id}/Populations...,
 * /Monitors/{id}/Populations...): created, listed, read, renamed and deleted on their own, each change
 * a new version of the owner.
 */
import { z } from "@hono/zod-openapi";
import type { Database } from "../../db/statements";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { answerPage, defineRoute, IdParam, IfMatchHeader, json, jsonBody, withTotalCount } from "../../pkg/openapi";
import { getModelRow } from "../models/store";
import { getMonitorRow } from "../monitors/store";
import { read, write, PopulationParams, ItemParams, PopulationHeader } from "../route-params";
import { listPopulationRows, PopulationListQuery } from "./list";
import {
  CreatePopulationItemSchema,
  CreatePopulationSchema,
  PopulationItemSchema,
  PopulationSchema,
  UpdatePopulationSchema,
  type PopulationOwner,
} from "./schema";
import { toPopulations } from "./store";
import { addItem, addPopulation, getPopulation, removeItem, removePopulation, updatePopulation } from "./write";

export function populationsApp() {
  const app = newApp();
  for (const [resource, kind] of [
    ["Models", "model"],
    ["Monitors", "monitor"],
  ] as const satisfies readonly (readonly [string, PopulationOwner])[]) {
    const tags = [resource];
    const Owner = resource === "Models" ? "Model" : "Monitor";
    /** The owner's row: a 404 when it does not exist. */
    const owner = async (db: Database, id: string) => (kind === "model" ? getModelRow(db, id) : getMonitorRow(db, id));
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
    // A population as a resource of its own (issue 31): listed, read and renamed without its owner.
    app.openapi(
      defineRoute(
        { ...read, errors: [404] },
        {
          method: "get",
          path: `/${resource}/{id}/Populations`,
          tags,
          summary: `List the populations of a ${kind}, with their items`,
          description:
            `In the order the ${kind} shows them by default; searchText, assetTypes, ids, excludeIds, order, skip, take, ` +
            "includeTotal as every list.",
          request: { params: IdParam, query: PopulationListQuery },
          responses: { 200: withTotalCount(json(z.array(PopulationSchema), "One page of populations.")) },
        },
      ),
      async (c) => {
        const { id } = c.req.valid("param");
        await owner(c.env.DB, id);
        const { items, total } = await listPopulationRows(c.env.DB, kind, id, c.req.valid("query"));
        return answerPage(c, { items: await toPopulations(c.env.DB, items), total });
      },
    );
    app.openapi(
      defineRoute(
        { ...read, errors: [404] },
        {
          method: "get",
          path: `/${resource}/{id}/Populations/{populationId}`,
          tags,
          summary: `Get a population of a ${kind} with its items`,
          description: `Its ETag is the ${kind}'s version: a population is part of its ${kind}, so any change of either gives a new one.`,
          request: { params: PopulationParams },
          responses: { 200: json(PopulationSchema, "The population.") },
        },
      ),
      async (c) => {
        const { id, populationId } = c.req.valid("param");
        const found = await getPopulation(c.env.DB, kind, id, populationId);
        return jsonWithEtag(c, found.value, found.etag);
      },
    );
    app.openapi(
      defineRoute(
        { ...write, errors: [404, 412] },
        {
          method: "put",
          path: `/${resource}/{id}/Populations`,
          operationId: `update${Owner}Population`,
          tags,
          summary: "Replace a population's name and description",
          description:
            "The population as read, its `id` naming it: `name` and `description` change; `assetType` and `items` are " +
            `read-only (items have their own routes). A new version of the ${kind}, with its \`updated\` event.`,
          request: { params: IdParam, headers: IfMatchHeader, ...jsonBody(UpdatePopulationSchema) },
          responses: { 200: json(PopulationSchema, "The population.") },
        },
      ),
      async (c) => {
        const updated = await updatePopulation(writeContext(c), kind, c.req.valid("param").id, c.req.valid("json"));
        return jsonWithEtag(c, updated.value, updated.etag);
      },
    );
  }
  return app;
}
