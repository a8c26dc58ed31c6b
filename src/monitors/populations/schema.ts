/**
 * API shapes of populations (spec 2.8): the assets a model is valid for, or a monitor scores, of one
 * asset type; each item references an asset and, on a monitor, carries its criticality and alarms.
 */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../../pkg/resource";
import { ActiveAlarmSchema } from "../alarms/active";

export const ASSET_TYPES = ["Plant", "MainSystem", "Organization", "Equipment"] as const;
export type AssetType = (typeof ASSET_TYPES)[number];
/** The asset catalogue's kind of each population asset type. */
export const ASSET_KIND_OF: Record<AssetType, string> = {
  Plant: "plant",
  MainSystem: "mainSystem",
  Organization: "organization",
  Equipment: "equipment",
};
/** Who holds a population: a model, or a monitor (which copied its model's when it was created). */
export type PopulationOwner = "model" | "monitor";

export const PopulationItemSchema = z
  .object({
    id: z.uuid(),
    populationId: z.uuid(),
    assetReference: z.object({ id: z.string(), name: z.string().nullable() }),
    criticality: z.number().nullable(),
    band: z
      .enum(["green", "yellow", "red"])
      .nullable()
      .openapi({ description: "0–59 green, 60–79 yellow, 80–100 red; null without a criticality." }),
    lastMonitorJobId: z.uuid().nullable(),
    alarms: z.array(ActiveAlarmSchema).openapi({
      description: "The controllers in alarm for this item now (a monitor's items; always empty for a model's). Empty: normal.",
    }),
  })
  .openapi("PopulationItem");
export const PopulationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    assetType: z.enum(ASSET_TYPES),
    items: z.array(PopulationItemSchema),
  })
  .openapi("Population");
export type Population = z.infer<typeof PopulationSchema>;

const populationFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(4000).nullable().default(null),
};
export const CreatePopulationSchema = z
  .object({ ...populationFields, assetType: z.enum(ASSET_TYPES) })
  .strict()
  .openapi("CreatePopulation");
/**
 * A whole population sent back as read: its name and description change; its asset type and items are
 * read-only (items have their own routes).
 */
export const UpdatePopulationSchema = updateBodyOf(PopulationSchema, populationFields, "UpdatePopulation", {
  assetType: "its items are of this type",
  items: "add and remove items with their own routes",
});
export const CreatePopulationItemSchema = z
  .object({ assetReference: z.object({ id: z.string().trim().min(1).max(200), name: z.string().max(200).nullable().optional() }).strict() })
  .strict()
  .openapi("CreatePopulationItem");

export function bandOf(criticality: number | null): "green" | "yellow" | "red" | null {
  if (criticality === null) return null;
  return criticality >= 80 ? "red" : criticality >= 60 ? "yellow" : "green";
}
