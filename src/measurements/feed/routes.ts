/** GET /Activities/{id}/Readings: what the inspection feed made of an activity's inputs that name a channel. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { notFound } from "../../pkg/errors";
import { defineRoute, IdParam, json } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { FEED_STATUSES, fedInputsOf } from "./store";

const FedInputSchema = z
  .object({
    inputTemplateId: z.string(),
    name: z.string(),
    status: z.enum(FEED_STATUSES).openapi({
      description:
        "recorded: the value is the reading at `timestamp` of the channel; cleared: no value, no reading; unresolved: the value is " +
        "kept on the activity but no series holds it (`problem` says why).",
    }),
    channelId: z.uuid().nullable(),
    channelNumber: z.number().int().nullable(),
    timestamp: z.number().int().nullable().openapi({ description: "Milliseconds since 1970 (UTC)." }),
    value: z.number().nullable(),
    problem: z.string().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("FedInput");

export function feedApp() {
  const app = newApp();
  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.workRead, area: "workManagement", errors: [404] },
      {
        method: "get",
        path: "/Activities/{id}/Readings",
        tags: ["Activities"],
        summary: "What the inspection feed made of the activity's inputs that name a channel",
        description:
          "One entry per input whose template names a channel or a channel type (docs/decisions.md, 'Inspection feeds the " +
          "series'), once the feed ran after the activity's last change (about a second; it runs from the events queue).",
        request: { params: IdParam },
        responses: { 200: json(z.array(FedInputSchema), "Its fed inputs, by input template id.") },
      },
    ),
    async (c) => {
      const id = c.req.valid("param").id.toLowerCase();
      const rows = await fedInputsOf(c.env.DB, id);
      if (!rows) throw notFound("Activity", id);
      return c.json(
        rows.map((r) => ({
          inputTemplateId: r.input_template_id,
          name: r.name ?? r.input_template_id,
          status: r.status,
          channelId: r.channel_id,
          channelNumber: r.channel_number,
          timestamp: r.timestamp,
          value: r.value,
          problem: r.problem,
          updatedAt: r.updated_at,
        })),
        200,
      );
    },
  );
  return app;
}
