/** What the data processing area's route files share: the permissions of reads and writes, parameters, the caller. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { PERMISSIONS } from "../pkg/permissions";

export const read = { permission: PERMISSIONS.dataProcessingRead, area: "dataProcessing" } as const;
export const write = { permission: PERMISSIONS.dataProcessingWrite, area: "dataProcessing" } as const;
export const ConfigurationIdParam = z.object({ configurationId: z.uuid().openapi({ param: { name: "configurationId", in: "path" } }) });

export function caller(c: Context<AppEnv>) {
  const principal = c.get("principal");
  return { id: principal.id, name: principal.name ?? null };
}
