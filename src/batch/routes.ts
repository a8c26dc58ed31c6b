/** POST /$batch: many requests in one, each through its own route, with one result per operation. */
import { newApp } from "../app-factory";
import { ANY_AUTHENTICATED, defineRoute, json, jsonBody } from "../pkg/openapi";
import { runBatch, type Dispatch } from "./run";
import { BatchAnswerSchema, BatchRequestSchema, MAX_OPERATIONS } from "./schema";

export function batchApp(dispatch: Dispatch) {
  const app = newApp();
  app.openapi(
    defineRoute(
      { permission: ANY_AUTHENTICATED, permissionNote: "each operation needs its own route's permission", area: "platform" },
      {
        method: "post",
        path: "/$batch",
        tags: ["Batch"],
        summary: `Run up to ${MAX_OPERATIONS} requests in order, one result per operation; a later one may use an earlier one's answer`,
        description:
          "Each operation goes through its own route with the caller's token: the same permission, validation, If-Match, rate " +
          "limit and events as a single request. `{{id.body.field}}`, `{{id.headers.etag}}` and `{{id.status}}` in a path, a header " +
          "or a body string use an earlier operation's answer. onFailure stop (the default) leaves the operations after a failed one " +
          "not run (424, ran false). With an Idempotency-Key, a retry replays every result and repeats no write, also after a " +
          'batch cut off half-way. The batch is not atomic: each operation commits on its own (docs/decisions.md, "Batch").',
        request: jsonBody(BatchRequestSchema),
        responses: { 200: json(BatchAnswerSchema, "One result per operation, in the order sent.") },
      },
    ),
    async (c) => c.json({ results: await runBatch(c, dispatch, c.req.valid("json")) }, 200),
  );
  return app;
}
