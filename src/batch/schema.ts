/**
 * `POST /$batch` (issue 37): many requests in one, each run through the app's own routes, in order,
 * with one result per operation (docs/decisions.md, "Batch").
 */
import { z } from "@hono/zod-openapi";
import { ProblemSchema } from "../pkg/openapi";

/** At most this many operations in one batch; more is a 413 naming the limit. */
export const MAX_OPERATIONS = 100;

/**
 * The answers' bodies a batch gives back, in all (UTF-8 bytes): an answer past what is left is given
 * without its body (`bodyOmitted: "tooLarge"`; read it on its own). It keeps the batch's answer, and
 * each operation's kept for Idempotency-Key retries, within what the IdempotencyStore holds per entry.
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** An operation's id: letters, digits, `_` and `-` (no `.`, which separates a reference's parts). */
export const OPERATION_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The headers an operation may carry (lower case). The caller's Authorization speaks for every
 * operation; the body is always JSON; the rest (Host, Content-Length, X-Session-Bookmark...) belong to
 * the batch itself.
 */
export const OPERATION_HEADERS = ["if-match", "if-none-match", "api-version", "idempotency-key", "audit-reason", "accept"] as const;

/** The headers of an operation's answer that a result carries. */
export const RESULT_HEADERS = ["etag", "location", "retry-after", "x-total-count", "content-type", "idempotent-replayed"] as const;

export const BATCH_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

const OperationSchema = z
  .object({
    id: z.string().regex(OPERATION_ID).openapi({
      description: "Unique in the batch; later operations refer to its answer as `{{id.body.field}}`.",
      example: "deviation",
    }),
    method: z.enum(BATCH_METHODS),
    path: z.string().min(1).max(2048).openapi({
      description: "The route's path and query, as in a single request (`/Deviations/{{deviation.body.id}}/WorkItems/{{work.body.id}}`).",
      example: "/Deviations",
    }),
    headers: z
      .record(z.string(), z.string().max(8192))
      .optional()
      .openapi({ description: `Headers of the operation; only ${OPERATION_HEADERS.join(", ")}.`, example: { "if-match": '"3"' } }),
    body: z.unknown().optional().openapi({ description: "The JSON body, as in a single request; may hold references." }),
  })
  .strict()
  .openapi("BatchOperation");

export const BatchRequestSchema = z
  .object({
    operations: z
      .array(OperationSchema)
      .min(1)
      .openapi({ description: `The operations, run in this order; at most ${MAX_OPERATIONS} (more is a 413).` }),
    onFailure: z
      .enum(["stop", "continue"])
      .default("stop")
      .openapi({
        description:
          "stop (the default): after an operation answers 400 or more, the rest are not run (each answers 424, ran false); " +
          "continue: every operation runs (one that refers to a failed one answers 424).",
      }),
  })
  .strict()
  .openapi("BatchRequest");

export type BatchRequest = z.infer<typeof BatchRequestSchema>;
export type BatchOperation = BatchRequest["operations"][number];

export const BatchResultSchema = z
  .object({
    id: z.string(),
    ran: z.boolean().openapi({ description: "false: the operation was not run (a stop, or a reference to an answer it could not use)." }),
    status: z.number().int(),
    headers: z.record(z.string(), z.string()).openapi({ description: `The answer's ${RESULT_HEADERS.join(", ")} (those it has).` }),
    body: z.union([z.unknown(), ProblemSchema]).openapi({
      description: "The answer's JSON (an RFC 9457 problem when status is 400 or more), its text, or null (no body, or one omitted).",
    }),
    bodyOmitted: z
      .enum(["tooLarge", "binary", "stream"])
      .optional()
      .openapi({
        description:
          `Why body is null though the answer had one: tooLarge (past the batch's ${MAX_ANSWER_BYTES} bytes of answers), ` +
          "binary (not JSON or text), stream (server-sent events). Read it with a request of its own.",
      }),
  })
  .openapi("BatchResult");

export const BatchAnswerSchema = z
  .object({
    results: z.array(BatchResultSchema).openapi({ description: "One per operation, in the order sent." }),
  })
  .openapi("BatchAnswer");

export type BatchResult = z.infer<typeof BatchResultSchema>;
