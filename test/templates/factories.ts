/**
 * Factories for the template tests: templates through the API, and the rows that freeze a revision
 * (a work item based on it, an activity based on it) written with SQL, since the work items API is
 * built elsewhere and these tests only need the rows the revision engine reads.
 */
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

/** Freezes a work template revision: a work item based on it (work_items + work_item_templates rows). */
export async function baseWorkItemOn(templateId: string, revision: number): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO work_items (id, display_name, status, type_id, owner_id, tags, etag, created_at, updated_at) " +
        "VALUES (?1, 'WI', 'new', ?2, 'u1', '[]', 'e', ?3, ?3)",
    ).bind(id, GENERAL, now),
    env.DB.prepare(
      "INSERT INTO work_item_templates (work_item_id, work_template_id, work_template_revision, position, created_at) " +
        "VALUES (?1, ?2, ?3, 0, ?4)",
    ).bind(id, templateId, revision, now),
  ]);
  return id;
}

/** Freezes an activity template revision: an activity based on it. */
export async function baseActivityOn(templateId: string, revision: number): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.prepare(
    "INSERT INTO activities (id, based_on_id, based_on_revision, display_name, status, owner_id, etag, created_at, " +
      "updated_at) VALUES (?1, ?2, ?3, 'A', 'new', 'u1', 'e', ?4, ?4)",
  )
    .bind(id, templateId, revision, now)
    .run();
  return id;
}

/** A work item that used an activity template revision (work_item_activity_templates). */
export async function useActivityTemplateInWorkItem(templateId: string, revision: number): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO work_items (id, display_name, status, type_id, owner_id, tags, etag, created_at, updated_at) " +
        "VALUES (?1, 'WI', 'new', ?2, 'u1', '[]', 'e', ?3, ?3)",
    ).bind(id, GENERAL, now),
    env.DB.prepare(
      "INSERT INTO work_item_activity_templates (work_item_id, activity_template_id, activity_template_revision, " +
        "created_at) VALUES (?1, ?2, ?3, ?4)",
    ).bind(id, templateId, revision, now),
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
