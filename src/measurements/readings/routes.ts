/**
 * Signals as the original client sends them (`POST /signals`, `POST /signals/bulk`, `GET /signals`
 * by ChannelNumbers from TimestampFrom in ms) and a channel's series: raw readings, aggregates by a
 * granularity in a time zone, a void with its reason, the analysis with its history.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { newApp } from "../../app-factory";
import type { AppEnv } from "../../env";
import { writeContext } from "../../pkg/db";
import { ApiError, invalid } from "../../pkg/errors";
import { defineRoute, IdParam, json, jsonBody } from "../../pkg/openapi";
import { PERMISSIONS } from "../../pkg/permissions";
import { isTimeZone } from "../buckets";
import { channelsByKeys, getChannelRecord } from "../channels/store";
import { seriesOf } from "../series";
import { parseTimestamp, recordSignals } from "./record";
import {
  AggregateQuery,
  AggregatesSchema,
  AnalysisAnswerSchema,
  MAX_READINGS_PER_REQUEST,
  RawAnswerSchema,
  RawQuery,
  RecordedSchema,
  SignalReadSchema,
  SignalSchema,
  SignalsBulkBody,
  SignalsQuery,
  VoidBodySchema,
  FUTURE_TOLERANCE_MS,
} from "./schema";
import { voidReading } from "./void";
import { chartSvg, MAX_POINTS } from "../chart";
import type { ThicknessAnalysis } from "../analysis";

const tags = ["Measurements"];
const read = { permission: PERMISSIONS.measurementsRead, area: "signals" } as const;
const write = { permission: PERMISSIONS.readingsWrite, area: "signals" } as const;
/** 10,000 readings naming their channel by id are about 1.3 MB of JSON. */
const BULK_BODY_BYTES = 4 * 1024 * 1024;
const YEAR = 365.25 * 24 * 3_600_000;

function instantOf(raw: string | undefined, field: string, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const ms = parseTimestamp(raw);
  if (ms === undefined) throw invalid(`query.${field}`, "format", `${field}: '${raw}' is neither milliseconds nor an ISO 8601 date-time.`);
  return ms;
}

const recordContext = (c: Context<AppEnv>) => {
  const ctx = writeContext(c);
  return { ...ctx, db: c.env.DB };
};

