/** What the monitoring area's route files share: the permissions of reads and writes, and path and header parameters. */
import { z } from "@hono/zod-openapi";
import { PERMISSIONS } from "../pkg/permissions";

export const read = { permission: PERMISSIONS.monitorsRead, area: "monitoring" } as const;
export const write = { permission: PERMISSIONS.monitorsWrite, area: "monitoring" } as const;
export const NameVersion = z.object({
  name: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: "name", in: "path" } }),
  version: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: "version", in: "path" } }),
});
export const NameParam = NameVersion.pick({ name: true });
export const PopulationParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
  populationId: z.uuid().openapi({ param: { name: "populationId", in: "path" } }),
});
export const ItemParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" } }),
  itemId: z.uuid().openapi({ param: { name: "itemId", in: "path" } }),
});
export const PopulationHeader = z.object({
  populationid: z.uuid().openapi({
    param: { name: "populationid", in: "header" },
    description: "populationId: the population the item is added to (the spec's shape; header names are case-insensitive).",
  }),
});
