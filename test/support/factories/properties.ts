/**
 * Factories for the shared property model. Definitions are created through the API (so they pass the
 * same rules as a client's); classifications, entity types and links are written straight to D1
 * through their owners' statements, so tests of definitions and values do not depend on those
 * resources' own routes.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { insertClassificationStatements } from "../../../src/properties/classifications/store";
import { appendLinksStatement, insertEntityTypeStatements } from "../../../src/properties/entity-types/store";
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
  const rows: Parameters<typeof insertClassificationStatements>[2][number][] = [];
  const add = (items: ElementSpec[], parentId: string | null) =>
    items.forEach((element, position) => {
      const elementId = crypto.randomUUID();
      rows.push({
        id: elementId,
        parentId,
        position,
        name: element.name,
        displayName: null,
        code: null,
        applierCode: null,
        color: null,
        order: null,
        grade: null,
      });
      add(element.children ?? [], elementId);
    });
  add(elements, null);
  const t = now();
  await env.DB.batch(
    insertClassificationStatements(
      env.DB,
      { id, name, format: "valueHierarchy", description: null, etag: "seed", createdAt: t, updatedAt: t, createdBy: null },
      rows,
    ),
  );
  return { id, name };
}

/** Inserts an entity type; `appliesTo` null accepts definitions of every rule. */
export async function createEntityType(options: { name?: string; appliesTo?: string | null } = {}) {
  const id = crypto.randomUUID();
  const name = options.name ?? uniqueName("type");
  const t = now();
  await env.DB.batch(
    insertEntityTypeStatements(
      env.DB,
      {
        id,
        name,
        description: null,
        appliesTo: options.appliesTo ?? null,
        iconName: null,
        iconColor: null,
        isDefault: false,
        metadata: null,
        etag: "seed",
        createdAt: t,
        updatedAt: t,
        createdBy: null,
      },
      [],
    ),
  );
  return { id, name };
}

/** Links definitions to an entity type, in the given order (after any already linked). */
export async function linkToEntityType(entityTypeId: string, definitionIds: readonly string[]): Promise<void> {
  await appendLinksStatement(env.DB, entityTypeId, definitionIds).run();
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
