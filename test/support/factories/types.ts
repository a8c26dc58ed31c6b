/**
 * Factories for classifications, entity types and user statuses: each builds a valid resource with a
 * unique name through the API (overrides win), so tests never depend on seeded ids or on each other.
 */
import { env } from "cloudflare:workers";
import { insertDefinitionStatement } from "../../../src/properties/definitions/store";
import { replacePropertyValuesStatements } from "../../../src/properties/values/rows";
import { expect } from "vitest";
import { call } from "../http";

export const uniqueName = (prefix: string) => `${prefix} ${crypto.randomUUID().slice(0, 8)}`;

export interface ElementInput {
  name: string;
  displayName?: string | null;
  code?: string | null;
  applierCode?: string | null;
  color?: string | null;
  order?: number | null;
  grade?: number | null;
  children?: ElementInput[];
}

/** A small severity tree: Low, Medium (with Medium-Pitting), High. */
export function severityElements(): ElementInput[] {
  return [
    { name: "Low", color: "#4CAF50", order: 1, grade: 1 },
    { name: "Medium", color: "#FFC107", order: 2, grade: 2.5, children: [{ name: "Medium-Pitting", code: "MP" }] },
    { name: "High", color: "#F44336", order: 3, grade: 5 },
  ];
}

async function created<T>(path: string, body: unknown): Promise<T & { id: string; etag: string }> {
  const res = await call(path, { method: "POST", body });
  expect(res.status, `POST ${path}: ${res.text}`).toBe(201);
  return { ...(res.body as T & { id: string }), etag: res.headers.get("etag")! };
}

export function classificationBody(overrides: Record<string, unknown> = {}) {
  return { name: uniqueName("Severity"), description: "How bad it is.", elements: severityElements(), ...overrides };
}

export function createClassification(overrides: Record<string, unknown> = {}) {
  return created<{ name: string; elements: ElementInput[] }>("/Classifications", classificationBody(overrides));
}

export function entityTypeBody(overrides: Record<string, unknown> = {}) {
  return {
    name: uniqueName("Type"),
    description: null,
    appliesTo: "Deviation",
    icon: { name: "corrosion", color: "#E53935" },
    ...overrides,
  };
}

export function createEntityType(overrides: Record<string, unknown> = {}) {
  return created<{ name: string; appliesTo: string | null; propertyDefinitions: { id: string }[] }>(
    "/EntityTypes",
    entityTypeBody(overrides),
  );
}

export function userStatusBody(overrides: Record<string, unknown> = {}) {
  return { name: uniqueName("Awaiting parts"), status: "onHold", ...overrides };
}

export function createUserStatus(overrides: Record<string, unknown> = {}) {
  return created<{ name: string; status: string; order: number }>("/UserStatuses", userStatusBody(overrides));
}

export interface DefinitionSeed {
  name?: string;
  format?: string;
  applicationRule?: string;
  classificationId?: string | null;
  required?: boolean;
  defaultValue?: unknown;
  metadata?: Record<string, unknown> | null;
}

/**
 * A property definition row written with SQL, so these tests do not depend on the definitions API:
 * they need only the columns entity types and classifications read.
 */
export async function seedPropertyDefinition(seed: DefinitionSeed = {}): Promise<{ id: string; name: string }> {
  const id = crypto.randomUUID();
  const name = seed.name ?? `prop_${crypto.randomUUID().slice(0, 8)}`;
  const now = new Date().toISOString();
  const category = await env.DB.prepare("SELECT id FROM categories WHERE is_default = 1").first<{ id: string }>();
  await insertDefinitionStatement(env.DB, {
    id,
    name,
    format: seed.format ?? (seed.classificationId ? "classification" : "text"),
    applicationRule: seed.applicationRule ?? "Deviation",
    classificationId: seed.classificationId ?? null,
    required: seed.required ?? false,
    defaultValue: seed.defaultValue === undefined ? null : JSON.stringify(seed.defaultValue),
    metadata: seed.metadata ? JSON.stringify(seed.metadata) : null,
    categoryId: category!.id,
    etag: crypto.randomUUID().slice(0, 8),
    createdAt: now,
    updatedAt: now,
  }).run();
  return { id, name };
}

/** A stored value of a classification property on some entity, written with SQL. */
export async function seedClassificationValue(definition: { id: string; name: string }, elementName: string): Promise<void> {
  const entityId = crypto.randomUUID();
  await env.DB.batch(
    replacePropertyValuesStatements(env.DB, "deviation", entityId, [
      {
        entity_kind: "deviation",
        entity_id: entityId,
        name: definition.name,
        position: 0,
        definition_id: definition.id,
        value_text: elementName,
        value_num: null,
        value_json: JSON.stringify(elementName),
      },
    ]),
  );
}

/** The outbox actions recorded for an entity, oldest first. */
export async function outboxActions(entityKind: string, entityId: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT action FROM outbox WHERE entity_kind = ?1 AND entity_id = ?2 ORDER BY seq")
    .bind(entityKind, entityId)
    .all<{ action: string }>();
  return results.map((r) => r.action);
}
