/**
 * Work templates and activity templates written with SQL, so the work item tests do not depend on
 * the templates API (built in parallel). Each helper writes exactly the rows the template tables
 * hold; `copyWorkTemplateRevision` / `copyActivityTemplateRevision` simulate what the templates
 * module does when a used revision is edited: a copy as revision + 1 that becomes the latest.
 */
import { env } from "cloudflare:workers";

const db = env.DB;
const now = () => new Date().toISOString();
const etag = () => crypto.randomUUID().slice(0, 12);
const OWNER = { id: "template-owner", name: "Template Owner" };

export async function seedActivityType(name = `Inspection ${crypto.randomUUID().slice(0, 8)}`): Promise<{ id: string; name: string }> {
  const id = crypto.randomUUID();
  await db
    .prepare("INSERT INTO activity_types (id, name, description, etag, created_at, updated_at) VALUES (?1, ?2, NULL, ?3, ?4, ?4)")
    .bind(id, name, etag(), now())
    .run();
  return { id, name };
}

export interface InputSeed {
  id?: string;
  name?: string;
  displayName?: string | null;
  format?: "text" | "boolean" | "integer" | "decimal" | "date";
  required?: boolean;
}

export interface SeededActivityTemplate {
  id: string;
  revision: number;
  displayName: string;
  referenceId: string | null;
  activityTypeId: string | null;
  inputs: Required<InputSeed>[];
}

export async function seedActivityTemplate(
  seed: { displayName?: string; referenceId?: string | null; activityTypeId?: string | null; inputs?: InputSeed[] } = {},
): Promise<SeededActivityTemplate> {
  const id = crypto.randomUUID();
  const displayName = seed.displayName ?? `Measure ${id.slice(0, 8)}`;
  const referenceId = seed.referenceId === undefined ? `AT-${id.slice(0, 6)}` : seed.referenceId;
  const inputs = (seed.inputs ?? [{ format: "decimal", required: true }, { format: "text" }]).map((input, i) => ({
    id: input.id ?? crypto.randomUUID(),
    name: input.name ?? `input${i}`,
    displayName: input.displayName === undefined ? `Input ${i}` : input.displayName,
    format: input.format ?? "text",
    required: input.required ?? false,
  }));
  const t = now();
  await db.batch([
    db
      .prepare(
        `INSERT INTO activity_templates (id, revision, is_latest, display_name, reference_id, status, owner_id, owner_name,
        activity_type_id, template_type, description, metadata, etag, created_at, updated_at)
         VALUES (?1, 1, 1, ?2, ?3, 'new', ?4, ?5, ?6, 'checklist', 'Seeded', NULL, ?7, ?8, ?8)`,
      )
      .bind(id, displayName, referenceId, OWNER.id, OWNER.name, seed.activityTypeId ?? null, etag(), t),
    ...inputs.map((input, position) =>
      db
        .prepare(
          `INSERT INTO input_templates (activity_template_id, activity_template_revision, id, name, display_name, format,
          required, position, metadata)
           VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, NULL)`,
        )
        .bind(id, input.id, input.name, input.displayName, input.format, input.required ? 1 : 0, position),
    ),
  ]);
  return { id, revision: 1, displayName, referenceId, activityTypeId: seed.activityTypeId ?? null, inputs };
}

export interface SeededWorkTemplate {
  id: string;
  revision: number;
  /** WorkTemplateActivityTemplate ids with the activity template each names, in order. */
  activityTemplates: { id: string; activityTemplateId: string }[];
  fileReferenceIds: string[];
}

