/**
 * Pins SQLite's plan for the first page of every list under every filter the lists bench measures
 * (bench/list-matrix.json: each documented filter alone with the default order, and status with
 * owner, with plant, with a date range), so a later change cannot quietly bring back a plan whose
 * time grows with the table (issue 22, docs/decisions.md "List queries").
 *
 * Each case calls the list's own function (what its route calls) on D1 through a wrapper that
 * records the statements, takes the page statement (bound with take 20 and skip 0) and asks D1
 * for its EXPLAIN QUERY PLAN, without statistics, as D1 leaves a database. The page must:
 * - read the list's table through the index the case names (never `SCAN <table>` without one);
 * - not sort: no `USE TEMP B-TREE FOR ... ORDER BY` in the part that answers a first page (the
 *   window of a walk). Cases marked `sorts` are the documented exceptions: a selective filter that
 *   drives and sorts its few rows (one equipment, one work item, a list of ids), and several
 *   values of one filter, whose index SQLite reads value by value in order, stopping each at the
 *   page (the sort keeps the page's rows only);
 * - walk (a two-part statement: a bounded window of the order index, then the rest) where a filter
 *   is checked row by row: plants, tags, date ranges, property terms.
 * Property terms are counted before the page (plan.ts): the test stores 5,000 matching values per
 * kind, so the counts reach their cap and the engine walks, as it does on a large table.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import matrix from "../../bench/list-matrix.json";
import { listConfigRows, ConfigListQuery, JobListQuery, listJobRows } from "../../src/dataprocessing/list";
import { DeviationListQuery, listDeviations } from "../../src/deviations/list";
import { listMedia, MediaListQuery } from "../../src/media/list";
import { listMonitorJobs } from "../../src/monitors/monitor-jobs/store";
import { listModelRows, ModelListQuery } from "../../src/monitors/models/list";
import { listMonitorRows, MonitorListQuery } from "../../src/monitors/monitors/list";
import { ActivityTemplateListQuery, listActivityTemplates } from "../../src/templates/activity/list";
import { listWorkTemplates, WorkTemplateListQuery } from "../../src/templates/work/list";
import { listFiles } from "../../src/upload/files/list";
import { ListFilesQuery } from "../../src/upload/files/schema";
import { ActivityListQuery, listActivities } from "../../src/work-items/activities/list";
import { listWorkItems, WorkItemListQuery } from "../../src/work-items/list";
import { splitCsv } from "../../src/pkg/query";

type Query = Record<string, string>;
const LISTS: Record<string, { alias: string; run: (db: D1Database, query: Query) => Promise<unknown> }> = {
  deviations: { alias: "d", run: (db, q) => listDeviations(db, DeviationListQuery.parse(q)) },
  "work items": { alias: "w", run: (db, q) => listWorkItems(db, WorkItemListQuery.parse(q), new Date()) },
  activities: { alias: "a", run: (db, q) => listActivities(db, ActivityListQuery.parse(q)) },
  "work templates": { alias: "t", run: (db, q) => listWorkTemplates(db, WorkTemplateListQuery.parse(q)) },
  "activity templates": { alias: "a", run: (db, q) => listActivityTemplates(db, ActivityTemplateListQuery.parse(q)) },
  files: { alias: "f", run: (db, q) => listFiles(db, { id: "viewer", name: "Viewer" }, ListFilesQuery.parse(q)) },
  media: { alias: "m", run: (db, q) => listMedia(db, MediaListQuery.parse(q)) },
  jobs: { alias: "j", run: (db, q) => listJobRows(db, JobListQuery.parse(q)) },
  "job configs": { alias: "c", run: (db, q) => listConfigRows(db, ConfigListQuery.parse(q)) },
  models: { alias: "mo", run: (db, q) => listModelRows(db, ModelListQuery.parse(q)) },
  monitors: { alias: "mn", run: (db, q) => listMonitorRows(db, MonitorListQuery.parse(q)) },
  "monitor jobs": { alias: "monitor_jobs", run: (db, q) => listMonitorJobs(db, splitCsv(q.monitorIds)) },
};

/**
 * What each case's page must do: `uses`, a plan step on the list's table (the index that serves
 * the filter and the order); `walk`, the two-part walk; `sorts`, why a sort is allowed.
 */
