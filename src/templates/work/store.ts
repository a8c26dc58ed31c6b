/**
 * Work templates in D1: reading revisions with their dependents, checking what a write asks for,
 * and creating revision 1. Edits of an existing template are in write.ts (they run in the
 * template's TemplateWriter).
 */
import type { Database } from "../../db/statements";
import { DEFAULT_ENTITY_TYPE_ID } from "../../properties/entity-types/schema";
import { outboxStatements } from "../../events/outbox";
import { assertStatement, newEtagToken, type WriteContext } from "../../pkg/db";
import { ApiError, invalid, notFound, type FieldProblem } from "../../pkg/errors";
import {
  replacePropertyValuesStatements,
  resolveLinkedValues,
  toLinkedProperties,
  toPropertyValueRows,
  type ResolvedProperty,
} from "../../properties/values";
import { checkStatus, normaliseTags, ownerOrCaller, replaceTagsStatements, toPerson } from "../../work/common";
import {
  headerOf,
  insertDependentsStatements,
  insertRevisionStatement,
  isWorkTemplateRevisionInUseSql,
  WORK_TEMPLATE_KIND,
  type SqlValue,
} from "../revisions";
import { dependentIds, metadataText, missingTemplates, parseMetadata, positions, revisionEtag, throwProblems } from "../shared";
import type { SectionTemplateInput, WorkTemplate, WorkTemplateActivityTemplateInput, WorkTemplateInput } from "./schema";

export const ENTITY_KIND = "workTemplate";
export const [SECTIONS, LINKS] = WORK_TEMPLATE_KIND.dependents as [
  (typeof WORK_TEMPLATE_KIND.dependents)[0],
  (typeof WORK_TEMPLATE_KIND.dependents)[0],
];

export interface WorkTemplateRow {
  id: string;
  revision: number;
  is_latest: number;
  display_name: string;
  reference_id: string | null;
  status: string;
  type_id: string;
  owner_id: string;
  owner_name: string | null;
  tags: string;
  properties: string;
  metadata: string | null;
  etag: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  in_use: number;
}

export interface SectionRow {
  [column: string]: SqlValue;
  id: string;
  display_name: string;
  description: string | null;
  position: number;
  metadata: string | null;
}

export interface LinkRow {
  [column: string]: SqlValue;
  id: string;
  activity_template_id: string;
  section_template_id: string | null;
  position: number;
  metadata: string | null;
}

export interface WorkTemplateState {
  row: WorkTemplateRow;
  sections: SectionRow[];
  links: LinkRow[];
}

/** The select list of a revision with its in-use flag, over alias `t`. */
export const ROW_SELECT = `t.id, t.revision, t.is_latest, t.display_name, t.reference_id, t.status, t.type_id, t.owner_id,
  t.owner_name, t.tags, t.properties, t.metadata, t.etag, t.created_at, t.updated_at, t.created_by,
  ${isWorkTemplateRevisionInUseSql("t.id", "t.revision")} AS in_use`;

const byPosition = <T extends { position: number; id: string }>(a: T, b: T) =>
  a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The latest revision (or the given one) with its dependents, read in one batch (one snapshot). */
export async function loadWorkTemplateState(db: Database, id: string, revision?: number): Promise<WorkTemplateState | null> {
  const which = revision === undefined ? "(SELECT revision FROM work_templates WHERE id = ?1 AND is_latest = 1)" : "?2";
  const binds = revision === undefined ? [id] : [id, revision];
  const [rows, sections, links] = await db.batch([
    db.prepare(`SELECT ${ROW_SELECT} FROM work_templates t WHERE t.id = ?1 AND t.revision = ${which}`).bind(...binds),
    db
      .prepare(
        `SELECT id, display_name, description, position, metadata FROM section_templates WHERE work_template_id = ?1 ` +
          `AND work_template_revision = ${which}`,
      )
      .bind(...binds),
    db
      .prepare(
        `SELECT id, activity_template_id, section_template_id, position, metadata FROM work_template_activity_templates ` +
          `WHERE work_template_id = ?1 AND work_template_revision = ${which}`,
      )
      .bind(...binds),
  ]);
  const row = rows?.results[0] as WorkTemplateRow | undefined;
  if (!row) return null;
  return { row, sections: (sections?.results as SectionRow[]).sort(byPosition), links: (links?.results as LinkRow[]).sort(byPosition) };
}

