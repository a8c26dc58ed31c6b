/** Steps shared by the monitoring loop's tests (issue 25): monitors on equipment, templates, runs of External models. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../support/http";
import { bearer, definition } from "./support";

export async function asset(
  kind: "plant" | "mainSystem" | "equipment" | "organization",
  parentId?: string,
): Promise<{ id: string; name: string }> {
  const parent = parentId ?? (kind === "plant" || kind === "organization" ? undefined : (await asset("plant")).id);
  const res = await call("/Assets", {
    method: "POST",
    body: { name: `${kind} ${crypto.randomUUID().slice(0, 6)}`, kind, ...(parent ? { parentId: parent } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

/** A work template (latest revision) with one activity. */
export async function workTemplate(): Promise<{ id: string }> {
  const at = await call("/ActivityTemplates", {
    method: "POST",
    body: { displayName: `Measure vibration ${crypto.randomUUID().slice(0, 6)}` },
  });
  expect(at.status, at.text).toBe(201);
  const wt = await call("/WorkTemplates", {
    method: "POST",
    body: {
      displayName: `Pump inspection ${crypto.randomUUID().slice(0, 6)}`,
      tags: ["vibration"],
      activityTemplates: [{ activityTemplateId: at.body.id }],
    },
  });
  expect(wt.status, wt.text).toBe(201);
  return wt.body as { id: string };
}

export interface Watched {
  monitor: {
    id: string;
    monitorId: string;
    name: string;
    controllers: unknown[];
    populations: { id: string; items: { id: string; assetReference: { id: string } }[] }[];
  };
  assets: { id: string; name: string }[];
  itemOf: (assetId: string) => string;
}

/** An Active monitor of an External model over `count` equipment, with the given controllers (and other monitor fields). */
export async function watchedEquipment(
  controllers: unknown[],
  count = 2,
  extra: Record<string, unknown> = {},
  location: "ACR" | "External" = "External",
): Promise<Watched> {
  const def = await definition(location);
  const model = await call("/Models", {
    method: "POST",
    body: {
      name: `pump model ${crypto.randomUUID().slice(0, 6)}`,
      modelDefinitionName: def.name,
      modelDefinitionVersion: def.version,
      cpuCores: 1,
      memory: 1,
    },
  });
  expect(model.status, model.text).toBe(201);
  const population = await call(`/Models/${model.body.id}/Populations`, {
    method: "POST",
    body: { name: "pumps", assetType: "Equipment" },
  });
  expect(population.status, population.text).toBe(201);
  const assets: { id: string; name: string }[] = [];
  for (let i = 0; i < count; i++) {
    const a = await asset("equipment");
    const item = await call(`/Models/${model.body.id}/Populations/${population.body.id}/Items`, {
      method: "POST",
      body: { assetReference: { id: a.id } },
    });
    expect(item.status, item.text).toBe(201);
    assets.push(a);
  }
  const monitor = await call("/Monitors", {
    method: "POST",
    body: { name: `pump watch ${crypto.randomUUID().slice(0, 6)}`, modelId: model.body.id, status: "Active", controllers, ...extra },
  });
  expect(monitor.status, monitor.text).toBe(201);
  const items = (monitor.body as Watched["monitor"]).populations.flatMap((p) => p.items);
  return { monitor: monitor.body, assets, itemOf: (assetId) => items.find((i) => i.assetReference.id === assetId)!.id };
}

/** One run of an External model: started on demand, then Succeeded with `body` (variables, criticality). */
export async function run(monitorId: string, body: Record<string, unknown>, status = "Succeeded") {
  const started = await call(`/MonitorJobs/Execution/${monitorId}`, { method: "POST" });
  expect(started.status, started.text).toBe(201);
  const done = await call(`/MonitorJobs/${started.body.id}/${status}`, { method: "PUT", headers: bearer(started.body.statusToken), body });
  return { job: started.body as { id: string; statusToken: string }, done };
}

export const vibration = (values: Record<string, number>) => ({
  variables: Object.entries(values).map(([assetId, value]) => ({ assetId, name: "vibration", value })),
});

/** Rows of the outbox for an entity kind, oldest first. */
export async function outbox(entityKind: string, where = "1 = 1", ...binds: unknown[]) {
  const { results } = await env.DB.prepare(
    `SELECT id, entity_id, action, payload FROM outbox WHERE entity_kind = ?1 AND ${where} ORDER BY seq`,
  )
    .bind(entityKind, ...binds)
    .all<{ id: string; entity_id: string; action: string; payload: string }>();
  return results.map((r) => ({ ...r, payload: JSON.parse(r.payload) as Record<string, unknown> }));
}

export async function count(sql: string, ...binds: unknown[]): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM (${sql})`)
    .bind(...binds)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** The alarms of a monitor as GET /Alarms shows them (the board's newest-first within a severity). */
export async function alarmsOf(monitorId: string, query = "") {
  const res = await call(`/Alarms?monitorIds=${monitorId}&take=1000${query ? `&${query}` : ""}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { items: Alarm[]; counts: Record<string, unknown> };
}

/** An alarm as the API shows it (loosely: the tests check what they need). */
export interface Alarm {
  id: string;
  status: string;
  active: boolean;
  acknowledged: boolean;
  severity: string;
  controller: string;
  held: boolean;
  deviationId: string | null;
  workItemId: string | null;
  acknowledgement: { at: string; by: { id: string; name: string | null } | null; comment: string | null } | null;
  assignee: { id: string; name: string | null; assignedAt: string } | null;
  shelving: { mode: string; at: string; until: string; by: { id: string; name: string | null }; comment: string | null } | null;
  escalation: { count: number; nextAt: string | null };
  history?: { action: string; by: { id: string; name: string | null } | null; comment: string | null; details: unknown }[];
  [key: string]: unknown;
}

/** A monitor over one pump with `controller`, and the pump's alarm entered by a reading of `value`. */
export async function pumpInAlarm(controller: Record<string, unknown>, value = 9.4, extra: Record<string, unknown> = {}) {
  const watched = await watchedEquipment([{ name: "High vibration", conditions: HIGH, ...controller }], 1, extra);
  const pump = watched.assets[0]!;
  const reading = (v: number) => run(watched.monitor.id, vibration({ [pump.id]: v }));
  const done = await reading(value);
  expect(done.done.status, done.done.text).toBe(200);
  const { items } = await alarmsOf(watched.monitor.id);
  expect(items, "one alarm entered").toHaveLength(1);
  return { ...watched, pump, alarm: items[0]!, reading };
}

export const HIGH = [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7.1 }];
