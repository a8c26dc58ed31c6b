/** The populations of models and monitors, and their items (/Models/{id}/Populations..., /Monitors/{id}/Populations...). */
import type { Database } from "../db/statements";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { defineRoute, IdParam, json, jsonBody } from "../pkg/openapi";
import { addItem, addPopulation, getModelRow, getMonitorRow, removeItem, removePopulation } from "./store";
import { CreatePopulationItemSchema, CreatePopulationSchema, PopulationItemSchema, PopulationSchema } from "./schema";
import { write, PopulationParams, ItemParams, PopulationHeader } from "./route-params";

export function populationsApp() {
  const app = newApp();
  for (const [resource, kind] of [
    ["Models", "model"],
    ["Monitors", "monitor"],
  ] as const) {
    const tags = [resource === "Models" ? "Models" : "Monitors"];
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
  }
  return app;
}
