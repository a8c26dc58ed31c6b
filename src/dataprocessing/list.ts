/** Lists of job configs and jobs on the shared query engine. */
import type { Database } from "../db/statements";
import { z } from "@hono/zod-openapi";
import { ApiError } from "../pkg/errors";
import {
  compileListQuery,
  defineList,
  enumCondition,
  inList,
  listQueryShape,
  noProperties,
  parseDateValue,
  parseUuidList,
  runListQuery,
  splitCsv,
  type Condition,
} from "../pkg/query";
import { CONFIG_JOIN, CONFIG_SELECT, type ConfigRow } from "./configs";
import type { JobRow } from "./jobs";
import type { JobOutputRow } from "./outputs";
import { JOB_STATUSES } from "./schema";

const configList = defineList({
  table: "job_configurations",
  alias: "c",
  entityKind: "jobConfiguration",
  idColumn: "id",
  select: CONFIG_SELECT,
  joins: [CONFIG_JOIN],
  fields: {
    name: { column: "lower(c.name)", indexed: true },
    jobDefinition: { column: "c.image_name || ':' || c.image_tag" },
    "objectOwner.id": { column: "c.object_owner_id", displayColumn: "c.object_owner_name" },
    createdAt: { column: "c.created_at", type: "datetime" },
    updatedAt: { column: "c.updated_at", type: "datetime" },
  },
  searchColumns: ["c.name", "c.description"],
  defaultOrder: "name asc",
});

const { ids, excludeIds, searchText, order, skip, take, includeTotal } = listQueryShape;

export const ConfigListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the name or description." }),
  objectOwnerIds: z.string().optional().openapi({ description: "Only configs of these owners (comma-separated user ids)." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over name, jobDefinition, objectOwner.id, createdAt, updatedAt. Default: name asc.",
  }),
  skip,
  take,
  includeTotal,
});

export async function listConfigRows(
  db: Database,
  query: z.infer<typeof ConfigListQuery>,
): Promise<{ items: ConfigRow[]; total: number | undefined }> {
  const conditions: Condition[] = [];
  const owners = splitCsv(query.objectOwnerIds);
  if (owners.length > 0) conditions.push(inList("c.object_owner_id", owners));
  return runListQuery<ConfigRow>(db, await compileListQuery(configList, query, noProperties, conditions));
}

const jobList = defineList({
  table: "jobs",
  alias: "j",
  entityKind: "job",
  idColumn: "id",
  fields: {
    status: { column: "j.status" },
    configurationId: { column: "j.configuration_id" },
    chainId: { column: "j.chain_id" },
    chainPosition: { column: "j.chain_position", type: "number" },
    startedAt: { column: "j.started_at", type: "datetime" },
    endedAt: { column: "j.ended_at", type: "datetime" },
    createdAt: { column: "j.created_at", type: "datetime", indexed: true },
    updatedAt: { column: "j.updated_at", type: "datetime" },
  },
  searchColumns: ["j.error_message"],
  defaultOrder: "createdAt desc, chainPosition asc",
});

export const JobListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the error message." }),
  statuses: z
    .string()
    .optional()
    .openapi({ description: `Only jobs in these statuses (comma-separated: ${JOB_STATUSES.join(", ")}).`, example: "InProgress,Failed" }),
  configurationIds: z.string().optional().openapi({ description: "Only jobs of these configs (comma-separated ids)." }),
  configurationId: z
    .string()
    .optional()
    .openapi({ description: "One config id, as the original client sends it (same as configurationIds)." }),
  chainIds: z.string().optional().openapi({ description: "Only jobs of these chains (comma-separated ids)." }),
  createdFrom: z
    .string()
    .optional()
    .openapi({ description: "Only jobs created at or after this instant (ISO 8601).", example: "2026-11-01T00:00:00Z" }),
  createdTo: z.string().optional().openapi({ description: "Only jobs created before this instant (ISO 8601)." }),
  order: order.openapi({
    description:
      "Comma-separated `{field} [asc|desc]` over status, configurationId, chainId, chainPosition, startedAt, endedAt, " +
      "createdAt, updatedAt. Default: createdAt desc.",
  }),
  skip,
  take,
  includeTotal,
});

function instant(value: string | undefined, field: string): string | null {
  if (value === undefined || value === "") return null;
  const parsed = parseDateValue(value);
  if (parsed === undefined) {
    const message = `${field}: '${value}' is not an ISO 8601 date-time.`;
    throw new ApiError("InvalidQuery", message, { errors: [{ field: `query.${field}`, rule: "format", message }] });
  }
  return new Date(parsed).toISOString();
}

export async function listJobRows(
  db: Database,
  query: z.infer<typeof JobListQuery>,
): Promise<{ items: JobRow[]; total: number | undefined }> {
  const conditions: Condition[] = [];
  conditions.push(...enumCondition(query.statuses, JOB_STATUSES, "query.statuses", "j.status", "a job status"));
  const configIds = [
    ...parseUuidList(query.configurationIds, "query.configurationIds"),
    ...parseUuidList(query.configurationId, "query.configurationId"),
  ];
  if (configIds.length > 0) conditions.push(inList("j.configuration_id", configIds));
  const chainIds = parseUuidList(query.chainIds, "query.chainIds");
  if (chainIds.length > 0) conditions.push(inList("j.chain_id", chainIds));
  const from = instant(query.createdFrom, "createdFrom");
  if (from) conditions.push((v) => `j.created_at >= ${v.value(from)}`);
  const to = instant(query.createdTo, "createdTo");
  if (to) conditions.push((v) => `j.created_at < ${v.value(to)}`);
  return runListQuery<JobRow>(db, await compileListQuery(jobList, query, noProperties, conditions));
}

const outputList = defineList({
  table: "job_outputs",
  alias: "o",
  entityKind: "jobOutput",
  idColumn: "id",
  fields: {
    jobOutputTypeId: { column: "o.job_output_type_id" },
    createdAt: { column: "o.created_at", type: "datetime" },
  },
  searchColumns: ["o.output"],
  defaultOrder: "createdAt asc",
});

export const JobOutputListQuery = z.object({
  ids,
  excludeIds,
  searchText: searchText.openapi({ description: "Case-insensitive (ASCII) substring of the output's JSON text." }),
  jobOutputTypeIds: z.string().optional().openapi({ description: "Only outputs of these output types (comma-separated ids)." }),
  order: order.openapi({
    description: "Comma-separated `{field} [asc|desc]` over createdAt, jobOutputTypeId. Default: createdAt asc (oldest first).",
  }),
  skip,
  take,
  includeTotal,
});

/** One job's outputs, paged like every list (the job's existence is the caller's check). */
export async function listJobOutputRows(
  db: Database,
  jobId: string,
  query: z.infer<typeof JobOutputListQuery>,
): Promise<{ items: JobOutputRow[]; total: number | undefined }> {
  const conditions: Condition[] = [(v) => `o.job_id = ${v.value(jobId)}`];
  const types = parseUuidList(query.jobOutputTypeIds, "query.jobOutputTypeIds");
  if (types.length > 0) conditions.push(inList("o.job_output_type_id", types));
  return runListQuery<JobOutputRow>(db, await compileListQuery(outputList, query, noProperties, conditions));
}
