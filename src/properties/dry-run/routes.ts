import { newApp } from "../../app-factory";
import { defineRoute } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { DryRunRequestSchema, DryRunResultSchema } from "./schema";
import { dryRun } from "./service";

export function propertyDryRunApp() {
  const app = newApp();

  app.openapi(
    defineRoute(
      // It changes nothing, so reading property definitions is enough.
      { permission: PERMISSIONS.propertiesRead, area: "properties" },
      {
        method: "post",
        path: "/PropertyDefinitions/DryRun",
        tags: ["Property definitions"],
        summary: "Check linked values or evaluate a value expression, without saving anything",
        description:
          "Answers 200 with valid = false and every problem (as errors[] of the 400 a write would answer, and its code) when the values " +
          "or the expression fail, so editors see the whole picture. Expressions run in the same sandbox as writes (time " +
          "and memory limits). " +
          "A malformed request, or an entity type that does not exist, is a 400.",
        request: { body: { required: true, content: { "application/json": { schema: DryRunRequestSchema } } } },
        responses: { 200: { description: "The outcome.", content: { "application/json": { schema: DryRunResultSchema } } } },
      },
    ),
    async (c) => c.json(await dryRun(c.env.DB, c.req.valid("json")), 200),
  );

  return app;
}
