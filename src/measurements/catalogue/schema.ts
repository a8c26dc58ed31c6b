/**
 * The catalogues of measurements, as the original Signals client names them: ChannelTypes,
 * DataOrigins and ChannelAvailabilities. Each is a small resource (name, description) with what
 * sets it apart: a channel type's quantity (which fixes its channels' units and whether the thickness
 * analysis runs), an availability's `acceptsReadings`.
 */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";

/** What a channel type measures. */
export const QUANTITIES = ["thickness", "pressure", "temperature", "vibration", "flow", "level", "other"] as const;
export type Quantity = (typeof QUANTITIES)[number];

/**
 * The units channels take, per quantity (docs/decisions.md, "Measurements"): the units inspection uses
 * and the common instrument ones. `other` accepts every unit listed here. No conversion: a reading's
 * unit, when sent, must be its channel's.
 */
export const UNITS_BY_QUANTITY: Readonly<Record<Exclude<Quantity, "other">, readonly string[]>> = {
  thickness: ["mm", "in"],
  pressure: ["bar", "psi", "kPa", "MPa"],
  temperature: ["degC", "degF", "K"],
  vibration: ["mm/s", "in/s", "g"],
  flow: ["m3/h", "l/min"],
  level: ["m", "%"],
};
export const UNITS = [...new Set([...Object.values(UNITS_BY_QUANTITY).flat(), "count", "ppm", "V", "A", "Hz", "rpm"])];

export function unitsOf(quantity: Quantity): readonly string[] {
  return quantity === "other" ? UNITS : UNITS_BY_QUANTITY[quantity];
}

export const CATALOGUE_KINDS = ["channelType", "dataOrigin", "channelAvailability"] as const;
export type CatalogueKind = (typeof CATALOGUE_KINDS)[number];

/** The built-in rows' ids (inserted by migrations/0018_measurements.sql). */
export const BUILT_IN = {
  thickness: "00000000-0000-4000-8000-0000000c0101",
  pressure: "00000000-0000-4000-8000-0000000c0102",
  temperature: "00000000-0000-4000-8000-0000000c0103",
  vibration: "00000000-0000-4000-8000-0000000c0104",
  manualInspection: "00000000-0000-4000-8000-0000000c0201",
  sensor: "00000000-0000-4000-8000-0000000c0202",
  model: "00000000-0000-4000-8000-0000000c0203",
  available: "00000000-0000-4000-8000-0000000c0301",
  outOfService: "00000000-0000-4000-8000-0000000c0302",
} as const;

const common = {
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  builtIn: z.boolean().openapi({ description: "Inserted by the service: it can be renamed but not deleted." }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
};

export const ChannelTypeSchema = z
  .object({
    ...common,
    quantity: z
      .enum(QUANTITIES)
      .openapi({ description: "What its channels measure: fixes their units; thickness runs the corrosion analysis." }),
    units: z.array(z.string()).openapi({ description: "The units its channels may have." }),
  })
  .openapi("ChannelType");
export const DataOriginSchema = z.object(common).openapi("DataOrigin");
export const ChannelAvailabilitySchema = z
  .object({
    ...common,
    acceptsReadings: z.boolean().openapi({ description: "Whether a channel with this availability accepts readings." }),
  })
  .openapi("ChannelAvailability");

const name = z.string().trim().min(1).max(200).openapi({ description: "Unique within its catalogue (case-insensitive)." });
const description = z.string().trim().max(2000).nullable().default(null);

export const channelTypeFields = { name, description, quantity: z.enum(QUANTITIES).default("other") };
export const dataOriginFields = { name, description };
export const availabilityFields = { name, description, acceptsReadings: z.boolean().default(true) };

export const CreateChannelTypeSchema = z.object(channelTypeFields).strict().openapi("CreateChannelType");
export const UpdateChannelTypeSchema = updateBodyOf(ChannelTypeSchema, channelTypeFields, "UpdateChannelType");
export const CreateDataOriginSchema = z.object(dataOriginFields).strict().openapi("CreateDataOrigin");
export const UpdateDataOriginSchema = updateBodyOf(DataOriginSchema, dataOriginFields, "UpdateDataOrigin");
export const CreateChannelAvailabilitySchema = z.object(availabilityFields).strict().openapi("CreateChannelAvailability");
export const UpdateChannelAvailabilitySchema = updateBodyOf(ChannelAvailabilitySchema, availabilityFields, "UpdateChannelAvailability");

export interface CatalogueInput {
  name: string;
  description: string | null;
  quantity?: Quantity;
  acceptsReadings?: boolean;
}
