/**
 * Alarms (issue 33): GET /Alarms (the board), GET /Alarms/{id} with its history, GET /Alarms/{id}/History,
 * and the actions people take on an alarm, each a POST on an action segment of it (as POST
 * /Jobs/{id}/Cancellation): Acknowledgement, Assignment, Unassignment, Comments, Shelving, Unshelving.
 * Reading takes monitors_read; acting takes alarms_write. Every action answers the alarm with its new
 * ETag and honours If-Match (412) and Idempotency-Key.
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../../app-factory";
import { writeContext } from "../../pkg/db";
import { jsonWithEtag } from "../../pkg/etag";
import { answerPage, defineRoute, IdParam, IfMatchHeader, json, jsonBody, notModified, withTotalCount } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { exportable, exportList, exportQuery, pagesOf } from "../../export";
import { read } from "../route-params";
import { AlarmHistoryListQuery, alarmItems, AlarmListQuery, listAlarmEvents, listAlarms } from "./board";
import {
  AcknowledgeBodySchema,
  AlarmEventSchema,
  AlarmSchema,
  AlarmWithHistorySchema,
  ALARM_STATUSES,
  AssignBodySchema,
  CommentBodySchema,
  ShelveBodySchema,
  UnassignBodySchema,
  UnshelveBodySchema,
} from "./schema";
import { SEVERITIES } from "./severity";
import { acknowledgeAlarm, assignAlarm, commentAlarm, getAlarm, readRecord, shelveAlarm, unassignAlarm, unshelveAlarm } from "./workflow";

const act = { permission: PERMISSIONS.alarmsWrite, area: "monitoring" } as const;
const tags = ["Alarms"];

/** An optional JSON body (the action needs none; a comment may come with it). */
const optionalBody = <T extends z.ZodType>(schema: T) => ({ body: { required: false, content: { "application/json": { schema } } } });

const perStatus = z.object(Object.fromEntries(ALARM_STATUSES.map((s) => [s, z.number().int()])) as Record<string, z.ZodNumber>);
const CountsSchema = z
  .object({
    total: z.number().int(),
    byStatus: perStatus,
    bySeverity: z.object(
      Object.fromEntries(SEVERITIES.map((s) => [s, perStatus.extend({ total: z.number().int() })])) as Record<string, z.ZodObject>,
    ),
    shelved: z.number().int(),
  })
  .openapi("AlarmCounts", {
    description: "Over every alarm the filters select (not only the page): per state, per severity with its states, and shelved.",
  });

const BoardSchema = z
  .object({ items: z.array(AlarmSchema), counts: CountsSchema })
  .openapi("AlarmBoard", { description: "A page of alarms and the counts a board shows beside it." });

const answered = "The alarm as it is now, with its latest history and new ETag.";

