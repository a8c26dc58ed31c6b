/**
 * /Imports (issue 37): a CSV or XLSX file into many records, dry run first. POST answers a small dry
 * run at once (200) and queues everything else (202, the import resource); the import's progress is
 * read (GET), followed (server-sent events), its rows' problems downloaded as CSV to fix and send again.
 */
import { z } from "@hono/zod-openapi";
import Papa from "papaparse";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { formatEtag, jsonWithEtag } from "../pkg/etag";
import { ANY_AUTHENTICATED, defineRoute, IdParam, json, jsonBody } from "../pkg/openapi";
import type { Principal } from "../pkg/auth";
import { ApiError } from "../pkg/errors";
import { importKind } from "./kinds";
import { followSettings } from "../dataprocessing/follow";
import { nowMs } from "../platform/services";
import { CreateImportSchema, DryRunAnswerSchema, ImportProblemSchema, ImportSchema } from "./schema";
import { startImport } from "./service";
import { getImport, problemsPage, storedMapping, toImport, writtenPage, type ImportRow } from "./store";
import type { Bindings } from "../env";

const tags = ["Imports"];
// Reading and writing an import takes what reading and writing its kind of record takes (each kind's
// `permissions`, src/imports/kinds): the route needs a token, its handler checks the kind's permission.
const read = {
  permission: ANY_AUTHENTICATED,
  permissionNote: "reading an import needs the read permission of its kind (deviations: work_read, assets: assets_read...)",
  area: "workManagement",
} as const;
const write = {
  permission: ANY_AUTHENTICATED,
  permissionNote: "an import needs the write permission of its kind (deviations: work_write, assets: assets_write...)",
  area: "workManagement",
} as const;

/** The caller must hold the kind's permission (`read` or `write`), or the answer is 403. */
function requireKindPermission(principal: Principal, kindName: string, access: "read" | "write"): void {
  const permission = importKind(kindName).permissions[access];
  if (!principal.permissions.has(permission))
    throw new ApiError("Forbidden", `This operation requires the permission '${permission}' (an import of ${kindName}).`);
}

/** The import, when the caller may read its kind (else 403). */
async function readableImport(c: { env: Bindings; get(key: "principal"): Principal }, id: string): Promise<ImportRow> {
  const row = await getImport(c.env.DB, id);
  requireKindPermission(c.get("principal"), row.kind, "read");
  return row;
}

const PageQuery = z.object({
  afterRow: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .openapi({ description: "Rows after this row number (the last one of the page before)." }),
  take: z.coerce.number().int().min(1).max(1000).default(500),
  format: z
    .enum(["json", "csv"])
    .default("json")
    .openapi({ description: "csv: every problem row as the file had it, to fix and send again." }),
});

const RowsQuery = PageQuery.omit({ format: true });

/** The problem rows as CSV: the file's columns, then `import:row` and `import:problems`; cells escaped against formula injection. */
function problemsCsv(env: Bindings, row: ImportRow): ReadableStream<Uint8Array> {
  const headers = storedMapping(row).map(([header]) => header);
  const encoder = new TextEncoder();
  let after = 0;
  let first = true;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const page = await problemsPage(env.DB, row.id, after, 500);
      const data = page.map((p) => [
        ...headers.map((h) => p.cells[h] ?? ""),
        String(p.rowNumber),
        p.problems.map((x) => `${x.column ?? "row"}: ${x.message}`).join("; "),
      ]);
      const text = Papa.unparse(
        { fields: [...headers, "import:row", "import:problems"], data },
        { header: first, escapeFormulae: true, newline: "\r\n" },
      );
      if (text) controller.enqueue(encoder.encode(`${text}\r\n`));
      first = false;
      if (page.length < 500) controller.close();
      else after = page.at(-1)!.rowNumber;
    },
  });
}

const progressOf = (row: ImportRow) => ({
  status: row.status,
  total: row.total,
  processed: row.processed,
  created: row.created,
  skipped: row.skipped,
  failed: row.failed,
});

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });

/** Server-sent events of an import: `progress` on each change, `end` (the import) when it ends, `limit` when the stream's time is up. */
function followImport(env: Bindings, id: string, signal: AbortSignal): ReadableStream<Uint8Array> {
  const { maxMs, pollMs } = followSettings(env);
  const deadline = nowMs() + maxMs;
  const encoder = new TextEncoder();
  let last = "";
  let ended = false;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const send = (event: string, data: unknown) =>
        controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode("retry: 2000\n\n"));
      }
      for (;;) {
        if (ended || signal.aborted) return controller.close();
        const row = await getImport(env.DB, id);
        const progress = JSON.stringify(progressOf(row));
        if (row.status === "completed" || row.status === "failed") {
          if (progress !== last) send("progress", progressOf(row));
          send("end", toImport(row).value);
          ended = true;
          return;
        }
        if (nowMs() >= deadline) {
          send("limit", { reason: "The stream's time is up; reconnect to follow on.", seconds: Math.round(maxMs / 1000) });
          ended = true;
          return;
        }
        if (progress !== last) {
          last = progress;
          send("progress", progressOf(row));
          return;
        }
        await sleep(pollMs, signal);
      }
    },
  });
}

