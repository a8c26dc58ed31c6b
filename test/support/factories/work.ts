/**
 * Factories for assets, deviations and work items. Assets and deviations are created through the
 * API (so they pass the same rules as a client's); work items are inserted with SQL because their
 * API is built by another module.
 */
import { insertWorkItemStatement } from "../../../src/work-items/store";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../http";

let sequence = 0;
export function unique(prefix: string): string {
  sequence += 1;
  return `${prefix}-${sequence}-${crypto.randomUUID().slice(0, 8)}`;
}

export interface Created {
  id: string;
  etag: string;
  [field: string]: unknown;
}

async function post(path: string, body: Record<string, unknown>): Promise<Created> {
  const res = await call(path, { method: "POST", body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...(res.body as { id: string }), etag: res.headers.get("etag") as string };
}

export function createAsset(kind: string, parentId: string | null = null, overrides: Record<string, unknown> = {}): Promise<Created> {
  return post("/Assets", { kind, name: unique(kind), parentId, ...overrides });
}

/** A plant with a main system holding one equipment and one design object. */
export async function createPlantTree() {
  const plant = await createAsset("plant");
  const mainSystem = await createAsset("mainSystem", plant.id);
  const equipment = await createAsset("equipment", mainSystem.id);
  const designObject = await createAsset("designObject", mainSystem.id);
  return { plant, mainSystem, equipment, designObject };
}

export function createDeviation(overrides: Record<string, unknown> = {}): Promise<Created> {
  return post("/Deviations", { description: "Corrosion on the flange", ...overrides });
}

export function createDeviationType(overrides: Record<string, unknown> = {}): Promise<Created> {
  return post("/DeviationTypes", { name: unique("type"), icon: { name: "corrosion", color: "#FF8800" }, ...overrides });
}

/** Inserts a work item row directly, through its owner's statement. */
export async function insertWorkItem(overrides: { displayName?: string; status?: string; dueDate?: string | null } = {}) {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  const displayName = overrides.displayName ?? unique("work");
  await insertWorkItemStatement(
    env.DB,
    {
      id,
      display_name: displayName,
      reference_id: `WI-${id.slice(0, 6)}`,
      status: overrides.status ?? "new",
      due_date: overrides.dueDate ?? null,
      type_id: "00000000-0000-4000-8000-000000000001",
      owner_id: "owner-1",
      owner_name: "Olga Owner",
      tags: "[]",
      metadata: null,
      etag: "seed",
      created_at: now,
      updated_at: now,
    },
    null,
  ).run();
  return { id, displayName };
}

export async function workItemEtag(id: string): Promise<string | null> {
  return (await env.DB.prepare("SELECT etag FROM work_items WHERE id = ?1").bind(id).first<{ etag: string }>())?.etag ?? null;
}

/** The outbox rows of one entity, oldest first. */
export async function eventsOf(entityId: string) {
  const { results } = await env.DB.prepare("SELECT entity_kind, action, payload FROM outbox WHERE entity_id = ?1 ORDER BY seq")
    .bind(entityId)
    .all<{
      entity_kind: string;
      action: string;
      payload: string;
    }>();
  return results.map((r) => ({ kind: r.entity_kind, action: r.action, payload: JSON.parse(r.payload) as Record<string, unknown> | null }));
}
