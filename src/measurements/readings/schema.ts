/**
 * Signals as the original client posts them (`POST /signals` one object, `POST /signals/bulk` an
 * array) and reads them (`GET /signals?ChannelNumbers=..&TimestampFrom=<ms>`). The client shows no
 * body; the shape here is the channel (its `channelNumber`, or `channelId`), the `timestamp` in
 * milliseconds (or an ISO 8601 date-time) and the `value`, with an optional `unit` that must be the
 * channel's (docs/decisions.md, "Measurements").
 */
import { z } from "@hono/zod-openapi";
import { GRANULARITIES } from "../buckets";
import { ThicknessAnalysisSchema } from "../channels/schema";

/** Readings per request at most: beyond, 413. */
export const MAX_READINGS_PER_REQUEST = 10_000;
/** A reading may be this far ahead of the service's clock (a device's clock running fast), no further. */
export const FUTURE_TOLERANCE_MS = 24 * 60 * 60 * 1000;
/** The earliest timestamp accepted: 1900-01-01. */
export const EARLIEST_MS = Date.UTC(1900, 0, 1);

export const SignalSchema = z
  .object({
    channelNumber: z.number().int().optional().openapi({ description: "The channel's number (or give channelId)." }),
    channelId: z.uuid().optional().openapi({ description: "The channel's id (or give channelNumber)." }),
    timestamp: z
      .union([z.number(), z.string()])
      .openapi({ description: "Milliseconds since 1970 UTC (an integer), or an ISO 8601 date-time; from 1900 to a day ahead." }),
    value: z.number().openapi({ description: "A finite number in the channel's unit." }),
    unit: z.string().optional().openapi({ description: "When given, the channel's unit (no conversion)." }),
  })
  .openapi("Signal");

/** The bulk body: checked entry by entry after its length (413 beyond the limit), so every problem names its entry's index. */
export const SignalsBulkBody = z.array(z.unknown()).openapi({
  description: `Signals (each a Signal), at most ${MAX_READINGS_PER_REQUEST} per request; more is a 413.`,
});

export const RecordedSchema = z
  .object({
    batchId: z.uuid().openapi({ description: "The `readings` event of this request carries it as its entity id." }),
    accepted: z.number().int().openapi({ description: "Readings stored." }),
    duplicates: z.number().int().openapi({ description: "Readings already stored with the same timestamp and value (ignored)." }),
    channels: z.array(
      z.object({
        channelId: z.uuid(),
        channelNumber: z.number().int(),
        accepted: z.number().int(),
        duplicates: z.number().int(),
        readingCount: z.number().int(),
        analysis: ThicknessAnalysisSchema.nullable(),
      }),
    ),
  })
  .openapi("RecordedSignals");

export const SignalReadSchema = z
  .object({ channelNumber: z.number().int(), channelId: z.uuid(), timestamp: z.number().int(), value: z.number() })
  .openapi("SignalReading");

const oneOrMany = z.union([z.string(), z.array(z.string())]).optional();
export const SignalsQuery = z.object({
  ChannelNumbers: oneOrMany.openapi({ description: "Channel numbers: repeated (`ChannelNumbers=1&ChannelNumbers=2`) or comma-separated." }),
  TimestampFrom: z.string().optional().openapi({ description: "Milliseconds since 1970: readings at or after it. Default: all." }),
  TimestampTo: z.string().optional().openapi({ description: "Milliseconds since 1970: readings before it. Default: now and a day." }),
  Take: z.string().optional().openapi({ description: "At most this many readings per channel (oldest first; default and limit 10000)." }),
});

export const RawReadingSchema = z
  .object({
    timestamp: z.number().int(),
    value: z.number(),
    source: z
      .string()
      .nullable()
      .openapi({ description: "`activity:{activityId}:{inputTemplateId}` for a reading an inspection entered." }),
    voided: z.object({ at: z.number().int(), reason: z.string(), by: z.string().nullable() }).optional(),
  })
  .openapi("Reading");

const instant = z.string().optional();
export const RawQuery = z.object({
  from: instant.openapi({ description: "ISO 8601 date-time or milliseconds: readings at or after it. Default: all." }),
  to: instant.openapi({ description: "ISO 8601 date-time or milliseconds: readings before it. Default: now and a day." }),
  take: z.coerce
    .number()
    .int()
    .min(1)
    .max(50_000)
    .default(10_000)
    .openapi({ description: "At most this many (oldest first; up to 50000)." }),
  includeVoided: z.enum(["true", "false"]).optional().openapi({ description: "Also the voided readings, with their reason." }),
});

export const RawAnswerSchema = z
  .object({
    channelId: z.uuid(),
    unit: z.string(),
    readings: z.array(RawReadingSchema),
    nextFrom: z.number().int().nullable().openapi({ description: "More readings follow: ask again with from = this." }),
  })
  .openapi("Readings");

export const AggregateQuery = z.object({
  from: instant.openapi({ description: "ISO 8601 date-time or milliseconds. Default: a year before `to`." }),
  to: instant.openapi({ description: "ISO 8601 date-time or milliseconds. Default: now and a day." }),
  granularity: z.enum(GRANULARITIES).default("day"),
  timeZone: z
    .string()
    .default("UTC")
    .openapi({ description: "An IANA time zone: buckets start at its local midnights (hours, weeks from Monday, months)." }),
});

export const AggregatesSchema = z
  .object({
    channelId: z.uuid(),
    unit: z.string(),
    granularity: z.enum(GRANULARITIES),
    timeZone: z.string(),
    source: z.string().openapi({ description: "What was read: days or hours (rollups) or raw (minutes, part-hour zones)." }),
    buckets: z.array(
      z.object({
        start: z.string(),
        label: z.string(),
        count: z.number().int(),
        min: z.number(),
        max: z.number(),
        avg: z.number(),
        first: z.number(),
        last: z.number(),
      }),
    ),
  })
  .openapi("ReadingAggregates");

export const VoidBodySchema = z
  .object({ reason: z.string().trim().min(1).max(500).openapi({ description: "Why the reading is wrong (kept with it)." }) })
  .strict()
  .openapi("VoidReading");

export const AnalysisAnswerSchema = z
  .object({
    channelId: z.uuid(),
    analysis: ThicknessAnalysisSchema.nullable(),
    history: z.array(z.object({ at: z.string(), cause: z.string(), analysis: ThicknessAnalysisSchema.nullable() })),
  })
  .openapi("ChannelAnalysis");