/** The dependents of many revisions (a list page), grouped by `id:revision`. */
export async function loadDependentsOf(
  db: Database,
  rows: readonly Pick<WorkTemplateRow, "id" | "revision">[],
): Promise<Map<string, { sections: SectionRow[]; links: LinkRow[] }>> {
  const grouped = new Map(rows.map((r) => [`${r.id}:${r.revision}`, { sections: [] as SectionRow[], links: [] as LinkRow[] }]));
  if (rows.length === 0) return grouped;
  const keys = JSON.stringify(rows.map((r) => [r.id, r.revision]));
  const pairs = "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1))";
  const [sections, links] = await db.batch<Record<string, SqlValue>>([
    db
      .prepare(
        `SELECT work_template_id AS tid, work_template_revision AS rev, id, display_name, description, position, ` +
          `metadata FROM section_templates WHERE (work_template_id, work_template_revision) IN ${pairs}`,
      )
      .bind(keys),
    db
      .prepare(
        `SELECT work_template_id AS tid, work_template_revision AS rev, id, activity_template_id, section_template_id, ` +
          `position, metadata FROM work_template_activity_templates WHERE (work_template_id, work_template_revision) IN ` +
          `${pairs}`,
      )
      .bind(keys),
  ]);
  for (const row of sections?.results ?? []) grouped.get(`${row.tid}:${row.rev}`)?.sections.push(row as SectionRow);
  for (const row of links?.results ?? []) grouped.get(`${row.tid}:${row.rev}`)?.links.push(row as LinkRow);
  for (const entry of grouped.values()) {
    entry.sections.sort(byPosition);
    entry.links.sort(byPosition);
  }
  return grouped;
}

