/**
 * Factories for the template tests: templates through the API, and the rows that freeze a revision
 * (a work item based on it, an activity based on it) written with SQL, since the work items API is
 * built elsewhere and these tests only need the rows the revision engine reads.
 */
import { basedOnStatements, firstUseStatements, insertWorkItemStatement, type WorkItemRow } from "../../src/work-items/store";
import { insertActivitiesStatements, type ActivityRow } from "../../src/work-items/activities/store";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../support/http";

export const unique = (prefix: string) => `${prefix} ${crypto.randomUUID().slice(0, 8)}`;

async function created(path: string, body: unknown) {
  const res = await call(path, { method: "POST", body });
  expect(res.status, `POST ${path}: ${res.text}`).toBe(201);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
  return { ...(res.body as Record<string, any>), etag: res.headers.get("etag")! } as Record<string, any> & { id: string; etag: string };
}

export function createActivityType(overrides: Record<string, unknown> = {}) {
  return created("/ActivityTypes", { name: unique("Inspection"), description: "Visual check", ...overrides });
}

export function inputTemplates(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    name: `input_${i}`,
    displayName: `Input ${i}`,
    format: i % 2 ? "decimal" : "text",
    required: i % 3 === 0,
  }));
}

export function createActivityTemplate(overrides: Record<string, unknown> = {}) {
  return created("/ActivityTemplates", {
    displayName: unique("Check valve"),
    referenceId: unique("AT"),
    templateType: "checklist",
    inputTemplates: inputTemplates(3),
    ...overrides,
  });
}

/** A work template with two sections and three activity templates (one per section, one outside). */
export async function createWorkTemplate(overrides: Record<string, unknown> = {}) {
  const [a, b, c] = await Promise.all([createActivityTemplate(), createActivityTemplate(), createActivityTemplate()]);
  const s1 = crypto.randomUUID();
  const s2 = crypto.randomUUID();
  return created("/WorkTemplates", {
    displayName: unique("Annual pump service"),
    referenceId: unique("WT"),
    tags: ["pump", "annual"],
    sectionTemplates: [
      { id: s1, displayName: "Before", description: "Preparation" },
      { id: s2, displayName: "After", description: null },
    ],
    activityTemplates: [
      { activityTemplateId: a!.id, sectionTemplateId: s1 },
      { activityTemplateId: b!.id, sectionTemplateId: s2 },
      { activityTemplateId: c!.id },
    ],
    ...overrides,
  });
}

const GENERAL = "00000000-0000-4000-8000-000000000001";

/** A bare work item row (no properties, tags or designations). */
function workItemRow(id: string, now: string): WorkItemRow {
  return {
    id,
    display_name: "WI",
    reference_id: null,
    status: "new",
    due_date: null,
    type_id: GENERAL,
    owner_id: "u1",
    owner_name: null,
    tags: "[]",
    metadata: null,
    etag: "e",
    created_at: now,
    updated_at: now,
  };
}

/** Freezes a work template revision: a work item based on it (work_items + work_item_templates rows). */
export async function baseWorkItemOn(templateId: string, revision: number): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.batch([
    insertWorkItemStatement(env.DB, workItemRow(id, now), null),
    ...basedOnStatements(env.DB, id, [{ id: templateId, revision }], 0, now),
  ]);
  return id;
}

/** Freezes an activity template revision: an activity based on it. */
export async function baseActivityOn(templateId: string, revision: number): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  const activity: ActivityRow = {
    id,
    work_item_id: null,
    based_on_id: templateId,
    based_on_revision: revision,
    display_name: "A",
    reference_id: null,
    status: "new",
    date_of_activity: null,
    owner_id: "u1",
    owner_name: null,
    responsible_id: null,
    responsible_name: null,
    activity_type_id: null,
    activity_type_name: null,
    position: 0,
    metadata: null,
    etag: "e",
    created_at: now,
    updated_at: now,
  };
  await env.DB.batch(insertActivitiesStatements(env.DB, [activity], [], null));
  return id;
}

/** A work item that used an activity template revision (work_item_activity_templates). */
export async function useActivityTemplateInWorkItem(templateId: string, revision: number): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.batch([
    insertWorkItemStatement(env.DB, workItemRow(id, now), null),
    ...firstUseStatements(env.DB, id, [{ id: templateId, revision }], now),
  ]);
  return id;
}

/** Every stored row of a work template (all revisions, dependents), for before/after comparisons. */
export async function workTemplateRows(id: string) {
  const [revisions, sections, links] = await env.DB.batch([
    env.DB.prepare("SELECT * FROM work_templates WHERE id = ?1 ORDER BY revision").bind(id),
    env.DB.prepare("SELECT * FROM section_templates WHERE work_template_id = ?1 ORDER BY work_template_revision, id").bind(id),
    env.DB.prepare("SELECT * FROM work_template_activity_templates WHERE work_template_id = ?1 ORDER BY work_template_revision, id").bind(
      id,
    ),
  ]);
  type Row = Record<string, unknown>;
  const at = (rows: Row[], column: string, revision: number) => rows.filter((r) => r[column] === revision);
  return {
    revisions: revisions!.results as Row[],
    sections: sections!.results as Row[],
    links: links!.results as Row[],
    sectionsOf: (revision: number) => at(sections!.results as Row[], "work_template_revision", revision),
    linksOf: (revision: number) => at(links!.results as Row[], "work_template_revision", revision),
  };
}

export async function activityTemplateRows(id: string) {
  const [revisions, inputs] = await env.DB.batch([
    env.DB.prepare("SELECT * FROM activity_templates WHERE id = ?1 ORDER BY revision").bind(id),
    env.DB.prepare("SELECT * FROM input_templates WHERE activity_template_id = ?1 ORDER BY activity_template_revision, id").bind(id),
  ]);
  type Row = Record<string, unknown>;
  return {
    revisions: revisions!.results as Row[],
    inputs: inputs!.results as Row[],
    inputsOf: (revision: number) => (inputs!.results as Row[]).filter((r) => r.activity_template_revision === revision),
  };
}

/** The PUT body of a read: what a client sends back, with changes. */
export function putBody(read: Record<string, unknown>, changes: Record<string, unknown> = {}) {
  const { etag: _etag, ...body } = read;
  return { ...body, ...changes };
}