export async function seedWorkTemplate(
  seed: {
    activityTemplateIds?: string[];
    tags?: string[];
    fileReferences?: { location: "Platform" | "External"; platformFileId?: string; url?: string; name?: string }[];
  } = {},
): Promise<SeededWorkTemplate> {
  const id = crypto.randomUUID();
  const t = now();
  const wtats = (seed.activityTemplateIds ?? []).map((activityTemplateId) => ({ id: crypto.randomUUID(), activityTemplateId }));
  const files = (seed.fileReferences ?? []).map((f) => ({ ...f, id: crypto.randomUUID() }));
  await db.batch([
    db
      .prepare(
        `INSERT INTO work_templates (id, revision, is_latest, display_name, reference_id, status, type_id, owner_id,
        owner_name, tags, properties, metadata, etag, created_at, updated_at)
         VALUES (?1, 1, 1, ?2, ?3, 'new', '00000000-0000-4000-8000-000000000001', ?4, ?5, ?6, '[]', NULL, ?7, ?8, ?8)`,
      )
      .bind(id, `Annual check ${id.slice(0, 8)}`, `WT-${id.slice(0, 6)}`, OWNER.id, OWNER.name, JSON.stringify(seed.tags ?? []), etag(), t),
    ...(seed.tags ?? []).map((tag) =>
      db.prepare("INSERT OR IGNORE INTO entity_tags (entity_kind, entity_id, tag) VALUES ('workTemplate', ?1, ?2)").bind(id, tag),
    ),
    ...wtats.map((w, position) =>
      db
        .prepare(
          `INSERT INTO work_template_activity_templates (work_template_id, work_template_revision, id, activity_template_id,
          section_template_id, position, metadata)
           VALUES (?1, 1, ?2, ?3, NULL, ?4, NULL)`,
        )
        .bind(id, w.id, w.activityTemplateId, position),
    ),
    ...files.map((f) =>
      db
        .prepare(
          `INSERT INTO file_references (id, owner_kind, owner_id, location, platform_file_id, url, name, inherited_from,
          created_at, created_by)
           VALUES (?1, 'workTemplate', ?2, ?3, ?4, ?5, ?6, NULL, ?7, 'seed')`,
        )
        .bind(f.id, id, f.location, f.platformFileId ?? null, f.url ?? null, f.name ?? null, t),
    ),
  ]);
  return { id, revision: 1, activityTemplates: wtats, fileReferenceIds: files.map((f) => f.id) };
}

/** Copies the latest revision of a work template (and its activity template list) as revision + 1, which becomes the latest. */
export async function copyWorkTemplateRevision(
  id: string,
  change: { addActivityTemplateIds?: string[]; tags?: string[] } = {},
): Promise<number> {
  const latest = await db
    .prepare("SELECT revision FROM work_templates WHERE id = ?1 AND is_latest = 1")
    .bind(id)
    .first<{ revision: number }>();
  const from = latest!.revision;
  const to = from + 1;
  const statements = [
    db.prepare("UPDATE work_templates SET is_latest = 0 WHERE id = ?1 AND revision = ?2").bind(id, from),
    db
      .prepare(
        `INSERT INTO work_templates (id, revision, is_latest, display_name, reference_id, status, type_id, owner_id,
        owner_name, tags, properties, metadata, etag, created_at, updated_at)
         SELECT id, ?3, 1, display_name, reference_id, status, type_id, owner_id, owner_name, coalesce(?4, tags), properties,
         metadata, ?5, created_at, ?6
           FROM work_templates WHERE id = ?1 AND revision = ?2`,
      )
      .bind(id, from, to, change.tags ? JSON.stringify(change.tags) : null, etag(), now()),
    db
      .prepare(
        `INSERT INTO work_template_activity_templates (work_template_id, work_template_revision, id, activity_template_id,
        section_template_id, position, metadata)
         SELECT work_template_id, ?3, id, activity_template_id, section_template_id, position, metadata FROM
         work_template_activity_templates
          WHERE work_template_id = ?1 AND work_template_revision = ?2`,
      )
      .bind(id, from, to),
    ...(change.addActivityTemplateIds ?? []).map((atId, i) =>
      db
        .prepare(
          `INSERT INTO work_template_activity_templates (work_template_id, work_template_revision, id, activity_template_id,
          section_template_id, position, metadata)
           VALUES (?1, ?2, ?3, ?4, NULL, 1000 + ?5, NULL)`,
        )
        .bind(id, to, crypto.randomUUID(), atId, i),
    ),
  ];
  await db.batch(statements);
  return to;
}

