/**
 * Work templates and activity templates written straight to D1 through the templates' own revision
 * engine (src/templates/revisions.ts, the owner of the template tables), so the work item tests do not
 * depend on the templates API. Each helper writes exactly the rows the template tables hold;
 * `copyWorkTemplateRevision` / `copyActivityTemplateRevision` do what the templates module does when a
 * used revision is edited: a copy as revision + 1 that becomes the latest.
 */
import { env } from "cloudflare:workers";
import { insertFileStatement } from "../../../src/upload/files/store";
import { insertDataTypeStatement } from "../../../src/upload/data-types/store";
import { insertFileReferencesStatements, WORK_TEMPLATE_OWNER } from "../../../src/file-references/store";
import { insertActivityTypeStatement } from "../../../src/templates/activity-types/store";
import {
  ACTIVITY_TEMPLATE_KIND,
  copyRevisionStatements,
  headerOf,
  insertDependentsStatements,
  insertRevisionStatement,
  updateRevisionHeaderStatement,
  WORK_TEMPLATE_KIND,
  type DependentTable,
  type SqlValue,
} from "../../../src/templates/revisions";
import { replaceTagsStatements } from "../../../src/work/common";

const db = env.DB;
const now = () => new Date().toISOString();
const etag = () => crypto.randomUUID().slice(0, 12);
const OWNER = { id: "template-owner", name: "Template Owner" };
const INPUTS = ACTIVITY_TEMPLATE_KIND.dependents.find((d) => d.table === "input_templates")!;
const LINKS: DependentTable = WORK_TEMPLATE_KIND.dependents.find((d) => d.table === "work_template_activity_templates")!;

