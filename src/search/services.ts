/**
 * The read-only clients a custom index library gets (spec 2.10: "a service provider that returns only
 * the read-only clients"). Each is the platform's own list, with the same query parameters as its
 * GET route, and `get(id)`. They act with the index's grant: the read permissions its owner held when
 * the library was uploaded, and, for files, the owner's view (their own files and published ones).
 */
import type { Database } from "../db/statements";
import type { z } from "@hono/zod-openapi";
import type { Bindings } from "../env";
import { ApiError } from "../pkg/errors";
import { PERMISSIONS } from "../pkg/permissions";
import { platform } from "../platform/services";
import { DeviationListQuery, listDeviations } from "../deviations/list";
import { listWorkItems, WorkItemListQuery } from "../work-items/list";
import { ActivityListQuery, listActivities } from "../work-items/activities/list";
import { ActivityTemplateListQuery, listActivityTemplates } from "../templates/activity/list";
import { listWorkTemplates, WorkTemplateListQuery } from "../templates/work/list";
import { AssetListQuery, listAssets } from "../assets/list";
import { listFiles } from "../upload/files/list";
import { ListFilesQuery } from "../upload/files/schema";
import { listModelRows, ModelListQuery } from "../monitors/models/list";
import { toModels } from "../monitors/models/store";
import { listMonitorRows, MonitorListQuery } from "../monitors/monitors/list";
import { toMonitors } from "../monitors/monitors/store";
import { userMark } from "./access";
import type { IndexRow } from "./store";

interface Client {
  permission: string;
  query: z.ZodType;
  list(db: Database, query: never, owner: { id: string; name: string }): Promise<unknown[]>;
}

const CLIENTS: Record<string, Client> = {
  deviations: {
    permission: PERMISSIONS.workRead,
    query: DeviationListQuery,
    list: async (db, q) => (await listDeviations(db, q)).items.map((d) => d.value),
  },
  workItems: {
    permission: PERMISSIONS.workRead,
    query: WorkItemListQuery,
    list: async (db, q) => (await listWorkItems(db, q, platform().clock.now())).items,
  },
  activities: { permission: PERMISSIONS.workRead, query: ActivityListQuery, list: async (db, q) => (await listActivities(db, q)).items },
  activityTemplates: {
    permission: PERMISSIONS.workRead,
    query: ActivityTemplateListQuery,
    list: async (db, q) => (await listActivityTemplates(db, q)).items,
  },
  workTemplates: {
    permission: PERMISSIONS.workRead,
    query: WorkTemplateListQuery,
    list: async (db, q) => (await listWorkTemplates(db, q)).items,
  },
  assets: { permission: PERMISSIONS.assetsRead, query: AssetListQuery, list: async (db, q) => (await listAssets(db, q)).items },
  files: { permission: PERMISSIONS.filesRead, query: ListFilesQuery, list: async (db, q, owner) => (await listFiles(db, owner, q)).items },
  monitors: {
    permission: PERMISSIONS.monitorsRead,
    query: MonitorListQuery,
    list: async (db, q) => toMonitors(db, (await listMonitorRows(db, q)).items),
  },
  models: {
    permission: PERMISSIONS.monitorsRead,
    query: ModelListQuery,
    list: async (db, q) => toModels(db, (await listModelRows(db, q)).items),
  },
};

export const CLIENT_NAMES = Object.keys(CLIENTS);

/**
 * What a caller must hold to see what a client returned: its read permission and, for the files
 * client (which acts as the index's owner), being that owner (src/search/access.ts).
 */
export function clientReadPermissions(service: string, ownerId: string): string[] {
  const client = Object.hasOwn(CLIENTS, service) ? CLIENTS[service] : undefined;
  if (!client) return [];
  return service === "files" ? [client.permission, userMark(ownerId)] : [client.permission];
}

/** One client call of a library: `{ value }`, or `{ error }` in words the library (and its log) sees. */
export async function callClient(
  env: Bindings,
  row: IndexRow,
  grant: ReadonlySet<string>,
  service: string,
  method: string,
  args: unknown,
): Promise<{ value: unknown } | { error: string }> {
  const client = Object.hasOwn(CLIENTS, service) ? CLIENTS[service] : undefined;
  if (!client) return { error: `no client '${service}'; the clients are ${CLIENT_NAMES.join(", ")}` };
  if (!grant.has(client.permission))
    return { error: `the ${service} client needs the permission '${client.permission}', which the index's library was not uploaded with` };
  let raw: Record<string, string>;
  if (method === "get") {
    if (typeof args !== "string" || args === "") return { error: `${service}.get(id) takes an id` };
    raw = { ids: args };
  } else if (method === "list") {
    if (args === null || typeof args !== "object" || Array.isArray(args))
      return { error: `${service}.list(query) takes an object of query parameters` };
    // Query parameters are text, as in a URL; numbers and booleans are written as text, arrays comma-separated.
    raw = Object.fromEntries(
      Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : String(v)]),
    );
  } else return { error: `${service}.${method} does not exist; a client has list(query) and get(id)` };
  const parsed = client.query.safeParse(raw);
  if (!parsed.success)
    return { error: `${service}.${method}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ")}` };
  try {
    const items = await client.list(env.DB, parsed.data as never, { id: row.owner_id, name: row.owner_name ?? row.owner_id });
    return { value: method === "get" ? (items[0] ?? null) : items };
  } catch (error) {
    if (error instanceof ApiError) return { error: `${service}.${method}: ${error.message}` };
    throw error;
  }
}
