/**
 * The audit trail's API (issue 34): GET /AuditTrail (filtered, paged, newest first), GET
 * /AuditTrail/Export (the same filter streamed as NDJSON or CSV, for auditors), GET
 * /AuditTrail/Verification (the hash chain checked over a range) and GET /{Resource}/{id}/History for
 * every kind with an id, generated from the event catalogue. Alarms keep GET /Alarms/{id}/History (the
 * alarm's own workflow history, issue 33); their audit history is GET /Alarms/{id}/AuditHistory.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { newApp } from "../app-factory";
import type { AppEnv } from "../env";
import type { EntityKind } from "../events/kinds";
import { ENTITY_KINDS, EVENT_ACTIONS } from "../events/kinds";
import { ApiError } from "../pkg/errors";
import { defineRoute, json, withTotalCount } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { exportable, exportList, exportQuery, inPages } from "../export";
import { listQueryShape } from "../pkg/query";
import type { ApiArea } from "../pkg/versioning";
import { EVENT_KINDS } from "../subscriptions/catalogue";
import { auditFilter, auditPage, exportRows, hasHistory, MAX_RANGE_DAYS, readableKinds, timeRange, verifyRange } from "./read";
import { entityExists } from "./store";
import { AuditEntrySchema, csvLine, CSV_HEADER, toAuditEntry } from "./view";

const { skip, take, includeTotal } = listQueryShape;

const csv = (what: string) =>
  z
    .string()
    .optional()
    .openapi({ description: `Comma-separated ${what}.` });

const range = {
  from: z.string().optional().openapi({ description: "Records at or after this instant (ISO 8601).", example: "2026-11-01T00:00:00Z" }),
  to: z
    .string()
    .optional()
    .openapi({
      description: `Records before this instant (ISO 8601): later than from, and at most ${MAX_RANGE_DAYS} days after it.`,
      example: "2026-12-01T00:00:00Z",
    }),
};

const filters = {
  entityKinds: csv(`entity kinds (default: every kind the caller may read): ${ENTITY_KINDS.join(", ")}`),
  entityIds: csv("entity ids"),
  actorIds: csv("actor ids (a user's id, or a machine client's)"),
  actions: csv(`actions: ${EVENT_ACTIONS.join(", ")}`),
  requestId: z.string().max(128).optional().openapi({ description: "The records of one request (its X-Request-Id)." }),
  ...range,
};

const TrailQuery = z.object({ ...filters, skip, take, includeTotal });
const ExportQuery = z.object({
  ...filters,
  format: z
    .enum(["ndjson", "csv"])
    .default("ndjson")
    .openapi({ description: "ndjson (one entry per line) or csv (RFC 4180, objects as JSON)." }),
});
const HistoryQuery = z.object({ actions: filters.actions, ...range, skip, take, includeTotal });

const KIND_AREAS: Record<EntityKind, ApiArea> = {
  activity: "workManagement",
  activityTemplate: "workManagement",
  activityType: "workManagement",
  alarm: "monitoring",
  asset: "workManagement",
  category: "properties",
  channel: "signals",
  channelAnalysis: "signals",
  channelAvailability: "signals",
  channelType: "signals",
  classification: "properties",
  dataOrigin: "signals",
  dataType: "upload",
  deviation: "workManagement",
  deviationType: "workManagement",
  entityType: "properties",
  file: "upload",
  fileReference: "workManagement",
  import: "workManagement",
  inspectionPlan: "workManagement",
  job: "dataProcessing",
  jobOutput: "dataProcessing",
  jobConfiguration: "dataProcessing",
  media: "media",
  mediaReference: "workManagement",
  model: "monitoring",
  modelDefinition: "monitoring",
  monitor: "monitoring",
  monitorJob: "monitoring",
  outputType: "dataProcessing",
  propertyDefinition: "properties",
  readings: "signals",
  searchIndex: "search",
  searchQuery: "search",
  subscription: "platform",
  userStatus: "properties",
  workItem: "workManagement",
  workTemplate: "workManagement",
};

/** Each kind with an id of its own and where its history is read. */
export const HISTORY_PATHS: readonly { kind: EntityKind; path: string }[] = ENTITY_KINDS.flatMap((kind) => {
  const path = EVENT_KINDS[kind].path;
  if (path === null) return [];
  return [{ kind, path: `${path}/${kind === "alarm" ? "AuditHistory" : "History"}` }];
});

const paging = (query: { skip?: number; take?: number; includeTotal?: "true" | "false" }) => ({
  skip: query.skip ?? 0,
  take: query.take ?? 100,
  includeTotal: query.includeTotal === "true",
});

const answer = (c: Context<AppEnv>, page: { items: Parameters<typeof toAuditEntry>[0][]; total: number | undefined }) => {
  if (page.total !== undefined) c.header("x-total-count", String(page.total));
  return c.json(page.items.map(toAuditEntry), 200);
};

async function* auditEntries(rows: AsyncIterable<Parameters<typeof toAuditEntry>[0]>) {
  for await (const row of rows) yield toAuditEntry(row);
}

const entries = (description: string) => withTotalCount(json(z.array(AuditEntrySchema), description));

