/**
 * Reads of work template and activity template revisions, straight from the template tables (the
 * templates module owns their writes). A read returns the revision's etag with it, so the write that
 * instantiates the content can assert (assertStatement) that the revision still is what was read.
 */
import { readBatch, typedRead, type Database } from "../db/statements";
import { assertStatement } from "../pkg/db";
import type { ActivityTemplateRow as TemplateRow } from "../templates/activity/store";

export interface WorkTemplateRevision {
  id: string;
  revision: number;
  etag: string;
  tags: string[];
  /** Its WorkTemplateActivityTemplates in order: section order is not a concern of instantiation. */
  activityTemplates: { id: string; activityTemplateId: string; position: number }[];
  fileReferences: { id: string; location: string; platformFileId: string | null; url: string | null; name: string | null }[];
}

export interface InputTemplateRow {
  activity_template_id: string;
  activity_template_revision: number;
  id: string;
  name: string;
  display_name: string | null;
  format: string;
  required: number;
  position: number;
  metadata: string | null;
}

/** A revision's row as instantiation reads it: the templates module's row without its write-side columns. */
export type ActivityTemplateRow = Omit<TemplateRow, "created_by" | "in_use">;

export interface ActivityTemplateRevision {
  row: ActivityTemplateRow;
  inputs: InputTemplateRow[];
  /** Whether it was read as the latest revision (then the write also asserts it still is). */
  asLatest: boolean;
}

/**
 * The latest revision of each work template, with its activity templates and file references, read
 * in one batch (one snapshot). Templates that do not exist are absent from the map.
 */
export async function readLatestWorkTemplates(db: Database, ids: readonly string[]): Promise<Map<string, WorkTemplateRevision>> {
  const found = new Map<string, WorkTemplateRevision>();
  if (ids.length === 0) return found;
  const json = JSON.stringify([...new Set(ids)]);
  const [templates, wtats, files] = await db.batch<Record<string, unknown>>([
    db
      .prepare("SELECT id, revision, etag, tags FROM work_templates WHERE is_latest = 1 AND id IN (SELECT value FROM json_each(?1))")
      .bind(json),
    db
      .prepare(
        `SELECT w.work_template_id, w.id, w.activity_template_id, w.position
           FROM work_template_activity_templates w
           JOIN work_templates t ON t.id = w.work_template_id AND t.revision = w.work_template_revision AND t.is_latest = 1
          WHERE t.id IN (SELECT value FROM json_each(?1))
          ORDER BY w.work_template_id, w.position, w.id`,
      )
      .bind(json),
    db
      .prepare(
        `SELECT id, owner_id, location, platform_file_id, url, name FROM file_references
          WHERE owner_kind = 'workTemplate' AND owner_id IN (SELECT value FROM json_each(?1)) ORDER BY created_at, id`,
      )
      .bind(json),
  ]);
  for (const t of (templates?.results ?? []) as { id: string; revision: number; etag: string; tags: string }[]) {
    found.set(t.id, {
      id: t.id,
      revision: t.revision,
      etag: t.etag,
      tags: JSON.parse(t.tags) as string[],
      activityTemplates: [],
      fileReferences: [],
    });
  }
  for (const w of (wtats?.results ?? []) as { work_template_id: string; id: string; activity_template_id: string; position: number }[]) {
    found.get(w.work_template_id)?.activityTemplates.push({ id: w.id, activityTemplateId: w.activity_template_id, position: w.position });
  }
  for (const f of (files?.results ?? []) as {
    id: string;
    owner_id: string;
    location: string;
    platform_file_id: string | null;
    url: string | null;
    name: string | null;
  }[]) {
    found
      .get(f.owner_id)
      ?.fileReferences.push({ id: f.id, location: f.location, platformFileId: f.platform_file_id, url: f.url, name: f.name });
  }
  return found;
}

const ACTIVITY_TEMPLATE_SELECT = `SELECT a.id, a.revision, a.is_latest, a.display_name, a.reference_id, a.status, a.owner_id, a.owner_name,
  a.activity_type_id, ty.name AS activity_type_name, a.template_type, a.description, a.metadata, a.etag, a.created_at, a.updated_at
  FROM activity_templates a LEFT JOIN activity_types ty ON ty.id = a.activity_type_id`;

export type RevisionRequest = { id: string; revision: number | "latest" };

function keyOf(id: string, revision: number): string {
  return `${id}#${revision}`;
}

/**
 * Activity template revisions with their input templates, in one batch: each request names a
 * revision or "latest". The map is keyed by the requested id (one request per id).
 */