export function readingsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(
      { ...write, errors: [409] },
      {
        method: "post",
        path: "/signals",
        operationId: "recordSignal",
        tags,
        summary: "Record one reading (a signal) on a channel",
        description:
          "Idempotent per channel and timestamp: the same value again is a duplicate (ignored), another value a 409 (void the stored one " +
          "first). A problem names its field and rule; nothing of a refused request is stored.",
        request: jsonBody(SignalSchema),
        responses: { 201: json(RecordedSchema, "What was stored.") },
      },
    ),
    async (c) => c.json(await recordSignals(c.env, recordContext(c), c.req.valid("json"), false), 201),
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [409], bodyLimit: BULK_BODY_BYTES },
      {
        method: "post",
        path: "/signals/bulk",
        operationId: "recordSignals",
        tags,
        summary: `Record up to ${MAX_READINGS_PER_REQUEST} readings on any channels in one request`,
        description:
          `At most ${MAX_READINGS_PER_REQUEST} readings (413 beyond). Every problem names its entry's index (\`body.{i}.{field}\`) and ` +
          "rule; a refused request stores nothing. One `readings` event for the whole request.",
        request: jsonBody(SignalsBulkBody),
        responses: { 201: json(RecordedSchema, "What was stored.") },
      },
    ),
    async (c) => c.json(await recordSignals(c.env, recordContext(c), c.req.valid("json"), true), 201),
  );

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/signals",
      operationId: "listSignals",
      tags,
      summary: "Readings of channels by their numbers, from a timestamp in milliseconds (as the original client reads them)",
      request: { query: SignalsQuery },
      responses: { 200: json(z.array(SignalReadSchema), "The readings, per channel oldest first (a bare array).") },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const raw = q.ChannelNumbers === undefined ? [] : Array.isArray(q.ChannelNumbers) ? q.ChannelNumbers : [q.ChannelNumbers];
      const numbers = raw
        .flatMap((v) => v.split(","))
        .map((v) => v.trim())
        .filter(Boolean);
      for (const n of numbers) if (!/^\d+$/.test(n)) throw invalid("query.ChannelNumbers", "format", `'${n}' is not a channel number.`);
      const from = instantOf(q.TimestampFrom, "TimestampFrom", 0);
      const to = instantOf(q.TimestampTo, "TimestampTo", c.get("clock").now().getTime() + FUTURE_TOLERANCE_MS);
      const take = q.Take === undefined ? 10_000 : Number(q.Take);
      if (!Number.isInteger(take) || take < 1 || take > 10_000) throw invalid("query.Take", "range", "Take is an integer from 1 to 10000.");
      const channels = await channelsByKeys(c.env.DB, [], numbers.map(Number));
      const out: z.infer<typeof SignalReadSchema>[] = [];
      const pages = await Promise.all(channels.map((ch) => seriesOf(c.env, ch.row.id).raw(from, to, take, false)));
      channels.forEach((ch, i) => {
        for (const r of pages[i]!.readings)
          out.push({ channelNumber: ch.row.channelNumber, channelId: ch.row.id, timestamp: r.timestamp, value: r.value });
      });
      return c.json(out, 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Channels/{id}/Readings",
        tags,
        summary: "A channel's raw readings over a range (paged by nextFrom), voided ones on request",
        request: { params: IdParam, query: RawQuery },
        responses: { 200: json(RawAnswerSchema, "The readings, oldest first.") },
      },
    ),
    async (c) => {
      const q = c.req.valid("query");
      const channel = await getChannelRecord(c.env.DB, c.req.valid("param").id);
      const from = instantOf(q.from, "from", 0);
      const to = instantOf(q.to, "to", c.get("clock").now().getTime() + FUTURE_TOLERANCE_MS);
      const page = await seriesOf(c.env, channel.row.id).raw(from, to, q.take, q.includeVoided === "true");
      const live = page.readings.filter((r) => r.voided === undefined);
      const nextFrom = page.more ? live[live.length - 1]!.timestamp + 1 : null;
      return c.json({ channelId: channel.row.id, unit: channel.row.unit, readings: page.readings, nextFrom }, 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Channels/{id}/Aggregates",
        tags,
        summary: "A channel's readings aggregated (min, max, avg, count, first, last) by minute, hour, day, week or month in a time zone",
        description:
          "Days and longer read the series' rollups, never the raw readings (except zones a part-hour from UTC). Minutes span at " +
          "most 31 days.",
        request: { params: IdParam, query: AggregateQuery },
        responses: { 200: json(AggregatesSchema, "The buckets that hold readings, oldest first.") },
      },
    ),
    async (c) => {
      const q = c.req.valid("query");
      if (!isTimeZone(q.timeZone)) throw invalid("query.timeZone", "timeZone", `'${q.timeZone}' is not an IANA time zone.`);
      const channel = await getChannelRecord(c.env.DB, c.req.valid("param").id);
      const to = instantOf(q.to, "to", c.get("clock").now().getTime() + FUTURE_TOLERANCE_MS);
      const from = instantOf(q.from, "from", to - YEAR);
      if (from >= to) throw invalid("query.from", "range", "from must be before to.");
      if (q.granularity === "minute" && to - from > 31 * 24 * 3_600_000)
        throw invalid("query.granularity", "range", "Minutes span at most 31 days; ask for hours or longer over a longer range.");
      const result = await seriesOf(c.env, channel.row.id).aggregate(from, to, q.granularity, q.timeZone, "auto");
      return c.json(
        { channelId: channel.row.id, unit: channel.row.unit, granularity: q.granularity, timeZone: q.timeZone, ...result },
        200,
      );
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: "/Channels/{id}/Readings/{timestamp}/Void",
        operationId: "voidChannelReading",
        tags,
        summary: "Void a reading with a reason (a correction never edits one); the analysis is recomputed without it",
        request: {
          params: IdParam.extend({
            timestamp: z.string().openapi({ description: "The reading's timestamp in milliseconds (or ISO 8601)." }),
          }),
          ...jsonBody(VoidBodySchema),
        },
        responses: {
          200: json(
            z.object({
              voided: z.object({ timestamp: z.number(), value: z.number(), source: z.string().nullable(), reason: z.string() }),
              readingCount: z.number().int(),
              analysis: z.unknown(),
            }),
            "The voided reading and the channel's analysis after it.",
          ),
        },
      },
    ),
    async (c) => {
      const { id, timestamp } = c.req.valid("param");
      const ts = parseTimestamp(timestamp);
      if (ts === undefined) throw invalid("path.timestamp", "format", `'${timestamp}' is neither milliseconds nor an ISO 8601 date-time.`);
      const channel = await getChannelRecord(c.env.DB, id);
      const done = await voidReading(c.env, recordContext(c), channel, { ts }, c.req.valid("json").reason);
      if (!done) throw new ApiError("NotFound", "No such reading.");
      return c.json(done, 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Channels/{id}/Analysis",
        tags,
        summary: "A thickness channel's analysis (API 570/510) with its history, newest first",
        request: { params: IdParam },
        responses: {
          200: json(AnalysisAnswerSchema, "The current analysis (null without readings or for other channels) and the history."),
        },
      },
    ),
    async (c) => {
      const channel = await getChannelRecord(c.env.DB, c.req.valid("param").id);
      const history = await seriesOf(c.env, channel.row.id).analyses(100);
      return c.json(
        {
          channelId: channel.row.id,
          analysis: channel.row.analysis === null ? null : JSON.parse(channel.row.analysis),
          history: history.map((h) => ({ at: new Date(h.at).toISOString(), cause: h.cause, analysis: h.analysis })),
        },
        200,
      );
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Channels/{id}/Chart",
        tags,
        summary: "An SVG of a channel's readings over a range, with the minimum required thickness and the projected retirement",
        description: `At most ${MAX_POINTS} raw readings are drawn; a longer range is drawn from its daily averages.`,
        request: { params: IdParam, query: RawQuery.pick({ from: true, to: true }) },
        responses: { 200: { description: "The chart.", content: { "image/svg+xml": { schema: z.string() } } } },
      },
    ),
    async (c) => {
      const q = c.req.valid("query");
      const channel = await getChannelRecord(c.env.DB, c.req.valid("param").id);
      const from = instantOf(q.from, "from", 0);
      const to = instantOf(q.to, "to", c.get("clock").now().getTime() + FUTURE_TOLERANCE_MS);
      const series = seriesOf(c.env, channel.row.id);
      const page = await series.raw(from, to, MAX_POINTS, false);
      let points = page.readings.map((r) => ({ ts: r.timestamp, value: r.value }));
      if (page.more) {
        const days = await series.aggregate(from, to, "day", "UTC", "auto");
        points = days.buckets.map((b) => ({ ts: Date.parse(b.start), value: b.avg }));
      }
      const analysis = channel.row.analysis === null ? null : (JSON.parse(channel.row.analysis) as ThicknessAnalysis);
      const svg = chartSvg(`Channel ${channel.row.channelNumber}: ${channel.row.name}`, channel.row.unit, points, analysis);
      return c.body(svg, 200, { "content-type": "image/svg+xml; charset=utf-8" });
    },
  );

  return app;
}
