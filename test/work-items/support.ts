/** Helpers of the work item tests: assets written with SQL (the asset API is another module's) and POST shortcuts. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { nameKey } from "../../src/pkg/unicode";
import { call } from "../support/http";

export async function seedAsset(
  kind: "plant" | "mainSystem" | "equipment" | "designObject",
  parent?: { id: string; plantId: string | null },
): Promise<{ id: string; name: string; plantId: string | null }> {
  const id = crypto.randomUUID();
  const name = `${kind} ${id.slice(0, 8)}`;
  const plantId = kind === "plant" ? id : (parent?.plantId ?? null);
  const now = new Date().toISOString();
  await env.DB.prepare(
    "INSERT INTO assets (id, kind, name, name_key, parent_id, plant_id, metadata, etag, created_at, updated_at) " +
      "VALUES (?1, ?2, ?3, ?7, ?4, ?5, NULL, 'e', ?6, ?6)",
  )
    .bind(id, kind, name, parent?.id ?? null, plantId, now, nameKey(name))
    .run();
  return { id, name, plantId };
}

export async function postWorkItem(body: Record<string, unknown> = {}) {
  const res = await call("/WorkItems", { method: "POST", body: { displayName: `Work ${crypto.randomUUID().slice(0, 8)}`, ...body } });
  expect(res.status, res.text).toBe(201);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
  return { ...res.body, etag: res.headers.get("etag")! } as Record<string, any> & { id: string; etag: string };
}

export async function postActivity(body: Record<string, unknown>) {
  const res = await call("/Activities", { method: "POST", body });
  expect(res.status, res.text).toBe(201);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
  return { ...res.body, etag: res.headers.get("etag")! } as Record<string, any> & { id: string; etag: string };
}

/** The body of a read without its ETag, ready to PUT back. */
export function withoutEtag<T extends { etag: string }>(read: T): Omit<T, "etag"> {
  const { etag: _etag, ...rest } = read;
  return rest;
}
