/** Shared steps of the monitor tests that live outside monitors.test.ts. */
import { expect } from "vitest";
import { call } from "../support/http";

/** A model definition: ACR (an image the fake host lists) or External. */
export async function definition(location: "ACR" | "External" = "ACR") {
  const version = location === "ACR" ? "1.0" : `ext-${crypto.randomUUID().slice(0, 8)}`;
  const name = location === "ACR" ? "models/criticality" : `external/model-${crypto.randomUUID().slice(0, 8)}`;
  const existing = await call(`/ModelDefinitions/${encodeURIComponent(name)}/versions/${version}`);
  if (existing.status === 200) return existing.body as { name: string; version: string };
  const res = await call("/ModelDefinitions", {
    method: "POST",
    body: { name, version, location, uri: location === "External" ? "https://models.example.com/score" : null },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { name: string; version: string };
}

export async function plant(): Promise<{ id: string; name: string }> {
  const res = await call("/Assets", { method: "POST", body: { name: `plant ${crypto.randomUUID().slice(0, 6)}`, kind: "plant" } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

/** An Active monitor of a new model whose one population holds `plants` new plants. */
export async function monitoredPlants(location: "ACR" | "External", plants = 2) {
  const def = await definition(location);
  const model = await call("/Models", {
    method: "POST",
    body: {
      name: `model ${crypto.randomUUID().slice(0, 6)}`,
      modelDefinitionName: def.name,
      modelDefinitionVersion: def.version,
      cpuCores: 1,
      memory: 1,
    },
  });
  expect(model.status, model.text).toBe(201);
  const population = await call(`/Models/${model.body.id}/Populations`, { method: "POST", body: { name: "plants", assetType: "Plant" } });
  expect(population.status, population.text).toBe(201);
  const assets: { id: string; name: string }[] = [];
  for (let i = 0; i < plants; i++) {
    const asset = await plant();
    const item = await call(`/Models/${model.body.id}/Populations/${population.body.id}/Items`, {
      method: "POST",
      body: { assetReference: { id: asset.id } },
    });
    expect(item.status, item.text).toBe(201);
    assets.push(asset);
  }
  const monitor = await call("/Monitors", {
    method: "POST",
    body: { name: `monitor ${crypto.randomUUID().slice(0, 6)}`, modelId: model.body.id, status: "Active" },
  });
  expect(monitor.status, monitor.text).toBe(201);
  return { monitor: monitor.body as { id: string; monitorId: string; populations: { id: string }[] }, plants: assets };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