export function auditApp() {
  const app = newApp();
  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.auditRead, area: "platform" },
      {
        method: "get",
        path: "/AuditTrail",
        tags: ["Audit trail"],
        summary: "The audit trail: every change, with who, when, why, before and after; newest first",
        description:
          "Filters are AND-ed, the values of one filter OR-ed. Only kinds the caller may read are shown (default: all of them; " +
          "naming one it may not read is a 403). Records older than the retention in D1 are read from the archive, transparently.",
        request: { query: exportQuery(TrailQuery) },
        responses: { 200: exportable(entries("One page of audit entries, newest first.")) },
      },
    ),
    async (c) => {
      const { format, ...query } = c.req.valid("query");
      const filter = auditFilter(c.get("principal"), query);
      if (format) {
        // The same rows GET /AuditTrail/Export streams (D1, then the archive), as the list's columns.
        const pages = inPages(auditEntries(exportRows(c.env, filter)));
        return (await exportList(c, format, { name: "audit-trail", item: AuditEntrySchema, pages })) as never;
      }
      return answer(c, await auditPage(c.env, filter, paging(query)));
    },
  );

  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.auditRead, area: "platform" },
      {
        method: "get",
        path: "/AuditTrail/Export",
        tags: ["Audit trail"],
        summary: "Every audit entry of a filter, streamed as NDJSON or CSV, newest first",
        description: "For auditors: the filters of GET /AuditTrail without paging, streamed as they are read (D1, then the archive).",
        request: { query: ExportQuery },
        responses: {
          200: {
            description: "The entries, one per line.",
            content: { "application/x-ndjson": { schema: AuditEntrySchema }, "text/csv": { schema: z.string() } },
          },
        },
      },
    ),
    async (c) => {
      const query = c.req.valid("query");
      const filter = auditFilter(c.get("principal"), query);
      const encoder = new TextEncoder();
      const rows = exportRows(c.env, filter);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (query.format === "csv") controller.enqueue(encoder.encode(CSV_HEADER));
        },
        async pull(controller) {
          const next = await rows.next();
          if (next.done) return controller.close();
          const entry = toAuditEntry(next.value);
          controller.enqueue(encoder.encode(query.format === "csv" ? csvLine(entry) : `${JSON.stringify(entry)}\n`));
        },
      });
      const type = query.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson";
      return new Response(body, {
        status: 200,
        headers: { "content-type": type, "content-disposition": `attachment; filename="audit-trail.${query.format}"` },
      }) as never;
    },
  );

  app.openapi(
    defineRoute(
      { permission: PERMISSIONS.auditRead, area: "platform" },
      {
        method: "get",
        path: "/AuditTrail/Verification",
        tags: ["Audit trail"],
        summary: "Checks the audit trail's hash chain over a range and names the first broken link",
        description:
          "Recomputes the hash of every sealed record whose time lies in the range (and every record between them, archived ones " +
          "included) and checks each link to the record before it. Records are sealed by the minute cron: the newest ones may be " +
          "counted as `unsealed`, not checked yet.",
        request: { query: z.object(range) },
        responses: {
          200: json(
            z
              .object({
                from: z.string().nullable(),
                to: z.string().nullable(),
                valid: z.boolean(),
                checked: z.number().int(),
                unsealed: z.number().int(),
                firstSequence: z.number().int().nullable(),
                lastSequence: z.number().int().nullable(),
                broken: z
                  .object({ sequence: z.number().int(), occurredAt: z.string().nullable(), problem: z.string() })
                  .nullable()
                  .openapi({ description: "The first record whose hash or link does not hold, or null." }),
              })
              .openapi("AuditVerification"),
            "What was checked, and the first broken link (if any).",
          ),
        },
      },
    ),
    async (c) => {
      const { from, to } = c.req.valid("query");
      const checked = timeRange(from, to);
      return c.json(await verifyRange(c.env, checked.from, checked.to), 200);
    },
  );

  for (const { kind, path } of HISTORY_PATHS) {
    app.openapi(
      defineRoute(
        { permission: PERMISSIONS.auditRead, area: KIND_AREAS[kind], errors: [404] },
        {
          method: "get",
          path,
          tags: ["Audit trail"],
          summary: `The audit history of one ${kind}: every change, with who, when, why and what changed; newest first`,
          description:
            `Reading it also takes the permission that reads the ${kind} (\`${EVENT_KINDS[kind].permission}\`). A deleted ` +
            `${kind} keeps its history; an id that never existed is a 404.`,
          request: {
            params: z.object({
              id: z
                .string()
                .min(1)
                .max(200)
                .openapi({ param: { name: "id", in: "path" } }),
            }),
            query: HistoryQuery,
          },
          responses: { 200: entries("One page of the entity's audit entries, newest first.") },
        },
      ),
      async (c) => {
        const principal = c.get("principal");
        if (!readableKinds(principal).includes(kind))
          throw new ApiError("Forbidden", `Reading the history of a ${kind} needs the permission '${EVENT_KINDS[kind].permission}'.`);
        const raw = c.req.param("id")!;
        const id = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw) ? raw.toLowerCase() : raw;
        const query = c.req.valid("query");
        const filter = auditFilter(principal, { ...query, entityKinds: kind, entityIds: id });
        const page = await auditPage(c.env, filter, paging(query));
        if (page.items.length === 0 && !(await hasHistory(c.env.DB, kind, id)) && !(await entityExists(c.env.DB, kind, id)))
          throw new ApiError("NotFound", `No ${kind} ${id} has ever existed.`);
        return answer(c, page);
      },
    );
  }
  return app;
}
