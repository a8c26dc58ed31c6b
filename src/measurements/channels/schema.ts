/**
 * Channels (issue 35): a place measured again and again on an asset, as the original Signals client
 * names it (`Channels`, each with a `channelNumber`). Its readings are the series' (../series.ts);
 * the channel shows the latest one, the analysis of a thickness channel and its controllers.
 */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { ControllerSchema, DEFAULT_MAX_SHELVE_MINUTES } from "../../monitors/monitors/schema";
import { ASSET_KINDS } from "../../assets/designations";
import { BUILT_IN, QUANTITIES, UNITS } from "../catalogue/schema";

/** The kinds of asset a channel is measured on (an organization owns plants; it is not measured). */
export const CHANNEL_ASSET_KINDS = ASSET_KINDS.filter((k) => k !== "organization");

const Reading = z.object({ timestamp: z.number().int().openapi({ description: "Milliseconds since 1970 (UTC)." }), value: z.number() });

export const ThicknessAnalysisSchema = z
  .object({
    method: z.literal("API 570/510"),
    status: z.enum(["oneReading", "noMeasurableLoss", "corroding", "belowMinimum", "noMinimumThickness"]).openapi({
      description:
        "oneReading: no rate yet; noMeasurableLoss: governing rate ≤ 0 (life unbounded); corroding: a remaining life; belowMinimum: the " +
        "last reading is at or below the minimum required thickness (life 0, due now); noMinimumThickness: rates only.",
    }),
    readingCount: z.number().int(),
    first: Reading,
    previous: Reading.nullable(),
    last: Reading,
    longTermRate: z.number().nullable().openapi({ description: "(first − last) / years between: loss per year, positive when thinning." }),
    shortTermRate: z.number().nullable().openapi({ description: "(previous − last) / years between." }),
    governingRate: z.number().nullable().openapi({ description: "The greater of the long- and short-term rates." }),
    governingBasis: z.enum(["longTerm", "shortTerm"]).nullable(),
    leastSquaresRate: z
      .number()
      .nullable()
      .openapi({ description: "Minus the slope of the least-squares line through every live reading." }),
    rateUnit: z.string().openapi({ example: "mm/year" }),
    nominalThickness: z.number().nullable(),
    minimumThickness: z.number().nullable(),
    remainingLifeYears: z
      .number()
      .nullable()
      .openapi({ description: "(last − minimum) / governing rate; never negative; null when unbounded or unknown." }),
    retirementDate: z.string().nullable().openapi({ description: "The last reading's date plus the remaining life." }),
    nextInspectionDate: z
      .string()
      .openapi({ description: "The last reading's date plus the earlier of half the remaining life and the maximum interval." }),
    maxIntervalYears: z.number(),
    notes: z.array(z.string()),
  })
  .openapi("ThicknessAnalysis");

const Link = z.object({ id: z.uuid(), name: z.string() });

export const ChannelSchema = z
  .object({
    id: z.uuid(),
    channelNumber: z.number().int().openapi({ description: "The original client's channel number: unique, given by the service." }),
    name: z.string(),
    description: z.string().nullable(),
    assetId: z.uuid(),
    asset: z.object({ id: z.uuid(), kind: z.enum(CHANNEL_ASSET_KINDS), name: z.string() }),
    plantId: z.uuid().nullable(),
    channelTypeId: z.uuid(),
    channelType: Link.extend({ quantity: z.enum(QUANTITIES) }),
    dataOriginId: z.uuid(),
    dataOrigin: Link,
    availabilityId: z.uuid(),
    availability: Link.extend({ acceptsReadings: z.boolean() }),
    unit: z.string(),
    nominalThickness: z.number().nullable(),
    minimumThickness: z.number().nullable(),
    maxIntervalYears: z.number().nullable(),
    controllers: z.array(ControllerSchema),
    maxShelveMinutes: z.number().int(),
    analysis: ThicknessAnalysisSchema.nullable().openapi({ description: "Thickness channels with readings: the latest analysis." }),
    nextInspectionAt: z.string().nullable(),
    alarmState: z.enum(["normal", "alarm"]),
    readingCount: z.number().int(),
    lastReadingAt: z.string().nullable(),
    lastValue: z.number().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Channel");
export type Channel = z.infer<typeof ChannelSchema>;

const positive = z.number().positive().max(10_000);

export const channelFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().trim().max(2000).nullable().default(null),
  assetId: z.uuid().openapi({ description: "The plant, main system, equipment or design object measured." }),
  channelTypeId: z.uuid().openapi({ description: `A channel type (GET /ChannelTypes); Thickness is ${BUILT_IN.thickness}.` }),
  dataOriginId: z
    .uuid()
    .default(BUILT_IN.manualInspection)
    .openapi({ description: "A data origin (GET /DataOrigins). Default: Manual inspection." }),
  availabilityId: z
    .uuid()
    .default(BUILT_IN.available)
    .openapi({ description: "A channel availability (GET /ChannelAvailabilities). Default: Available." }),
  unit: z
    .enum(UNITS as [string, ...string[]])
    .optional()
    .openapi({
      description: "One of the type's units (GET /ChannelTypes shows them). Default: the type's first. Fixed once readings exist.",
    }),
  nominalThickness: positive.nullable().default(null).openapi({ description: "Thickness channels only." }),
  minimumThickness: positive
    .nullable()
    .default(null)
    .openapi({ description: "Thickness channels only: the minimum required thickness the remaining life runs to; below the nominal." }),
  maxIntervalYears: z
    .number()
    .positive()
    .max(50)
    .nullable()
    .default(null)
    .openapi({ description: "The longest interval between inspections, in years. Null: 10 (the setting's default)." }),
  controllers: z
    .array(ControllerSchema)
    .max(50)
    .default([])
    .openapi({
      description:
        "Controllers in the monitor's shape, evaluated by the monitoring loop after every batch of readings and every void: they " +
        "enter and leave alarms (GET /Alarms?channelIds=) with the same actions (a deviation on the channel's asset, a work item " +
        "from a template, events and webhooks; setCriticality is a monitor's only). Variables they may name: value (the channel's " +
        "latest reading), min, max (of the batch's new readings) and, for thickness channels, longTermRate, shortTermRate, " +
        "governingRate, leastSquaresRate, remainingLifeYears. Alarms of a controller removed are left at the next batch.",
    }),
  maxShelveMinutes: z.number().int().min(1).max(10_080).default(DEFAULT_MAX_SHELVE_MINUTES),
};

export const CreateChannelSchema = z.object(channelFields).strict().openapi("CreateChannel");
export const UpdateChannelSchema = updateBodyOf(ChannelSchema, channelFields, "UpdateChannel", {
  channelNumber: "given by the service",
  analysis: "recomputed with every reading",
});
export type ChannelInput = z.infer<typeof CreateChannelSchema>;