export function toWorkTemplate(state: WorkTemplateState): { value: WorkTemplate; etag: string } {
  const { row } = state;
  const inUse = row.in_use === 1;
  return {
    value: {
      id: row.id,
      revision: row.revision,
      displayName: row.display_name,
      referenceId: row.reference_id,
      status: row.status,
      objectOwner: toPerson(row.owner_id, row.owner_name) ?? { id: row.owner_id, name: null },
      typeId: row.type_id,
      tags: JSON.parse(row.tags) as string[],
      properties: toLinkedProperties(JSON.parse(row.properties) as ResolvedProperty[]),
      activityTemplates: state.links.map((l) => ({
        id: l.id,
        activityTemplateId: l.activity_template_id,
        sectionTemplateId: l.section_template_id,
        order: l.position,
        metadata: parseMetadata(l.metadata),
      })),
      sectionTemplates: state.sections.map((s) => ({
        id: s.id,
        displayName: s.display_name,
        description: s.description,
        order: s.position,
        metadata: parseMetadata(s.metadata),
      })),
      inUse,
      metadata: parseMetadata(row.metadata),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
    etag: revisionEtag(row.etag, inUse),
  };
}

export async function getWorkTemplate(db: Database, id: string, revision?: number): Promise<{ value: WorkTemplate; etag: string }> {
  const state = await loadWorkTemplateState(db, id.toLowerCase(), revision);
  if (!state)
    throw revision === undefined
      ? notFound("Work template", id)
      : new ApiError("NotFound", `Work template ${id} has no revision ${revision}.`);
  return toWorkTemplate(state);
}

/** Section rows for a list of inputs (ids kept or new, positions). */
export function sectionRows(
  items: readonly SectionTemplateInput[],
  field: (index: number) => string,
  newId: () => string,
): { rows: SectionRow[]; problems: FieldProblem[] } {
  const { ids, problems } = dependentIds(items, (i) => `${field(i)}.id`, newId);
  const order = positions(items);
  const rows = items.map((item, i) => ({
    id: ids[i]!,
    display_name: item.displayName,
    description: item.description,
    position: order[i]!,
    metadata: metadataText(item.metadata),
  }));
  return { rows, problems };
}

/**
 * Link rows (WorkTemplateActivityTemplate) for a list of inputs: each activity template must exist,
 * each section must be one of `sectionIds` (the template's sections after the write).
 */
export async function linkRows(
  db: Database,
  items: readonly WorkTemplateActivityTemplateInput[],
  field: (index: number) => string,
  sectionIds: ReadonlySet<string>,
  newId: () => string,
): Promise<{ rows: LinkRow[]; problems: FieldProblem[] }> {
  const { ids, problems } = dependentIds(items, (i) => `${field(i)}.id`, newId);
  const order = positions(items);
  const missing = await missingTemplates(
    db,
    "activity_templates",
    items.map((item) => item.activityTemplateId.toLowerCase()),
  );
  const rows = items.map((item, i) => {
    const activityTemplateId = item.activityTemplateId.toLowerCase();
    const sectionTemplateId = item.sectionTemplateId?.toLowerCase() ?? null;
    if (missing.has(activityTemplateId))
      problems.push({
        field: `${field(i)}.activityTemplateId`,
        rule: "exists",
        message: `Activity template ${activityTemplateId} does not exist.`,
      });
    if (sectionTemplateId !== null && !sectionIds.has(sectionTemplateId)) {
      problems.push({
        field: `${field(i)}.sectionTemplateId`,
        rule: "exists",
        message: `Section template ${sectionTemplateId} is not a section of this work template.`,
      });
    }
    return {
      id: ids[i]!,
      activity_template_id: activityTemplateId,
      section_template_id: sectionTemplateId,
      position: order[i]!,
      metadata: metadataText(item.metadata),
    };
  });
  return { rows, problems };
}

/**
 * Aborts the batch unless every listed activity template still exists: one deleted after linkRows
 * checked it must not end up listed.
 */
export function activityTemplatesExistStatement(db: Database, rows: readonly LinkRow[]): D1PreparedStatement[] {
  if (rows.length === 0) return [];
  const ids = JSON.stringify([...new Set(rows.map((r) => r.activity_template_id))]);
  return [
    assertStatement(
      db,
      "NOT EXISTS (SELECT 1 FROM json_each(?1) WHERE value NOT IN (SELECT id FROM activity_templates WHERE is_latest = 1))",
      ids,
    ),
  ];
}

/** What the header fields of a create or whole-object update resolve to. */
export interface PreparedHeader {
  status: string;
  typeId: string;
  tags: string[];
  properties: ResolvedProperty[];
}

/** Checks the status, the work type (it must accept WorkTemplate properties) and the properties. */
export async function prepareHeader(
  db: Database,
  input: Pick<WorkTemplateInput, "status" | "typeId" | "tags" | "properties">,
): Promise<PreparedHeader> {
  const status = await checkStatus(db, input.status);
  const typeId = (input.typeId ?? DEFAULT_ENTITY_TYPE_ID).toLowerCase();
  const type = await db.prepare("SELECT applies_to FROM entity_types WHERE id = ?1").bind(typeId).first<{ applies_to: string | null }>();
  if (!type) throw invalid("body.typeId", "exists", `Entity type ${typeId} does not exist.`);
  if (type.applies_to !== null && type.applies_to !== "WorkTemplate") {
    throw invalid(
      "body.typeId",
      "appliesTo",
      `Entity type ${typeId} is for ${type.applies_to} entities; a work type must accept WorkTemplate (or every kind, like General).`,
    );
  }
  const properties = await resolveLinkedValues(db, {
    entityTypeId: typeId,
    applicationRule: "WorkTemplate",
    values: input.properties,
    field: "body.properties",
    entityTypeField: "body.typeId",
  });
  return { status, typeId, tags: normaliseTags(input.tags), properties };
}

/** The statements that keep the latest revision's properties and tags filterable. */
export function latestIndexStatements(
  db: Database,
  id: string,
  tags: readonly string[],
  properties: readonly ResolvedProperty[],
): D1PreparedStatement[] {
  return [
    ...replacePropertyValuesStatements(db, ENTITY_KIND, id, toPropertyValueRows(ENTITY_KIND, id, properties)),
    ...replaceTagsStatements(db, ENTITY_KIND, id, tags),
  ];
}

export async function createWorkTemplate(ctx: WriteContext, input: WorkTemplateInput): Promise<{ value: WorkTemplate; etag: string }> {
  const header = await prepareHeader(ctx.db, input);
  const sections = sectionRows(input.sectionTemplates ?? [], (i) => `body.sectionTemplates.${i}`, ctx.uuid);
  const links = await linkRows(
    ctx.db,
    input.activityTemplates ?? [],
    (i) => `body.activityTemplates.${i}`,
    new Set(sections.rows.map((s) => s.id)),
    ctx.uuid,
  );
  throwProblems([...sections.problems, ...links.problems]);
  const owner = ownerOrCaller(input.objectOwner, ctx.actorId === null ? null : { id: ctx.actorId, name: ctx.actorName ?? "" });
  const id = ctx.uuid();
  const row: WorkTemplateRow = {
    id,
    revision: 1,
    is_latest: 1,
    display_name: input.displayName,
    reference_id: input.referenceId,
    status: header.status,
    type_id: header.typeId,
    owner_id: owner.id,
    owner_name: owner.name,
    tags: JSON.stringify(header.tags),
    properties: JSON.stringify(header.properties),
    metadata: metadataText(input.metadata),
    etag: newEtagToken(),
    created_at: ctx.now,
    updated_at: ctx.now,
    created_by: ctx.actorId,
    in_use: 0,
  };
  const created = toWorkTemplate({ row, sections: sections.rows, links: links.rows });
  await ctx.db.batch([
    insertRevisionStatement(ctx.db, WORK_TEMPLATE_KIND, id, 1, headerOf(WORK_TEMPLATE_KIND, row)),
    ...insertDependentsStatements(ctx.db, SECTIONS, id, 1, sections.rows),
    ...activityTemplatesExistStatement(ctx.db, links.rows),
    ...insertDependentsStatements(ctx.db, LINKS, id, 1, links.rows),
    ...latestIndexStatements(ctx.db, id, header.tags, header.properties),
    ...outboxStatements(ctx.db, ctx, {
      entityKind: ENTITY_KIND,
      entityId: id,
      action: "created",
      payload: created.value,
      etag: created.etag,
    }),
  ]);
  return created;
}