export function alarmsApp() {
  const app = newApp();
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Alarms",
      tags,
      summary: "The alarm board: every alarm of every monitor, with counts per severity and state",
      description:
        "Filters by state (statuses, active, acknowledged), severity, assignee, monitor, asset, plant, shelving and time entered; " +
        "ordered by severity (critical first) then newest; skip, take (up to 1,000), includeTotal. Unlike other lists the answer " +
        "is an object: the page (`items`) and the counts over every alarm the filters select (`counts`), read together.",
      request: { query: exportQuery(AlarmListQuery) },
      responses: { 200: exportable(withTotalCount(json(BoardSchema, "The page and the counts."))) },
    }),
    async (c) => {
      const { format, ...query } = c.req.valid("query");
      if (format) {
        // The file holds the alarms (the items), page after page; the counts are the JSON answer's.
        const pages = pagesOf(query, (paged) => alarmItems(c.env.DB, paged));
        return (await exportList(c, format, { name: "alarms", item: AlarmSchema, pages })) as never;
      }
      const { items, total, counts } = await listAlarms(c.env.DB, query);
      if (total !== undefined) c.header("x-total-count", String(total));
      return c.json({ items, counts }, 200);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Alarms/{id}",
        tags,
        summary: "An alarm with its history (entered, acknowledged, shelved, comments, left...)",
        request: { params: IdParam },
        responses: {
          200: json(AlarmWithHistorySchema, "The alarm, its latest 100 history entries oldest first, and its ETag."),
          ...notModified,
        },
      },
    ),
    async (c) => {
      const { value, etag } = await getAlarm(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, value, etag);
    },
  );
  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Alarms/{id}/History",
        tags,
        summary: "An alarm's whole history, paged (its comments are its thread: actions=commented)",
        request: { params: IdParam, query: AlarmHistoryListQuery },
        responses: { 200: withTotalCount(json(z.array(AlarmEventSchema), "Oldest first by default.")) },
      },
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      await readRecord(c.env.DB, id);
      return answerPage(c, await listAlarmEvents(c.env.DB, id, c.req.valid("query")));
    },
  );

  const action = <T extends z.ZodType>(
    [path, operationId]: [string, string],
    summary: string,
    description: string,
    body: { body: { required: boolean; content: { "application/json": { schema: T } } } },
    errors: (404 | 409 | 412)[] = [404, 412],
  ) =>
    defineRoute(
      { ...act, errors },
      {
        method: "post",
        path: `/Alarms/{id}/${path}`,
        operationId,
        tags,
        summary,
        description,
        request: { params: IdParam, headers: IfMatchHeader, ...body },
        responses: { 200: json(AlarmWithHistorySchema, answered) },
      },
    );

  app.openapi(
    action(
      ["Acknowledgement", "acknowledgeAlarm"],
      "Acknowledge an alarm (active or cleared)",
      "Acknowledgement is separate from the alarm's state: an active alarm stays active, a cleared one leaves the board. Its " +
        "escalation stops. Acknowledging an acknowledged alarm changes nothing and answers it as it is.",
      optionalBody(AcknowledgeBodySchema),
    ),
    async (c) => {
      const body = c.req.valid("json") as z.infer<typeof AcknowledgeBodySchema> | undefined;
      const { value, etag } = await acknowledgeAlarm(writeContext(c), c.req.valid("param").id, body?.comment ?? null);
      return jsonWithEtag(c, value, etag);
    },
  );
  app.openapi(
    action(
      ["Assignment", "assignAlarm"],
      "Assign an alarm to a user",
      "The user must be in the directory (GET /Users; a 400 naming body.userId otherwise). Assigning it to its assignee changes nothing.",
      jsonBody(AssignBodySchema),
    ),
    async (c) => {
      const { userId, comment } = c.req.valid("json");
      const { value, etag } = await assignAlarm(writeContext(c), c.req.valid("param").id, userId, comment ?? null);
      return jsonWithEtag(c, value, etag);
    },
  );
  app.openapi(
    action(
      ["Unassignment", "unassignAlarm"],
      "Unassign an alarm",
      "Unassigning an alarm nobody is assigned changes nothing.",
      optionalBody(UnassignBodySchema),
    ),
    async (c) => {
      const body = c.req.valid("json") as z.infer<typeof UnassignBodySchema> | undefined;
      const { value, etag } = await unassignAlarm(writeContext(c), c.req.valid("param").id, body?.comment ?? null);
      return jsonWithEtag(c, value, etag);
    },
  );
  app.openapi(
    action(
      ["Comments", "commentOnAlarm"],
      "Comment on an alarm",
      "Adds `text` (1 to 10,000 characters) to the alarm's thread, its history, with who and when.",
      jsonBody(CommentBodySchema),
    ),
    async (c) => {
      const { value, etag } = await commentAlarm(writeContext(c), c.req.valid("param").id, c.req.valid("json").text);
      return jsonWithEtag(c, value, etag);
    },
  );
  app.openapi(
    action(
      ["Shelving", "shelveAlarm"],
      "Shelve an alarm: for a time, or until it clears (one-shot)",
      "Never beyond the monitor's (or channel's) maxShelveMinutes (a 400 naming body.until or body.durationMinutes), never until a " +
        "time past " +
        "(400). While shelved its escalations are held, and while a timed shelving lasts an alarm its controller enters again for " +
        "the item is held (no actions, no events) until the shelving ends. The minute cron ends it at its time. One-shot on a " +
        "cleared alarm, or a timed shelving of a cleared alarm that a newer one of its controller and item follows: 409.",
      jsonBody(ShelveBodySchema),
      [404, 409, 412],
    ),
    async (c) => {
      const { value, etag } = await shelveAlarm(writeContext(c), c.req.valid("param").id, c.req.valid("json"));
      return jsonWithEtag(c, value, etag);
    },
  );
  app.openapi(
    action(
      ["Unshelving", "unshelveAlarm"],
      "Unshelve an alarm",
      "Ends its shelving, and that of the alarms its controller entered again for the item meanwhile; those still active are " +
        "released (their actions run and their `entered` event is written). Unshelving an alarm that is not shelved changes nothing.",
      optionalBody(UnshelveBodySchema),
    ),
    async (c) => {
      const body = c.req.valid("json") as z.infer<typeof UnshelveBodySchema> | undefined;
      const { value, etag } = await unshelveAlarm(writeContext(c), c.req.valid("param").id, body?.comment ?? null);
      return jsonWithEtag(c, value, etag);
    },
  );
  return app;
}
