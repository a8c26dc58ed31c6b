/** GET /Activities/{id}/Readings: what the inspection feed made of an activity's inputs that name a channel. */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { notFound } from "../../pkg/errors";
import { defineRoute, IdParam, json } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { FEED_STATUSES, feedRowsOf } from "./store";

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
      const db = c.env.DB;
      const [activity, names] = await db.batch<Record<string, unknown>>([
        db.prepare("SELECT based_on_id, based_on_revision FROM activities WHERE id = ?1").bind(id),
        db
          .prepare(
            `SELECT r.input_template_id, i.name, ch.channel_number FROM activity_input_readings r
               JOIN activity_inputs i ON i.activity_id = r.activity_id AND i.input_template_id = r.input_template_id
               LEFT JOIN channels ch ON ch.id = r.channel_id WHERE r.activity_id = ?1`,
          )
          .bind(id),
      ]);
      if (!activity?.results.length) throw notFound("Activity", id);
      const extra = new Map(
        (names?.results as { input_template_id: string; name: string; channel_number: number | null }[]).map((r) => [
          r.input_template_id,
          r,
        ]),
      );
      const rows = await feedRowsOf(db, id);
      return c.json(
        rows.map((r) => ({
          inputTemplateId: r.input_template_id,
          name: extra.get(r.input_template_id)?.name ?? r.input_template_id,
          status: r.status,
          channelId: r.channel_id,
          channelNumber: extra.get(r.input_template_id)?.channel_number ?? null,
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