export function importsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: "/Imports",
        tags,
        summary: "Import a CSV or XLSX file: dry run, or commit (queued)",
        description:
          "The file: an uploaded file (fileId; any size the upload takes) or a small one in the body (content / contentBase64 with " +
          "fileName). kind says what each row becomes, by the rules of its single request: deviations (POST or, with an id column, " +
          "PUT /Deviations), workItems (POST /WorkItems from their templates, by id or name; PUT with an id), assets (POST or PUT " +
          "/Assets; a parent by id or name, rows in file order), propertyValues (the properties of existing deviations, by id or " +
          "referenceId), readings (POST /signals entries: channelNumber or channelId, timestamp, value). Columns are headed by the " +
          "record's JSON field names (nested with dots, e.g. risk.id), property columns by the definition's name (property:Name " +
          "when it collides with a field); an owner takes a user's id or name (GET /Users); an export of the kind's list imports " +
          "back, and a row that changes nothing writes nothing. dryRun: a file of up to 1,000 rows is answered at once (200) with " +
          "the proposed mapping, the counts and every problem; a larger one, and every commit, is queued (202, the import: follow " +
          "GET /Imports/{id}). Rows are written once per importKey and row key.",
        request: jsonBody(CreateImportSchema),
        responses: {
          200: json(DryRunAnswerSchema, "A dry run: nothing written."),
          202: json(ImportSchema, "The queued import."),
        },
      },
    ),
    async (c) => {
      const body = c.req.valid("json");
      requireKindPermission(c.get("principal"), body.kind, "write");
      const started = await startImport(c.env, c.get("principal"), writeContext(c), body);
      if ("dryRun" in started) return c.json(started.dryRun, 200);
      c.header("location", `/Imports/${started.queued.value.id}`);
      c.header("etag", formatEtag(started.queued.etag));
      return c.json(started.queued.value, 202);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Imports/{id}",
        tags,
        summary: "Get an import: its status and progress (processed of total, created, skipped, failed)",
        request: { params: IdParam },
        responses: { 200: json(ImportSchema, "The import, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
      },
    ),
    async (c) => {
      const found = toImport(await readableImport(c, c.req.valid("param").id));
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Imports/{id}/Events",
        tags,
        summary: "Follow an import's progress (server-sent events)",
        description:
          "text/event-stream: `progress` ({ status, total, processed, created, skipped, failed }) at each change, then `end` (the " +
          "import) when it completes or fails, or `limit` when the stream's time is up (JOB_OUTPUT_FOLLOW_SECONDS); reconnect to go on.",
        request: { params: IdParam },
        responses: {
          200: {
            description: "The stream.",
            content: {
              "text/event-stream": {
                schema: z.string().openapi({
                  example:
                    'event: progress\ndata: {"status":"running","total":1000,"processed":500,"created":498,"skipped":0,"failed":2}\n\n',
                }),
              },
            },
          },
        },
      },
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      await readableImport(c, id);
      return new Response(followImport(c.env, id, c.req.raw.signal), {
        status: 200,
        headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" },
      });
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Imports/{id}/Problems",
        tags,
        summary: "The problems of an import's rows (JSON pages, or the whole as CSV to fix and send again)",
        request: { params: IdParam, query: PageQuery },
        responses: {
          200: {
            description:
              "One page of problems (JSON), or every problem row as CSV: the file's columns, then import:row and import:problems.",
            content: {
              "application/json": { schema: z.array(ImportProblemSchema) },
              "text/csv": {
                schema: z
                  .string()
                  .openapi({ example: "description,status,import:row,import:problems\r\nLeak,bogus,2,status: 'bogus' is neither...\r\n" }),
              },
            },
          },
        },
      },
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const { afterRow, take, format } = c.req.valid("query");
      const row = await readableImport(c, id);
      if (format === "csv") {
        return new Response(problemsCsv(c.env, row), {
          status: 200,
          headers: {
            "content-type": "text/csv; charset=utf-8",
            "content-disposition": `attachment; filename="import-${row.id}-problems.csv"`,
          },
        });
      }
      const page = await problemsPage(c.env.DB, id, afterRow, take);
      return c.json(
        page.flatMap((p) => p.problems.map((problem) => ({ row: p.rowNumber, ...problem }))),
        200,
      );
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Imports/{id}/Rows",
        tags,
        summary: "The rows an import wrote: row number, row key and the record each became",
        request: { params: IdParam, query: RowsQuery },
        responses: {
          200: json(
            z.array(z.object({ row: z.number().int(), rowKey: z.string(), entityId: z.string() })).openapi("ImportRows"),
            "One page of rows.",
          ),
        },
      },
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const { afterRow, take } = c.req.valid("query");
      await readableImport(c, id);
      return c.json(await writtenPage(c.env.DB, id, afterRow, take), 200);
    },
  );

  return app;
}
