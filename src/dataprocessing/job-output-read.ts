/** GET /Jobs/{id}/Output: its query, headers and answer (the container's output, whole or followed). */
import { z } from "@hono/zod-openapi";

export const OutputQuery = z.object({
  follow: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      description:
        "`true`: a stream of server-sent events (text/event-stream) until the job ends or the stream's time is up; " +
        "otherwise one JSON read.",
    }),
  after: z
    .string()
    .max(400)
    .optional()
    .openapi({
      description:
        "A cursor from an earlier read (its `cursor`, or an event's id): only what came after it. Left out: from the " +
        "start of the output kept.",
    }),
});
export const OutputHeaders = z.object({
  "last-event-id": z
    .string()
    .max(400)
    .optional()
    .openapi({ description: "What EventSource sends when it reconnects: the id of the last event it got (a cursor, as `after`)." }),
});
export const OutputReadSchema = z
  .object({
    jobId: z.uuid(),
    status: z.string(),
    text: z.string().openapi({ description: "The output after the cursor (all of it kept, without one)." }),
    gap: z.boolean().openapi({
      description: "True when output was written between the cursor and now that is no longer kept (more than the 64 KiB tail).",
    }),
    cursor: z.string().openapi({ description: "Send back as `after` (or Last-Event-ID) to read on from here." }),
    live: z.boolean().openapi({
      description: "True when read from the container host now; false: the job's stored output (not running, or the host did not answer).",
    }),
    ended: z.boolean(),
    end: z
      .object({
        status: z.string(),
        errorMessage: z.string().nullable(),
        cancelledBy: z.object({ id: z.string().nullable(), name: z.string().nullable() }).nullable(),
        cancelledAt: z.string().nullable(),
        endedAt: z.string().nullable(),
      })
      .optional()
      .openapi({ description: "How the job ended, once it has." }),
  })
  .openapi("JobOutputRead");