/** Copies the latest revision of an activity template (with its inputs) as revision + 1, optionally renamed and with one more input. */
export async function copyActivityTemplateRevision(
  id: string,
  change: { displayName?: string; addInput?: InputSeed } = {},
): Promise<number> {
  const latest = await db
    .prepare("SELECT revision FROM activity_templates WHERE id = ?1 AND is_latest = 1")
    .bind(id)
    .first<{ revision: number }>();
  const from = latest!.revision;
  const to = from + 1;
  const statements = [
    db.prepare("UPDATE activity_templates SET is_latest = 0 WHERE id = ?1 AND revision = ?2").bind(id, from),
    db
      .prepare(
        `INSERT INTO activity_templates (id, revision, is_latest, display_name, reference_id, status, owner_id, owner_name,
        activity_type_id, template_type, description, metadata, etag, created_at, updated_at)
         SELECT id, ?3, 1, coalesce(?4, display_name), reference_id, status, owner_id, owner_name, activity_type_id,
         template_type, description, metadata, ?5, created_at, ?6
           FROM activity_templates WHERE id = ?1 AND revision = ?2`,
      )
      .bind(id, from, to, change.displayName ?? null, etag(), now()),
    db
      .prepare(
        `INSERT INTO input_templates (activity_template_id, activity_template_revision, id, name, display_name, format,
        required, position, metadata)
         SELECT activity_template_id, ?3, id, name, display_name, format, required, position, metadata FROM input_templates
          WHERE activity_template_id = ?1 AND activity_template_revision = ?2`,
      )
      .bind(id, from, to),
  ];
  if (change.addInput) {
    statements.push(
      db
        .prepare(
          `INSERT INTO input_templates (activity_template_id, activity_template_revision, id, name, display_name, format,
          required, position, metadata)
           VALUES (?1, ?2, ?3, ?4, NULL, ?5, 0, 99, NULL)`,
        )
        .bind(id, to, change.addInput.id ?? crypto.randomUUID(), change.addInput.name ?? "added", change.addInput.format ?? "text"),
    );
  }
  await db.batch(statements);
  return to;
}

/** An in-place edit of a revision as the templates module makes it: the content changes and so does the etag. */
export async function editActivityTemplateInPlace(id: string, revision: number, displayName: string): Promise<void> {
  await db
    .prepare("UPDATE activity_templates SET display_name = ?3, etag = ?4 WHERE id = ?1 AND revision = ?2")
    .bind(id, revision, displayName, etag())
    .run();
}

export async function editWorkTemplateInPlace(id: string, revision: number, tags: string[]): Promise<void> {
  await db
    .prepare("UPDATE work_templates SET tags = ?3, etag = ?4 WHERE id = ?1 AND revision = ?2")
    .bind(id, revision, JSON.stringify(tags), etag())
    .run();
}

/** A stored, ready data file (POST /Files writes these) for Platform file references. */
/** A stored file; owned by the default test user unless another owner is given (then it is private to that owner). */
export async function seedReadyFile(ownerId = "00000000-0000-4000-8000-00000000aaaa"): Promise<string> {
  const id = crypto.randomUUID();
  const t = now();
  await db.batch([
    db
      .prepare(
        "INSERT OR IGNORE INTO data_types (id, name, allowed_extensions, etag, created_at, updated_at) VALUES " +
          "('wi-docs', 'Work item documents', '[\"pdf\"]', 'e', ?1, ?1)",
      )
      .bind(t),
    db
      .prepare(
        `INSERT INTO files (id, name, data_type_id, size, content_type, r2_key, state, status, owner_id, etag, created_at, updated_at)
         VALUES (?1, 'manual.pdf', 'wi-docs', 10, 'application/pdf', ?2, 'ready', 'none', ?4, 'e', ?3, ?3)`,
      )
      .bind(id, `files/${id}/x`, t, ownerId),
  ]);
  return id;
}
