/**
 * Factories for the shared property model. Definitions are created through the API (so they pass the
 * same rules as a client's); classifications, entity types and links are written with SQL, so tests
 * of definitions and values do not depend on those resources' own routes.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../http";

let sequence = 0;

/** A name no other test in the file uses (property names are identifiers). */
export function uniqueName(prefix = "prop"): string {
  sequence += 1;
  return `${prefix}_${sequence}_${crypto.randomUUID().slice(0, 8)}`;
}

const now = () => new Date().toISOString();

export interface PropertyDefinitionBody {
  name?: string;
  format?: string;
  applicationRule?: string;
  [field: string]: unknown;
}

/** A valid create body: a text property of the Deviation rule unless overridden. */
export function propertyDefinitionBody(overrides: PropertyDefinitionBody = {}): Record<string, unknown> {
  const format = overrides.format ?? "text";
  const base: Record<string, unknown> = { name: uniqueName(), format, applicationRule: "Deviation" };
  if (format === "integer" || format === "decimal") base.unit = "metre";
  if (format === "entity") base.entityType = "identity";
  return { ...base, ...overrides };
}

/** A definition as the API returned it, with its ETag. */
export interface CreatedDefinition {
  id: string;
  name: string;
  etag: string;
  [field: string]: unknown;
}

/** Creates a property definition through POST /PropertyDefinitions and returns the body and ETag. */
export async function createPropertyDefinition(overrides: PropertyDefinitionBody = {}): Promise<CreatedDefinition> {
  const res = await call("/PropertyDefinitions", { method: "POST", body: propertyDefinitionBody(overrides) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...(res.body as { id: string; name: string }), etag: res.headers.get("etag") as string };
}

export interface ElementSpec {
  name: string;
  children?: ElementSpec[];
}

/** Inserts a classification (format valueHierarchy) with a nested element tree; returns its id and name. */
export async function createClassification(
  elements: ElementSpec[] = [{ name: "Low" }, { name: "High" }],
  name = uniqueName("classification"),
) {
  const id = crypto.randomUUID();
  const statements = [
    env.DB.prepare(
      "INSERT INTO classifications (id, name, format, etag, created_at, updated_at) VALUES (?1, ?2, 'valueHierarchy', 'seed', ?3, ?3)",
    ).bind(id, name, now()),
  ];
  const add = (items: ElementSpec[], parentId: string | null) =>
    items.forEach((element, position) => {
      const elementId = crypto.randomUUID();
      statements.push(
        env.DB.prepare(
          "INSERT INTO classification_elements (id, classification_id, parent_id, position, name) VALUES (?1, ?2, ?3, ?4, ?5)",
        ).bind(elementId, id, parentId, position, element.name),
      );
      add(element.children ?? [], elementId);
    });
  add(elements, null);
  await env.DB.batch(statements);
  return { id, name };
}

/** Inserts an entity type; `appliesTo` null accepts definitions of every rule. */
export async function createEntityType(options: { name?: string; appliesTo?: string | null } = {}) {
  const id = crypto.randomUUID();
  const name = options.name ?? uniqueName("type");
  await env.DB.prepare(
    "INSERT INTO entity_types (id, name, applies_to, is_default, etag, created_at, updated_at) VALUES (?1, ?2, ?3, 0, 'seed', ?4, ?4)",
  )
    .bind(id, name, options.appliesTo ?? null, now())
    .run();
  return { id, name };
}

/** Links definitions to an entity type, in the given order (after any already linked). */
export async function linkToEntityType(entityTypeId: string, definitionIds: readonly string[]): Promise<void> {
  const start = await env.DB.prepare("SELECT coalesce(max(position) + 1, 0) AS next FROM entity_type_properties WHERE entity_type_id = ?1")
    .bind(entityTypeId)
    .first<{ next: number }>();
  await env.DB.batch(
    definitionIds.map((definitionId, i) =>
      env.DB.prepare("INSERT INTO entity_type_properties (entity_type_id, property_definition_id, position) VALUES (?1, ?2, ?3)").bind(
        entityTypeId,
        definitionId,
        (start?.next ?? 0) + i,
      ),
    ),
  );
}

/** An entity type with these definitions linked (created through the API from the given bodies). */
export async function entityTypeWith(definitions: PropertyDefinitionBody[], options: { appliesTo?: string | null } = {}) {
  const created: CreatedDefinition[] = [];
  for (const body of definitions) created.push(await createPropertyDefinition(body));
  const type = await createEntityType(options);
  await linkToEntityType(
    type.id,
    created.map((d) => d.id),
  );
  return { entityTypeId: type.id, definitions: created };
}

/** The outbox rows of one entity, oldest first. */
export async function outboxFor(entityId: string) {
  const { results } = await env.DB.prepare("SELECT entity_kind, action, payload FROM outbox WHERE entity_id = ?1 ORDER BY seq")
    .bind(entityId)
    .all<{
      entity_kind: string;
      action: string;
      payload: string;
    }>();
  return results.map((r) => ({ kind: r.entity_kind, action: r.action, payload: JSON.parse(r.payload) as unknown }));
}
