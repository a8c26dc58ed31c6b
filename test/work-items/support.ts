/** Helpers of the work item tests: assets written through their owner's statement (the asset API is another area's), POST shortcuts. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { insertAssetStatement } from "../../src/assets/store";
import { call } from "../support/http";

export async function seedAsset(
  kind: "plant" | "mainSystem" | "equipment" | "designObject",
  parent?: { id: string; plantId: string | null },
): Promise<{ id: string; name: string; plantId: string | null }> {
  const id = crypto.randomUUID();
  const name = `${kind} ${id.slice(0, 8)}`;
  const plantId = kind === "plant" ? id : (parent?.plantId ?? null);
  const now = new Date().toISOString();
  await insertAssetStatement(env.DB, {
    id,
    kind,
    name,
    parentId: parent?.id ?? null,
    plantId,
    metadata: null,
    etag: "e",
    createdAt: now,
    updatedAt: now,
  }).run();
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