export async function readActivityTemplateRevisions(
  db: Database,
  requests: readonly RevisionRequest[],
): Promise<Map<string, ActivityTemplateRevision>> {
  const found = new Map<string, ActivityTemplateRevision>();
  if (requests.length === 0) return found;
  const json = JSON.stringify(requests.map((r) => ({ id: r.id, revision: r.revision === "latest" ? null : r.revision })));
  // A request with a null revision matches the latest one.
  const match = `EXISTS (SELECT 1 FROM json_each(?1) j WHERE json_extract(j.value, '$.id') = a.id
    AND (json_extract(j.value, '$.revision') = a.revision OR (json_extract(j.value, '$.revision') IS NULL AND a.is_latest = 1)))`;
  const [templates, inputs] = await readBatch(db, [
    typedRead<ActivityTemplateRow>(
      db
        .prepare(`${ACTIVITY_TEMPLATE_SELECT} WHERE a.id IN (SELECT json_extract(value, '$.id') FROM json_each(?1)) AND ${match}`)
        .bind(json),
    ),
    typedRead<InputTemplateRow>(
      db
        .prepare(
          `SELECT i.activity_template_id, i.activity_template_revision, i.id, i.name, i.display_name, i.format, i.required,
        i.position, i.metadata
           FROM input_templates i JOIN activity_templates a ON a.id = i.activity_template_id AND a.revision = i.activity_template_revision
          WHERE a.id IN (SELECT json_extract(value, '$.id') FROM json_each(?1)) AND ${match}
          ORDER BY i.position, i.id`,
        )
        .bind(json),
    ),
  ]);
  const byRevision = new Map<string, InputTemplateRow[]>();
  for (const input of inputs) {
    const key = keyOf(input.activity_template_id, input.activity_template_revision);
    byRevision.set(key, [...(byRevision.get(key) ?? []), input]);
  }
  const latestWanted = new Set(requests.filter((r) => r.revision === "latest").map((r) => r.id));
  for (const row of templates) {
    found.set(row.id, { row, inputs: byRevision.get(keyOf(row.id, row.revision)) ?? [], asLatest: latestWanted.has(row.id) });
  }
  return found;
}

/** The activity template revisions a work item used first, by activity template id. */
export async function readUsedRevisions(db: Database, workItemId: string): Promise<Map<string, number>> {
  const { results } = await db
    .prepare("SELECT activity_template_id, activity_template_revision FROM work_item_activity_templates WHERE work_item_id = ?1")
    .bind(workItemId)
    .all<{ activity_template_id: string; activity_template_revision: number }>();
  return new Map(results.map((r) => [r.activity_template_id, r.activity_template_revision]));
}

/** The full activity template revisions a work item used (GET /WorkItems/{id}/ActivityTemplates), in the order first used. */
/**
 * Guards of an instantiating write: each work template revision still has the etag read and is
 * still the latest; each activity template revision still has its etag (and is still the latest
 * when it was read as such). One statement per kind, the revisions in one JSON parameter; when one
 * fails the whole batch rolls back and the caller reads again.
 */
export function templateAssertions(
  db: Database,
  works: readonly WorkTemplateRevision[],
  activities: readonly ActivityTemplateRevision[],
): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  if (works.length > 0) {
    const json = JSON.stringify(works.map((w) => ({ id: w.id, revision: w.revision, etag: w.etag })));
    statements.push(
      assertStatement(
        db,
        `NOT EXISTS (SELECT 1 FROM json_each(?1) j WHERE NOT EXISTS (SELECT 1 FROM work_templates t WHERE t.id =
        json_extract(j.value, '$.id')
           AND t.revision = json_extract(j.value, '$.revision') AND t.etag = json_extract(j.value, '$.etag') AND t.is_latest = 1))`,
        json,
      ),
    );
  }
  if (activities.length > 0) {
    const json = JSON.stringify(
      activities.map((a) => ({ id: a.row.id, revision: a.row.revision, etag: a.row.etag, latest: a.asLatest ? 1 : 0 })),
    );
    statements.push(
      assertStatement(
        db,
        `NOT EXISTS (SELECT 1 FROM json_each(?1) j WHERE NOT EXISTS (SELECT 1 FROM activity_templates t WHERE t.id =
        json_extract(j.value, '$.id')
           AND t.revision = json_extract(j.value, '$.revision') AND t.etag = json_extract(j.value, '$.etag')
           AND (json_extract(j.value, '$.latest') = 0 OR t.is_latest = 1)))`,
        json,
      ),
    );
  }
  return statements;
}

/**
 * The work templates whose latest revision has this display name (case-insensitive), at most two: a
 * spreadsheet names a template by id or by its name (issue 37), and a name two templates share is
 * ambiguous.
 */
export async function latestWorkTemplatesNamed(db: Database, name: string): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT id FROM work_templates WHERE is_latest = 1 AND lower(display_name) = lower(?1) ORDER BY id LIMIT 2")
    .bind(name)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}