export async function seedActivityType(name = `Inspection ${crypto.randomUUID().slice(0, 8)}`): Promise<{ id: string; name: string }> {
  const id = crypto.randomUUID();
  const t = now();
  await insertActivityTypeStatement(db, { id, name, description: null, etag: etag(), createdAt: t, updatedAt: t, createdBy: null }).run();
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
  const header = {
    display_name: displayName,
    reference_id: referenceId,
    status: "new",
    owner_id: OWNER.id,
    owner_name: OWNER.name,
    activity_type_id: seed.activityTypeId ?? null,
    template_type: "checklist",
    description: "Seeded",
    metadata: null,
    etag: etag(),
    created_at: t,
    updated_at: t,
    created_by: null,
  };
  await db.batch([
    insertRevisionStatement(db, ACTIVITY_TEMPLATE_KIND, id, 1, header),
    ...insertDependentsStatements(
      db,
      INPUTS,
      id,
      1,
      inputs.map((input, position) => ({
        id: input.id,
        name: input.name,
        display_name: input.displayName,
        format: input.format,
        required: input.required ? 1 : 0,
        position,
        metadata: null,
      })),
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
  const header = {
    display_name: `Annual check ${id.slice(0, 8)}`,
    reference_id: `WT-${id.slice(0, 6)}`,
    status: "new",
    type_id: "00000000-0000-4000-8000-000000000001",
    owner_id: OWNER.id,
    owner_name: OWNER.name,
    tags: JSON.stringify(seed.tags ?? []),
    properties: "[]",
    metadata: null,
    etag: etag(),
    created_at: t,
    updated_at: t,
    created_by: null,
  };
  await db.batch([
    insertRevisionStatement(db, WORK_TEMPLATE_KIND, id, 1, header),
    ...replaceTagsStatements(db, "workTemplate", id, seed.tags ?? []),
    ...insertDependentsStatements(
      db,
      LINKS,
      id,
      1,
      wtats.map((w, position) => ({
        id: w.id,
        activity_template_id: w.activityTemplateId,
        section_template_id: null,
        position,
        metadata: null,
      })),
    ),
    ...insertFileReferencesStatements(
      db,
      WORK_TEMPLATE_OWNER,
      id,
      files.map((f) => ({
        id: f.id,
        location: f.location,
        platformFileId: f.platformFileId ?? null,
        url: f.url ?? null,
        name: f.name ?? null,
        inheritedFrom: null,
      })),
      { now: t, actorId: "seed" },
    ),
  ]);
  return { id, revision: 1, activityTemplates: wtats, fileReferenceIds: files.map((f) => f.id) };
}

/** Copies the latest revision of a work template (and its activity template list) as revision + 1, which becomes the latest. */
export async function copyWorkTemplateRevision(
  id: string,
  change: { addActivityTemplateIds?: string[]; tags?: string[] } = {},
): Promise<number> {
  const latest = (await db.prepare("SELECT * FROM work_templates WHERE id = ?1 AND is_latest = 1").bind(id).first())!;
  const from = latest.revision as number;
  const to = from + 1;
  const header: Record<string, SqlValue> = { ...headerOf(WORK_TEMPLATE_KIND, latest), etag: etag(), updated_at: now() };
  if (change.tags) header.tags = JSON.stringify(change.tags);
  const statements = [
    ...copyRevisionStatements(db, WORK_TEMPLATE_KIND, id, from, header),
    ...insertDependentsStatements(
      db,
      LINKS,
      id,
      to,
      (change.addActivityTemplateIds ?? []).map((atId, i) => ({
        id: crypto.randomUUID(),
        activity_template_id: atId,
        section_template_id: null,
        position: 1000 + i,
        metadata: null,
      })),
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
  const latest = (await db.prepare("SELECT * FROM activity_templates WHERE id = ?1 AND is_latest = 1").bind(id).first())!;
  const from = latest.revision as number;
  const to = from + 1;
  const header: Record<string, SqlValue> = { ...headerOf(ACTIVITY_TEMPLATE_KIND, latest), etag: etag(), updated_at: now() };
  if (change.displayName) header.display_name = change.displayName;
  const statements = [
    ...copyRevisionStatements(db, ACTIVITY_TEMPLATE_KIND, id, from, header),
    ...insertDependentsStatements(
      db,
      INPUTS,
      id,
      to,
      change.addInput
        ? [
            {
              id: change.addInput.id ?? crypto.randomUUID(),
              name: change.addInput.name ?? "added",
              display_name: null,
              format: change.addInput.format ?? "text",
              required: 0,
              position: 99,
              metadata: null,
            },
          ]
        : [],
    ),
  ];
  await db.batch(statements);
  return to;
}

/** An in-place edit of a revision as the templates module makes it: the content changes and so does the etag. */
export async function editActivityTemplateInPlace(id: string, revision: number, displayName: string): Promise<void> {
  await updateRevisionHeaderStatement(db, ACTIVITY_TEMPLATE_KIND, id, revision, { display_name: displayName, etag: etag() }).run();
}

export async function editWorkTemplateInPlace(id: string, revision: number, tags: string[]): Promise<void> {
  await updateRevisionHeaderStatement(db, WORK_TEMPLATE_KIND, id, revision, { tags: JSON.stringify(tags), etag: etag() }).run();
}

/** A stored, ready data file (POST /Files writes these) for Platform file references. */
/** A stored file; owned by the default test user unless another owner is given (then it is private to that owner). */
export async function seedReadyFile(ownerId = "00000000-0000-4000-8000-00000000aaaa"): Promise<string> {
  const id = crypto.randomUUID();
  const t = now();
  await db.batch([
    insertDataTypeStatement(
      db,
      { id: "wi-docs", name: "Work item documents", allowedExtensions: '["pdf"]', etag: "e", createdAt: t, updatedAt: t, createdBy: null },
      { orIgnore: true },
    ),
    insertFileStatement(db, {
      id,
      name: "manual.pdf",
      data_type_id: "wi-docs",
      size: 10,
      content_type: "application/pdf",
      checksum: null,
      r2_key: `files/${id}/x`,
      state: "ready",
      status: "none",
      owner_id: ownerId,
      owner_name: null,
      object_type: null,
      object_id: null,
      etag: "e",
      created_at: t,
      updated_at: t,
      created_by: null,
    }),
  ]);
  return id;
}