interface Expectation {
  uses: RegExp;
  walk?: true;
  sorts?: "selective driver" | "several values";
}
const idx = (alias: string, index: string, key = "") =>
  new RegExp(`^(SEARCH|SCAN) ${alias} USING (COVERING )?INDEX ${index}\\b${key ? ` \\(${key.replace(/[()?]/g, "\\$&")}` : ""}`);
const pk = (alias: string, table: string) => new RegExp(`^SEARCH ${alias} USING (COVERING )?INDEX sqlite_autoindex_${table}_1 \\((id=\\?)`);

const EXPECTED: Record<string, Record<string, Expectation>> = {
  deviations: {
    "no filter": { uses: idx("d", "deviations_created_idx") },
    statuses: { uses: idx("d", "deviations_status_idx", "status=?)") },
    "two statuses": { uses: idx("d", "deviations_status_idx", "status=?)"), sorts: "several values" },
    objectOwnerIds: { uses: idx("d", "deviations_owner_idx", "owner_id=?)") },
    typeIds: { uses: idx("d", "deviations_type_idx", "type_id=?)") },
    riskIds: { uses: idx("d", "deviations_risk_idx", "risk_id=?)") },
    plantNames: { uses: idx("d", "deviations_created_idx"), walk: true },
    equipmentIds: { uses: pk("d", "deviations"), sorts: "selective driver" },
    properties: { uses: idx("d", "deviations_created_idx"), walk: true },
    searchText: { uses: idx("d", "deviations_created_idx") },
    ids: { uses: pk("d", "deviations"), sorts: "selective driver" },
    "status + owner": { uses: idx("d", "deviations_owner_status_idx", "owner_id=? AND status=?)") },
    "status + plant": { uses: idx("d", "deviations_status_idx", "status=?"), walk: true },
  },
  "work items": {
    "no filter": { uses: idx("w", "work_items_name_idx") },
    statuses: { uses: idx("w", "work_items_status_idx", "status=?)") },
    objectOwnerIds: { uses: idx("w", "work_items_owner_idx", "owner_id=?)") },
    "dueDate range": { uses: idx("w", "work_items_name_idx"), walk: true },
    dueDates: { uses: idx("w", "work_items_name_idx"), walk: true },
    tags: { uses: idx("w", "work_items_name_idx"), walk: true },
    basedOnIds: { uses: pk("w", "work_items"), sorts: "selective driver" },
    plantNames: { uses: idx("w", "work_items_name_idx"), walk: true },
    equipmentIds: { uses: pk("w", "work_items"), sorts: "selective driver" },
    properties: { uses: idx("w", "work_items_name_idx"), walk: true },
    searchText: { uses: idx("w", "work_items_name_idx") },
    "status + owner": { uses: idx("w", "work_items_owner_status_idx", "owner_id=? AND status=?)") },
    "status + plant": { uses: idx("w", "work_items_status_idx", "status=?"), walk: true },
    "status + dueDate range": { uses: idx("w", "work_items_status_idx", "status=?"), walk: true },
  },
  activities: {
    "no filter": { uses: idx("a", "activities_name_idx") },
    statuses: { uses: idx("a", "activities_status_idx", "status=?)") },
    objectOwnerIds: { uses: idx("a", "activities_owner_idx", "owner_id=?)") },
    responsibleIds: { uses: idx("a", "activities_responsible_idx", "responsible_id=?)") },
    typeIds: { uses: idx("a", "activities_type_idx", "activity_type_id=?)") },
    basedOnIds: { uses: idx("a", "activities_based_on_idx", "based_on_id=?)"), sorts: "selective driver" },
    workItemIds: { uses: idx("a", "activities_work_item_idx", "work_item_id=?)"), sorts: "selective driver" },
    "dateOfActivity range": { uses: idx("a", "activities_name_idx"), walk: true },
    dateOfActivities: { uses: idx("a", "activities_name_idx"), walk: true },
    plantNames: { uses: idx("a", "activities_name_idx"), walk: true },
    equipmentIds: { uses: pk("a", "activities"), sorts: "selective driver" },
    searchText: { uses: idx("a", "activities_name_idx") },
    "status + owner": { uses: idx("a", "activities_owner_status_idx", "owner_id=? AND status=?)") },
    "status + plant": { uses: idx("a", "activities_status_idx", "status=?"), walk: true },
    "status + dateOfActivity range": { uses: idx("a", "activities_status_idx", "status=?"), walk: true },
  },
  "work templates": {
    "no filter": { uses: idx("t", "work_templates_latest_name_idx") },
    statuses: { uses: idx("t", "work_templates_latest_status_idx", "status=?)") },
    objectOwnerIds: { uses: idx("t", "work_templates_latest_owner_idx", "owner_id=?)") },
    tags: { uses: idx("t", "work_templates_latest_name_idx"), walk: true },
    properties: { uses: idx("t", "work_templates_latest_name_idx"), walk: true },
    searchText: { uses: idx("t", "work_templates_latest_name_idx") },
    "status + owner": { uses: idx("t", "work_templates_latest_owner_status_idx", "owner_id=? AND status=?)") },
  },
  "activity templates": {
    "no filter": { uses: idx("a", "activity_templates_latest_name_idx") },
    statuses: { uses: idx("a", "activity_templates_latest_status_idx", "status=?)") },
    objectOwnerIds: { uses: idx("a", "activity_templates_latest_owner_idx", "owner_id=?)") },
    activityTypeIds: { uses: idx("a", "activity_templates_latest_type_idx", "activity_type_id=?)") },
    templateTypes: { uses: idx("a", "activity_templates_latest_template_type_idx", "template_type=?)") },
    workItemIds: {
      uses: /^SEARCH a USING INDEX (activity_templates_latest_uq|sqlite_autoindex_activity_templates_1) \(id=\?/,
      sorts: "selective driver",
    },
    searchText: { uses: idx("a", "activity_templates_latest_name_idx") },
    "status + owner": { uses: idx("a", "activity_templates_latest_owner_status_idx", "owner_id=? AND status=?)") },
  },
  files: {
    "no filter": { uses: idx("f", "files_state_created_idx", "state=?)") },
    statuses: { uses: idx("f", "files_state_status_idx", "state=? AND status=?)") },
    dataTypeIds: { uses: idx("f", "files_data_type_idx", "data_type_id=?)") },
    objectOwnerIds: { uses: idx("f", "files_owner_idx", "owner_id=?)") },
    searchText: { uses: idx("f", "files_state_created_idx", "state=?)") },
    "status + owner": { uses: idx("f", "files_owner_status_idx", "owner_id=? AND status=?)") },
  },
  media: {
    "no filter": { uses: idx("m", "medias_created_idx") },
    types: { uses: idx("m", "medias_type_idx", "declared_type=?)") },
    objectOwnerIds: { uses: idx("m", "medias_owner_idx", "owner_id=?)") },
    "created range": { uses: idx("m", "medias_created_idx", "created_at>? AND created_at<?)") },
    searchText: { uses: idx("m", "medias_created_idx") },
    "type + created range": { uses: idx("m", "medias_type_idx", "declared_type=? AND created_at>? AND created_at<?)") },
  },
  jobs: {
    "no filter": { uses: idx("j", "jobs_created_idx") },
    statuses: { uses: idx("j", "jobs_status_idx", "status=?)") },
    configurationIds: { uses: idx("j", "jobs_config_idx", "configuration_id=?)") },
    chainIds: { uses: idx("j", "jobs_chain_idx", "chain_id=?)"), sorts: "selective driver" },
    "created range": { uses: idx("j", "jobs_created_idx", "created_at>? AND created_at<?)") },
    searchText: { uses: idx("j", "jobs_created_idx") },
    "status + created range": { uses: idx("j", "jobs_status_idx", "status=? AND created_at>? AND created_at<?)") },
  },
  "job configs": {
    "no filter": { uses: idx("c", "job_configurations_name_idx") },
    objectOwnerIds: { uses: idx("c", "job_configurations_owner_idx", "object_owner_id=?)") },
    searchText: { uses: idx("c", "job_configurations_name_idx") },
  },
  models: {
    "no filter": { uses: idx("mo", "models_created_idx") },
    statuses: { uses: idx("mo", "models_status_idx", "status=?)") },
    objectOwnerIds: { uses: idx("mo", "models_owner_idx", "owner_id=?)") },
    modelDefinitionNames: { uses: idx("mo", "models_definition_name_idx", "definition_name=?)") },
    properties: { uses: idx("mo", "models_created_idx"), walk: true },
    searchText: { uses: idx("mo", "models_created_idx") },
    "status + owner": { uses: idx("mo", "models_owner_status_idx", "owner_id=? AND status=?)") },
  },
  monitors: {
    "no filter": { uses: idx("mn", "monitors_created_idx") },
    statuses: { uses: idx("mn", "monitors_status_idx", "status=?)") },
    modelIds: { uses: idx("mn", "monitors_model_idx", "model_ref=?)") },
    objectOwnerIds: { uses: idx("mn", "monitors_owner_idx", "owner_id=?)") },
    searchText: { uses: idx("mn", "monitors_created_idx") },
    "status + owner": { uses: idx("mn", "monitors_owner_status_idx", "owner_id=? AND status=?)") },
  },
  "monitor jobs": {
    "no filter": { uses: idx("monitor_jobs", "monitor_jobs_created_idx") },
    monitorIds: { uses: idx("monitor_jobs", "monitor_jobs_monitor_idx", "monitor_ref=?)") },
  },
};

interface Recorded {
  sql: string;
  params: unknown[];
}

/** env.DB, recording every statement prepared through it, with the parameters it is bound with. */
function recording(db: D1Database): { db: D1Database; statements: Recorded[] } {
  const statements: Recorded[] = [];
  const wrapped = {
    prepare(sql: string) {
      const statement = db.prepare(sql);
      const recorded: Recorded = { sql, params: [] };
      statements.push(recorded);
      const bind = statement.bind.bind(statement);
      statement.bind = (...params: unknown[]) => {
        recorded.params = params;
        return bind(...params);
      };
      return statement;
    },
    batch: db.batch.bind(db),
    exec: db.exec.bind(db),
  } as unknown as D1Database;
  return { db: wrapped, statements };
}

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

async function pageOf(list: string, query: Query): Promise<{ sql: string; plan: PlanRow[] }> {
  const { db, statements } = recording(env.DB);
  const definition = LISTS[list]!;
  const paged = list !== "monitor jobs";
  await definition.run(db, paged ? { ...query, take: String(matrix.take) } : query);
  const page = paged
    ? statements.find((s) => s.params.length === 3 && s.params[1] === matrix.take && s.params[2] === 0)
    : statements.find((s) => s.sql.includes("FROM monitor_jobs"));
  if (!page) throw new Error(`${list}: no page statement among ${statements.map((s) => s.sql.slice(0, 80)).join(" | ")}`);
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${page.sql}`)
    .bind(...page.params)
    .all<PlanRow>();
  return { sql: page.sql, plan: results };
}

/** The rows that answer a first page: a walk's window (the compound's left-most part), or the whole plan. */
function firstPagePart(plan: PlanRow[]): PlanRow[] {
  const leftMost = plan.find((row) => row.detail === "LEFT-MOST SUBQUERY");
  if (!leftMost) return plan;
  const inside = new Set([leftMost.id]);
  for (const row of plan) if (inside.has(row.parent)) inside.add(row.id);
  return plan.filter((row) => inside.has(row.id) && row.id !== leftMost.id);
}

const SORT = /^USE TEMP B-TREE FOR (ORDER BY|RIGHT PART OF ORDER BY|LAST TERM OF ORDER BY)/;

beforeAll(async () => {
  // The bench's property definitions, and 5,000 values at severity 4 per kind: the engine's capped
  // counts of `... ge 4` reach their cap, as on a large table, so it walks.
  const now = new Date().toISOString();
  const kinds = [
    ["deviation", "benchDeviationSeverity", "Deviation"],
    ["workItem", "benchWorkItemSeverity", "WorkItem"],
    ["workTemplate", "benchWorkTemplateSeverity", "WorkTemplate"],
    ["model", "benchModelSeverity", "Model"],
  ] as const;
  await env.DB.batch(
    kinds.flatMap(([kind, name, rule], i) => [
      env.DB.prepare(
        "INSERT INTO property_definitions (id, name, format, application_rule, category_id, etag, created_at, " +
          "updated_at) VALUES (?1, ?2, 'integer', ?3, '00000000-0000-4000-8000-000000000002', 'e', ?4, ?4)",
      ).bind(`0b0c001e-0000-4000-8000-00000000000${i + 1}`, name, rule, now),
      env.DB.prepare(
        `INSERT INTO property_values (entity_kind, entity_id, name, position, definition_id, value_num, value_json)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
         SELECT ?1, printf('plan-%05d', i), ?2, 0, ?3, 4, '4' FROM n`,
      ).bind(kind, name, `0b0c001e-0000-4000-8000-00000000000${i + 1}`),
    ]),
  );
});

describe("the first page of every list in the lists bench is read in order from an index", () => {
  it("names an expectation for every case of bench/list-matrix.json", () => {
    const cases = matrix.lists.flatMap((list) => list.cases.map((c) => `${list.name} / ${c.name}`));
    const expected = Object.entries(EXPECTED).flatMap(([list, byCase]) => Object.keys(byCase).map((name) => `${list} / ${name}`));
    expect(expected.sort()).toEqual(cases.sort());
  });

  const cases = matrix.lists.flatMap((list) => list.cases.map((c) => [list.name, c.name, c.query as Query] as const));
  it.each(cases)("%s / %s", async (list, name, query) => {
    const expectation = EXPECTED[list]?.[name];
    if (!expectation) throw new Error(`no expectation for ${list} / ${name}`);
    const { sql, plan } = await pageOf(list, query);
    const part = firstPagePart(plan);
    const shown = `${sql}\n${plan.map((row) => `${row.id}<${row.parent} ${row.detail}`).join("\n")}`;
    const alias = LISTS[list]!.alias;
    expect(
      part.some((row) => expectation.uses.test(row.detail)),
      shown,
    ).toBe(true);
    // Never a scan of the list's table without an index.
    expect(
      plan.some((row) => new RegExp(`^SCAN ${alias}( |$)(?!USING)`).test(row.detail)),
      shown,
    ).toBe(false);
    expect(
      plan.some((row) => row.detail === "COMPOUND QUERY"),
      shown,
    ).toBe(expectation.walk === true);
    if (!expectation.sorts)
      expect(
        part.filter((row) => SORT.test(row.detail)),
        shown,
      ).toEqual([]);
  });
});
